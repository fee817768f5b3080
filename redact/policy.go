// Package redact masks credentials in a byte stream (SPEC §6): it owns the
// rules for what counts as a secret (secret-looking environment variables,
// explicit values, a built-in catalogue of credential shapes, user regular
// expressions), the marker text "[REDACTED:<kind>]" that replaces each one,
// and a streaming writer whose output does not depend on how its input is
// split into writes.
//
// It knows nothing of processes, files, flags or the environment: the caller
// hands it the environment as "NAME=value" strings, the values read from
// --redact-file and the --redact-pattern expressions, and gets back a Policy
// that sanitizes streams (NewWriter) and short strings (String).
//
// The package is in two layers, as STYLE.md asks: a generic streaming matcher
// (internal/match: keywords, bounded windows, span merging, holdback,
// remembered values; read through the partial-window primitives of
// internal/scan) and the policy, here: where secrets come from (policy.go),
// the catalogue of credential shapes and its detectors (catalogue.go,
// detectors.go, assign.go, carriers.go, shapes.go), markers, minimum
// lengths, encoded variants, which values are remembered (remember.go).
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"unsafe"

	"github.com/capwrap/capwrap/redact/internal/match"
	"github.com/capwrap/capwrap/redact/internal/scan"
)

// Options says where secrets come from (SPEC §6 sources 1 and 3; the built-in
// catalogue, source 2, is always on).
type Options struct {
	// Environ holds "NAME=value" pairs, as os.Environ returns them. The value
	// of every variable whose name looks secret (see SecretName) is masked
	// when it is at least MinEnvValue bytes long. Entries without '=' are
	// ignored.
	Environ []string
	// EnvNames are --redact-env names: their values in Environ are masked
	// whatever the name and however short (an empty value is ignored). A
	// name not present in Environ is ignored.
	EnvNames []string
	// AllowEnv are --redact-allow-env names: variables whose names look
	// secret but whose values are not (PRIVATE_REGISTRY=registry.example.com).
	// Their values are not masked for their names; a name that is also in
	// EnvNames is masked all the same (asking for it wins).
	AllowEnv []string
	// Values are literal secrets, one per --redact-file line as the caller
	// split them; empty strings are ignored, a trailing "\r" is kept.
	Values []string
	// Patterns are --redact-pattern regular expressions (Go RE2 syntax). A
	// pattern is matched within one line (at most 4096 bytes of it).
	Patterns []string
}

// MinEnvValue is the shortest value, in bytes, of a secret-looking
// environment variable that is masked (SPEC §6 source 1); shorter ones ("1",
// "true") would mask too much ordinary text.
const MinEnvValue = 6

// minVariant is the shortest value, in bytes, whose encoded forms (base64,
// URL, JSON, line by line) are masked too.
const minVariant = 6

// secretNameParts are the name fragments of SPEC §6 source 1, and others
// that name secrets as often (GPG_PASSPHRASE, DOCKER_AUTH_CONFIG).
var secretNameParts = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PRIVATE", "CREDENTIAL", "CONNECTION_STRING", "PASSPHRASE", "AUTH_CONFIG"}

// secretNameEnds are the ends of names of secrets: *_KEY (SPEC §6) and the
// short spellings of passwords and tokens (MYSQL_PWD, DB_PASS, LDAP_BIND_PW,
// GITHUB_PAT, BASIC_AUTH, SENTRY_DSN, STRIPE_SK, *_APIKEY, *_CREDS).
var secretNameEnds = []string{"_KEY", "_PWD", "_PASS", "_PW", "_PAT", "_AUTH", "_DSN", "_SK", "APIKEY", "_CREDS"}

// notSecretNameEnds end names that are about a secret rather than one
// (GITHUB_TOKEN_URL, PASSWORD_MIN_LENGTH, SECRET_KEY_FILE).
var notSecretNameEnds = []string{"_URL", "_URI", "_ENDPOINT", "_HOST", "_PORT", "_PATH", "_FILE", "_DIR", "_NAME",
	"_USER", "_USERNAME", "_LENGTH", "_SIZE", "_COUNT", "_TTL", "_TIMEOUT", "_EXPIRY", "_EXPIRES", "_TYPE", "_MODE", "_ENABLED", "_HEADER"}

// SecretName reports whether an environment variable name looks secret
// (case-insensitive): it contains TOKEN, SECRET, PASSWORD, PASSWD, PRIVATE,
// CREDENTIAL, CONNECTION_STRING, PASSPHRASE, AUTH_CONFIG or WEBHOOK, or
// ends in _KEY, _PWD, _PASS, _PW, _PAT, _AUTH, _DSN, _SK, APIKEY or
// _CREDS; but a name that ends in _URL, _FILE, _LENGTH and the like (see
// notSecretNameEnds) is about a secret, not one, unless it names a webhook
// (whose URL is the secret).
func SecretName(name string) bool {
	u := strings.ToUpper(name)
	if strings.Contains(u, "WEBHOOK") {
		return true
	}
	for _, e := range notSecretNameEnds {
		if strings.HasSuffix(u, e) {
			return false
		}
	}
	for _, p := range secretNameParts {
		if strings.Contains(u, p) {
			return true
		}
	}
	for _, e := range secretNameEnds {
		if strings.HasSuffix(u, e) {
			return true
		}
	}
	return false
}

// Policy is a compiled set of redaction rules (SPEC §6). It is immutable and
// safe for concurrent use; each stream gets its own Writer.
type Policy struct {
	m       *match.Matcher
	markers [][]byte // by kind
	// What m was built from (the whole-buffer reference in the tests reads
	// them too).
	kws  []match.Keyword
	line match.Detector
}

// kinds assigns marker kinds their ids in priority order.
type kinds struct {
	names []string
	ids   map[string]int32
}

func (k *kinds) id(name string) int32 {
	if id, ok := k.ids[name]; ok {
		return id
	}
	id := int32(len(k.names))
	k.names = append(k.names, name)
	k.ids[name] = id
	return id
}

// CheckPatterns reports the first of patterns that is not a valid regular
// expression (RE2 syntax) or is empty, in NewPolicy's words. It lets a caller refuse a
// bad --redact-pattern at once and compile the policy itself in the
// background, since NewPolicy fails for no other reason.
func CheckPatterns(patterns []string) error {
	for _, p := range patterns {
		if _, err := compilePattern(p); err != nil {
			return err
		}
	}
	return nil
}

func compilePattern(p string) (*regexp.Regexp, error) {
	if p == "" {
		return nil, fmt.Errorf(`invalid --redact-pattern "": empty pattern`)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("invalid --redact-pattern %q: %v", p, err)
	}
	return re, nil
}

// NewPolicy compiles opt and the built-in catalogue (SPEC §6). The only error
// is an invalid or empty pattern, reported as `invalid --redact-pattern
// "a(": ...`;
// the caller should refuse to start the command then.
//
// Markers: a catalogue match writes "[REDACTED:<catalogue kind>]" (see
// Catalogue), an environment value "[REDACTED:env:NAME]" (the variable's
// name, never its value), a --redact-file value "[REDACTED:value]", a
// pattern "[REDACTED:pattern]", and the dropped rest of an over-long line
// under a pattern "[REDACTED:undecidable]". When secrets overlap or touch,
// one marker covers them all and names the one that starts first (the
// catalogue before literal values at the same byte).
func NewPolicy(opt Options) (*Policy, error) {
	r := &rules{k: kinds{ids: map[string]int32{}}, seen: map[string]bool{}}
	r.builtIn()
	r.environ(opt)
	for _, v := range opt.Values {
		r.value(v, "value")
	}
	for _, p := range opt.Patterns {
		if err := r.pattern(p); err != nil {
			return nil, err
		}
	}
	lineDet := r.lines()
	markers := make([][]byte, len(r.k.names))
	for i, n := range r.k.names {
		markers[i] = []byte("[REDACTED:" + n + "]")
	}
	return &Policy{m: match.New(r.kws, markers, lineDet), markers: markers, kws: r.kws, line: lineDet}, nil
}

// rules is what NewPolicy compiles: the keywords, in priority order, and
// the marker kinds, numbered as they are first named.
type rules struct {
	k       kinds
	kws     []match.Keyword
	seen    map[string]bool  // the literal forms among kws
	lineRes []*regexp.Regexp // the patterns without a literal prefix
}

// builtIn adds the keywords of the built-in catalogue (SPEC §6 source 2).
func (r *rules) builtIn() {
	for _, e := range fullCatalogue() {
		d := e.det(r.k.id)
		for _, w := range e.keywords {
			r.kws = append(r.kws, match.Keyword{Text: []byte(w), Exact: e.exact, Det: d})
		}
	}
}

// value adds the literal secret v and the forms it takes in output (see
// variants) as kind, those not added already: the first source of a
// value names its kind.
func (r *rules) value(v, kind string) {
	if v == "" {
		return
	}
	id := r.k.id(kind)
	for _, f := range variants(v) {
		if f == "" || r.seen[f] {
			continue
		}
		r.seen[f] = true
		r.kws = append(r.kws, match.Keyword{Text: bytesOf(f), Exact: true, Kind: id})
	}
}

// bytesOf returns the bytes of s without copying them: a value's forms
// add up to some 30 times its size (issue 26), and the matcher only reads
// a keyword's text, never writes it (match.Keyword).
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// environ adds the values of opt.Environ's variables whose names look
// secret (SPEC §6 source 1), in the order of the environment, then those
// of opt.EnvNames.
func (r *rules) environ(opt Options) {
	env := map[string]string{}
	var names []string
	for _, kv := range opt.Environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if _, dup := env[name]; !dup {
			names = append(names, name)
		}
		env[name] = val
	}
	allowed := map[string]bool{}
	for _, name := range opt.AllowEnv {
		allowed[name] = true
	}
	for _, name := range names {
		if v := env[name]; SecretName(name) && !allowed[name] && len(v) >= MinEnvValue {
			r.value(v, "env:"+kindName(name))
		}
	}
	for _, name := range opt.EnvNames {
		if v, ok := env[name]; ok {
			r.value(v, "env:"+kindName(name))
		}
	}
}

// pattern adds a --redact-pattern (SPEC §6 source 3): a pattern that is a
// literal is a keyword of its own, one that starts with a literal of two
// bytes or more the keyword of a prefixRegexDet, and any other is run on
// every line (see lines).
func (r *rules) pattern(p string) error {
	re, err := compilePattern(p)
	if err != nil {
		return err
	}
	lit, complete := re.LiteralPrefix()
	switch {
	case complete && lit != "":
		r.kws = append(r.kws, match.Keyword{Text: []byte(lit), Exact: true, Kind: r.k.id("pattern")})
	case len(lit) >= 2:
		anchored := regexp.MustCompile(`\A(?:` + p + `)`)
		d := &prefixRegexDet{kind: r.k.id("pattern"), undecidable: r.k.id("undecidable"), re: anchored}
		r.kws = append(r.kws, match.Keyword{Text: []byte(lit), Exact: true, Det: d})
	default:
		r.lineRes = append(r.lineRes, re)
	}
	return nil
}

// lines adds the detector of the patterns run on every line, whose keyword
// is the newline, and returns it; nil when there are none.
func (r *rules) lines() match.Detector {
	if len(r.lineRes) == 0 {
		return nil
	}
	d := &lineRegexDet{kind: r.k.id("pattern"), undecidable: r.k.id("undecidable"), res: r.lineRes}
	r.kws = append(r.kws, match.Keyword{Text: []byte("\n"), Exact: true, Det: d})
	return d
}

// kindName keeps a variable name printable inside a marker.
func kindName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return r
		}
		return '_'
	}, name)
}

// variants returns v and, when v is at least minVariant bytes long, the
// forms it commonly takes in output: base64 (standard and URL alphabets,
// padded and not, and the part that is stable whatever bytes precede it in a
// larger encoded blob; of the value and of the value and a newline, as
// `echo "$V" | base64` encodes it; and each line of it wrapped at 64 and 76
// columns, as openssl, GNU base64 and Python's encodebytes print it),
// percent-encoding (URL query and path escaping, everything but the
// unreserved bytes with %20 for a space, the same keeping "/", each with
// upper- and lower-case hex), JSON string escaping (also with "\/" for "/",
// and twice, for JSON in a JSON string), and for a multi-line
// value each line, the value with CRLF line ends, and the value with every
// run of white space collapsed to one space (what `echo $VAR` prints); and
// the forms of other encoders (moreForms: encodeURIComponent, hex, the
// JSON escapings of Python, PHP and Gson).
func variants(v string) []string {
	if len(v) < minVariant {
		return []string{v}
	}
	out := make([]string, 0, 40+len(v)/16)
	out = append(out, v)
	vb := []byte(v)
	std := encode(base64.StdEncoding, 0, vb, "")
	for _, full := range []string{std, encode(base64.StdEncoding, 0, vb, "\n")} {
		if full != std {
			out = append(out, full)
		}
		for _, width := range []int{64, 76} {
			out = append(out, wrapped(full, width)...)
		}
	}
	for _, f := range []string{url.QueryEscape(v), url.PathEscape(v), percent(v, ""), percent(v, "/")} {
		out = append(out, f, lowerHex(f))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		full := std
		if enc != base64.StdEncoding {
			full = encode(enc, 0, vb, "")
		}
		out = append(out, full, strings.TrimRight(full, "="))
		for k := 0; k < 3; k++ {
			e := full
			if k > 0 {
				e = encode(enc, k, vb, "")
			}
			lo := (8*k + 5) / 6
			hi := 8 * (k + len(v)) / 6
			out = append(out, e[lo:hi])
		}
	}
	if plainJSON(v) {
		// What the JSON forms below come to, without building them.
		out = append(out, v, strings.ReplaceAll(v, "/", `\/`), v, v)
	} else {
		if j, err := json.Marshal(v); err == nil {
			inner := string(j[1 : len(j)-1])
			// Also with "/" escaped as PHP's json_encode writes it, and
			// escaped twice, as JSON inside a JSON string holds it.
			out = append(out, inner, strings.ReplaceAll(inner, "/", `\/`))
			if j2, err := json.Marshal(inner); err == nil {
				out = append(out, string(j2[1:len(j2)-1]))
			}
		}
		var jb bytes.Buffer
		je := json.NewEncoder(&jb)
		je.SetEscapeHTML(false)
		if je.Encode(v) == nil {
			s := strings.TrimSpace(jb.String())
			out = append(out, s[1:len(s)-1])
		}
	}
	out = append(out, moreForms(v)...)
	if strings.ContainsAny(v, "\r\n") {
		for _, line := range strings.Split(v, "\n") {
			line = strings.TrimRight(line, "\r")
			if t := strings.TrimSpace(line); len(t) >= minVariant {
				out = append(out, t)
			}
		}
		out = append(out, strings.ReplaceAll(strings.ReplaceAll(v, "\r\n", "\n"), "\n", "\r\n"))
	}
	if f := strings.Join(strings.Fields(v), " "); f != v && len(f) >= minVariant {
		out = append(out, f)
	}
	return out
}

// encode returns the base64 encoding by enc of k zero bytes, v and tail,
// built without a copy of them.
func encode(enc *base64.Encoding, k int, v []byte, tail string) string {
	if n := k + len(v) + len(tail); n <= 1024 {
		// Short: a copy costs less than an encoder (and its 1 KiB buffer).
		var in [1024]byte
		copy(in[k+copy(in[k:], v):], tail)
		return enc.EncodeToString(in[:n])
	}
	var b strings.Builder
	b.Grow(enc.EncodedLen(k + len(v) + len(tail)))
	w := base64.NewEncoder(enc, &b)
	w.Write(make([]byte, k))
	w.Write(v)
	w.Write([]byte(tail))
	w.Close()
	return b.String()
}

// plainJSON reports whether v is its own JSON string escaping (printable
// ASCII but for '"', '\\' and the bytes json.Marshal escapes for HTML), so
// that its JSON forms need not be built.
func plainJSON(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// wrapped returns the lines of enc, a base64 text, wrapped at width
// columns, as separate forms when enc is longer than one line: each full
// line, and the last one (which may be short) together with the line
// before it, so that a short last line is not a form of its own.
func wrapped(enc string, width int) []string {
	if len(enc) <= width {
		return nil
	}
	lines := make([]string, 0, len(enc)/width+3)
	for i := 0; i < len(enc); i += width {
		lines = append(lines, enc[i:min(i+width, len(enc))])
	}
	out := lines[:len(lines)-1]
	last := lines[len(lines)-2] + "\n" + lines[len(lines)-1]
	return append(out, last, strings.ReplaceAll(last, "\n", "\r\n"))
}

// percent escapes every byte of v but the unreserved ones (RFC 3986:
// letters, digits, - . _ ~) and those of keep, as %XX with upper-case hex
// (what encodeURIComponent and Python's quote print).
func percent(v, keep string) string {
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(v)+len(v)/8)
	for i := 0; i < len(v); i++ {
		c := v[i]
		if unreserved[c] || strings.IndexByte(keep, c) >= 0 {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

// unreserved holds the bytes percent leaves as they are (RFC 3986).
var unreserved = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", byte(c)) >= 0
	}
	return t
}()

// lowerHex turns the hex digits of every %XX of s to lower case.
func lowerHex(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = scan.Lower(b[i+1]), scan.Lower(b[i+2])
		}
	}
	return string(b)
}

// Holdback returns the most bytes a Writer of this policy ever holds back
// undecided, whatever the input and however it is split: 4096 bytes for the
// built-in catalogue (the largest window, a JWT's), 4097 when a
// --redact-pattern is set (a 4096-byte line and the byte after it). A
// literal form (a value or one of its encodings, see Options) longer than
// match.MaxLiteral (4096) bytes is found by its first 4096 bytes and the
// rest is dropped as it arrives (issue 26), so it holds no more. Secrets
// running past their window are dropped as they arrive, which holds
// nothing.
func (p *Policy) Holdback() int { return p.m.Holdback() }

// NewWriter returns a Writer that writes the sanitized stream to dst (SPEC
// §6). The caller must Close it at end of stream to release what it holds;
// Close does not close dst. The secrets it finds are masked again at their
// later occurrences in this stream only; see NewSharedWriter.
func (p *Policy) NewWriter(dst io.Writer) *Writer {
	return p.NewSharedWriter(dst, nil)
}

// NewSharedWriter is NewWriter for one of the streams of a run: the values
// of the secrets each Writer sharing mem finds are masked in all of them
// from then on (stdout and stderr of one command). A nil mem shares
// nothing.
func (p *Policy) NewSharedWriter(dst io.Writer, mem *Memory) *Writer {
	w := &Writer{}
	w.w = match.NewWriter(p.m, dst, learnable, mem.shared(), &w.seen)
	return w
}

// String sanitizes s at once with the same rules as a Writer (used for the
// receipt's command label, SPEC §7).
func (p *Policy) String(s string) string {
	var b strings.Builder
	w := p.NewWriter(&b)
	io.WriteString(w, s)
	w.Close()
	return b.String()
}

// Label sanitizes a command's argv for the receipt's command label (SPEC
// §6: the label carries the same sanitized bytes as the files) and returns
// a new slice. Each argument is sanitized alone, as the value of the one
// before it when that one is an option without "=" (joined by "=", so that
// "--password hunter22" is masked like "--password=hunter22"), and within
// the whole command line (the arguments joined by spaces; a run found there
// masks only the argument it starts in), so that a command's password options are known for
// what they are (mysql -pVALUE, curl -u user:VALUE, sshpass -p VALUE) and
// "Bearer TOKEN" in two arguments is masked like one. Every byte of an
// argument that one of these masks is masked, each run of them written as
// the marker of the first. Then every run of SeenFragment or more bytes
// shared with one of seen (the secrets the output revealed, see
// Writer.Seen) is masked too: a command may print a credential in pieces. A
// nil Policy (redaction off) returns argv's strings unchanged.
func (p *Policy) Label(argv []string, seen [][]byte) []string {
	label := make([]string, len(argv))
	if p == nil {
		copy(label, argv)
		return label
	}
	// Where each argument sits in the command line.
	line := strings.Join(argv, " ")
	lineRuns := p.runs(line)
	at := 0
	for i, a := range argv {
		cover := make([]int32, len(a)) // kind+1 of the run that masks each byte, 0: none
		mark := func(runs []run, off int) {
			for _, r := range runs {
				if off > 0 && int(r.s) < off {
					continue // a run of the whole line that starts in an earlier argument ends there
				}
				for k := max(int(r.s)-off, 0); k < min(int(r.e)-off, len(a)); k++ {
					if cover[k] == 0 {
						cover[k] = r.kind + 1
					}
				}
			}
		}
		mark(lineRuns, at) // first: the most context names the kind
		mark(p.runs(a), 0)
		if i > 0 && strings.HasPrefix(argv[i-1], "-") && !strings.Contains(argv[i-1], "=") && !flagShaped(a) {
			// The value of an option given as two arguments (--password X);
			// not the argument after a whole KEY=VALUE one, nor an option
			// (a flag is never a value: --password --no-verify).
			prefix := argv[i-1] + "="
			mark(p.runs(prefix+a), len(prefix))
		}
		at += len(a) + 1
		var b strings.Builder
		for k := 0; k < len(a); {
			if cover[k] == 0 {
				b.WriteByte(a[k])
				k++
				continue
			}
			b.Write(p.markers[cover[k]-1])
			for k < len(a) && cover[k] != 0 {
				k++
			}
		}
		label[i] = MaskSeen(b.String(), seen)
	}
	return label
}

// runs returns the input bytes of s that a Writer replaces by markers (each
// merged run, with the kind its marker names).
func (p *Policy) runs(s string) []run {
	var rec runRecorder
	w := match.NewWriter(p.m, io.Discard, learnable, nil, &rec)
	io.WriteString(w, s)
	w.Close()
	return rec.runs
}

// run is the input bytes [s, e) of a run that a marker of kind replaces.
type run struct {
	s, e int64
	kind int32
}

// runRecorder is the match.Observer that keeps every run.
type runRecorder struct{ runs []run }

func (r *runRecorder) Start(at int64, kind int32) {
	r.runs = append(r.runs, run{s: at, e: at, kind: kind})
}
func (r *runRecorder) Dropped([]byte) {}
func (r *runRecorder) End(at int64)   { r.runs[len(r.runs)-1].e = at }
