package redact

import (
	"bytes"
	"sync"

	"github.com/capwrap/capwrap/redact/internal/match"
	"github.com/capwrap/capwrap/redact/internal/scan"
)

// Assignments (SPEC §6 "password=/secret:-style assignments"): a value given
// to a secret-looking key. The key word is found anywhere (it may sit inside
// a longer name: clientSecretKey, db_password, x-api-key), the name around it
// is read, then a separator and the value, which is masked only when it is a
// literal that looks like a secret: the right-hand side of code (a call, a
// member, a type, another variable) stays as it is.
//
// What is read, in order:
//   - the key: the keyword, then the rest of its name. A letter right after
//     the keyword must start a camelCase part (secretKey), be one of a few
//     glued words (apikey, secretkey, tokenvalue), or the keyword is part of a
//     longer word (tokenizer, passwords: no match). A name whose last word
//     says it is about a secret rather than one (token_url, password_file,
//     PASSWORD_MIN_LENGTH, secretName) is no key;
//   - a closing quote of the key, at any depth of escaping (", \", \\\",
//     \u0022, &quot;);
//   - a separator: = : := => and their escapes \u003d \u003a %3D %3A; not
//     == =~ or :: (comparisons, scopes). Or, for an XML element, ">" and a
//     closing tag with the same name; or, after "--key" or "-key", a blank
//     (command-line flags);
//   - the value: quoted (the same escapes; b"..." and r"..." too), bare, on
//     the next line (YAML), or, when the key is followed by an object ({) or
//     by nothing (a name: "name": "DB_PASSWORD", "value": "..."), the value of
//     the first "value" key within assignLookMax bytes.
//
// Which values count is decided by literalSecret.

type assignDet struct {
	kind     int32
	minLen   int           // shortest value masked outside a strong context, in bytes
	lenient  bool          // password-like: a literal of any shape counts, not only a random-looking one
	word     bool          // the keyword must begin a word or a part of a compound name (pass, pwd, auth): not bypass, compass
	whole    bool          // nothing may follow the keyword in the name (pass, sig)
	valueSet *scan.ByteSet // if set, the value must be exactly valueLen bytes of this set
	valueLen int
	notAfter *wordSet // words that, just before the keyword, make the key no credential's (nextToken)
	// randomOnly: the value must look random in every context (see
	// keyRandom), as for the generic "key" names (keyname.go).
	randomOnly bool
}

const (
	assignNameMax  = 32
	assignBlankMax = 16
	assignValueMax = 256
	// assignLookMax bounds how far after a key its value may be looked for
	// (on the next line, or as the "value" key of the object that follows).
	assignLookMax = 384
)

// assignBack is how far before its keyword an assignment looks: at the
// start of the key's name (nextToken, AWS::SecretsManager::Secret).
const assignBack = 24

func (d *assignDet) Back() int { return assignBack }

func (d *assignDet) Window(kw int) int {
	return kw + assignNameMax + scan.LexMax + assignBlankMax + scan.LexMax + assignBlankMax + assignLookMax + 2*scan.LexMax + assignValueMax + 2*assignBlankMax
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// sepAt reads a separator at w[i] and returns its length and '=' or ':'.
func sepAt(w []byte, i int) (int, byte, scan.Lex) {
	if i == len(w) {
		return 0, 0, scan.More
	}
	next := func(k int) (byte, bool) {
		if i+k < len(w) {
			return w[i+k], true
		}
		return 0, false
	}
	switch w[i] {
	case '=':
		c, ok := next(1)
		if !ok {
			return 0, 0, scan.More
		}
		switch c {
		case '=':
			return 0, 0, scan.No // a comparison
		case '>':
			return 2, '=', scan.Yes
		case '~':
			c2, ok := next(2)
			if !ok {
				return 0, 0, scan.More
			}
			if c2 == ' ' || c2 == '\t' || c2 == '/' {
				return 0, 0, scan.No // a regular expression match
			}
		}
		return 1, '=', scan.Yes
	case ':':
		c, ok := next(1)
		if !ok {
			return 0, 0, scan.More
		}
		switch c {
		case ':':
			return 0, 0, scan.No // a scope: Token::Kind
		case '=':
			return 2, ':', scan.Yes
		}
		return 1, ':', scan.Yes
	case '\\':
		for _, s := range []string{`\u003d`, `\u003a`} {
			switch scan.HasAt(w, i, s, true) {
			case scan.Yes:
				if s[5] == 'd' {
					return len(s), '=', scan.Yes
				}
				return len(s), ':', scan.Yes
			case scan.More:
				return 0, 0, scan.More
			}
		}
	case '%':
		for _, s := range []string{"%3d", "%3a"} {
			switch scan.HasAt(w, i, s, true) {
			case scan.Yes:
				if s[2] == 'd' {
					return 3, '=', scan.Yes
				}
				return 3, ':', scan.Yes
			case scan.More:
				return 0, 0, scan.More
			}
		}
	}
	return 0, 0, scan.No
}

// gluedWords may follow a keyword directly, in any case: apikey, secretkey,
// tokenvalue, PASSWORDHASH is not one of them.
var gluedWords = []string{"key", "value", "val", "id", "data"}

// nonSecretWords end names that are about a secret rather than one.
func nonSecretWords() map[string]bool {
	return map[string]bool{
		"url": true, "uri": true, "urls": true, "endpoint": true, "host": true, "hostname": true, "port": true,
		"path": true, "file": true, "filename": true, "dir": true, "directory": true, "name": true, "names": true,
		"length": true, "len": true, "size": true, "count": true, "min": true, "max": true, "limit": true,
		"ttl": true, "timeout": true, "expiry": true, "expires": true, "expiration": true, "expire": true, "lifetime": true, "age": true,
		"type": true, "types": true, "kind": true, "mode": true, "enabled": true, "enable": true, "disabled": true, "required": true,
		"header": true, "field": true, "policy": true, "prompt": true, "hint": true, "label": true, "format": true,
		"regex": true, "pattern": true, "rule": true, "rules": true, "index": true, "idx": true, "pos": true,
		"ref": true, "reference": true, "version": true, "algorithm": true, "alg": true, "reset": true,
		"scope": true, "scopes": true, "audience": true, "issuer": true, "location": true, "source": true,
		"provider": true, "manager": true, "service": true, "store": true, "sock": true, "socket": true,
		"changed": true, "updated": true, "created": true, "time": true, "date": true, "timestamp": true, "last": true, "at": true, "env": true, "var": true,
		"method": true, "methods": true, "class": true, "prefix": true, "suffix": true, "id_": true,
		// How a password is stored or checked: password_encryption, jmxremote.password.toHashes.
		"encryption": true, "hashes": true, "hashing": true, "algorithms": true, "algo": true, "cipher": true,
		"ciphers": true, "strength": true, "complexity": true, "authentication": true,
		// States and events: TokenExpired, auth_failures, PasswordMismatch (issue 27).
		"fail": true, "failed": true, "failure": true, "failures": true, "fails": true, "error": true, "errors": true,
		"err": true, "expired": true, "invalid": true, "missing": true, "mismatch": true, "denied": true,
		"success": true, "succeeded": true, "ok": true, "found": true, "status": true, "state": true, "reason": true,
		"result": true, "attempts": true, "retries": true, "verified": true, "valid": true, "revoked": true,
	}
}

// nonSecretWordSet, dottedConfigWordSet and nonSecretPrefixSet are the sets
// lastWordIn looks the words above up in. Like this package's other word
// tables, they are built at first use, by a run whose output reaches a
// detector, not in every capwrap's init (issue 28).
var (
	nonSecretWordSet    = sync.OnceValue(func() *wordSet { return newWordSet(nonSecretWords()) })
	dottedConfigWordSet = sync.OnceValue(func() *wordSet { return newWordSet(dottedConfigWords()) })
	nonSecretPrefixSet  = sync.OnceValue(func() *wordSet { return newWordSet(nonSecretPrefix()) })
)

// dottedConfigWords end dotted property names that name a configuration,
// not a credential: java.security.auth.login.config (AUTH_CONFIG, with no
// dot, is Docker's credentials).
func dottedConfigWords() map[string]bool {
	return map[string]bool{
		"config": true, "conf": true, "configuration": true, "properties": true, "module": true, "modules": true,
	}
}

// nonSecretPrefix are words that, right before "token" or "secret", name
// something that is no credential: pagination and idempotency tokens,
// tokenizer and parser tokens.
func nonSecretPrefix() map[string]bool {
	return map[string]bool{
		"next": true, "page": true, "continuation": true, "change": true, "request": true, "idempotency": true,
		"action": true, "pagination": true, "cancel": true, "cancellation": true, "sync": true, "marker": true,
		"cursor": true, "resume": true, "output": true, "input": true, "eos": true, "bos": true, "pad": true,
		"unk": true, "sep": true, "cls": true, "mask": true, "special": true, "start": true, "end": true,
		"stop": true, "word": true, "sub": true, "char": true, "last": true, "first": true, "current": true,
		"cur": true, "prev": true, "peek": true, "lookahead": true, "max": true, "num": true, "total": true,
		"prompt": true, "completion": true, "lexer": true, "parser": true, "syntax": true, "bad": true,
		"unexpected": true, "expected": true, "invalid": true, "new": true, "cached": true,
		"client": true, "starting": true, "registration": true, "update": true, "purchase": true, "unit": true,
		"lifecycle": true, "continue": true, "resumption": true, "lock": true,
	}
}

// lastWord returns the last word of a name, lower-cased: its last camelCase
// part, or what follows its last _ - or . ("token_url" → "url",
// "passwordMinLength" → "length", "TOKEN_URL" → "url").
func lastWord(name []byte) string {
	return string(bytes.ToLower(lastWordSpan(name)))
}

// lastWordSpan is lastWord's bytes, in their case.
func lastWordSpan(name []byte) []byte {
	for len(name) > 0 && (name[len(name)-1] == '_' || name[len(name)-1] == '-' || name[len(name)-1] == '.') {
		name = name[:len(name)-1]
	}
	e := len(name)
	for e > 0 && isDigit(name[e-1]) {
		e--
	}
	s := e
	switch {
	case s > 0 && isLower(name[s-1]):
		for s > 0 && isLower(name[s-1]) {
			s--
		}
		if s > 0 && isUpper(name[s-1]) {
			s--
		}
	case s > 0 && isUpper(name[s-1]):
		for s > 0 && isUpper(name[s-1]) {
			s--
		}
	}
	return name[s:e]
}

// lastWordIn reports whether the last word of name (see lastWord) is in s,
// without allocating.
func lastWordIn(s *wordSet, name []byte) bool {
	w := lastWordSpan(name)
	if len(w) > wordMax {
		return false
	}
	if len(w) == 0 {
		return s.m[""]
	}
	if s.first[len(w)]&wordBit(scan.Lower(w[0])) == 0 || s.last[len(w)]&wordBit(scan.Lower(w[len(w)-1])) == 0 {
		return false // no word of s has this length, first and last byte (test, refresh, rotation)
	}
	var buf [wordMax]byte
	for k, c := range w {
		buf[k] = scan.Lower(c)
	}
	return s.m[string(buf[:len(w)])]
}

// wordMax is the longest word lastWordIn looks up, in bytes.
const wordMax = 24

// wordSet is a set of lower-case words, with a filter in front of its map:
// for each length, the first and the last bytes its words have. Most of the
// last words of names a log's keywords sit in (test_token_refresh,
// test_secret_rotation) are no word of the set, and the filter turns them
// away without hashing them: on BenchmarkWriterNoSecrets's keyword-dense
// log the map lookups were 3% of the redactor's time.
type wordSet struct {
	m           map[string]bool
	first, last [wordMax + 1]uint32 // by length: wordBit of the words' first and last bytes
}

// wordBit is a byte's bit in wordSet's filter: one per lower-case letter,
// one shared by all other bytes.
func wordBit(c byte) uint32 {
	if isLower(c) {
		return 1 << (c - 'a')
	}
	return 1 << 31
}

func newWordSet(m map[string]bool) *wordSet {
	s := &wordSet{m: m}
	for w, in := range m {
		if in && len(w) > 0 && len(w) <= wordMax {
			s.first[len(w)] |= wordBit(w[0])
			s.last[len(w)] |= wordBit(w[len(w)-1])
		}
	}
	return s
}

// extension reports whether the rest of a name after its keyword ends in
// what looks like a file name's extension: ".py", ".go", ".txt" (grep
// output: "test_pwd.py:17:").
func extension(rest []byte) bool {
	k := bytes.LastIndexByte(rest, '.')
	if k < 0 || len(rest)-k-1 == 0 || len(rest)-k-1 > 4 {
		return false
	}
	for _, c := range rest[k+1:] {
		if !isLower(c) && !isDigit(c) {
			return false
		}
	}
	return true
}

// jsonEscape holds the bytes after a backslash that end a bare value: a
// JSON or string escape (\" \n \u0026 \/), which means the value was inside
// a quoted string and its end has come.
var jsonEscape = scan.NewSet(`"'nrtubf/\`)

// assignKey is what an assignment has read of its key: where the name
// starts around the keyword, whether it is a command-line flag, and the
// quote and blanks that follow the name.
type assignKey struct {
	p      byte // the byte just before the keyword, 0 at the start
	ns     int  // the start of the name in pre
	dashes int  // the leading dashes of a command-line flag (--password), else 0
	env    bool // the name has no lower-case letter: an environment variable's
	quote  int  // the length of the quote that closes the name, 0: none
	blank  bool // blanks follow the name (and its quote)
}

// Eval reads the key: the bytes before the keyword (pre), then the rest of
// its name (nameEnd), then what follows the name (afterName). The bytes
// before the keyword are read here rather than in a step of their own: most
// candidates end there (a path, the keyword inside a word, a token that is
// no credential), and a call that returns to Eval would cost each of them
// the spill of every argument, 1.5% more instructions for the whole
// redactor on a keyword-dense log; the later steps are reached in tail
// position.
func (d *assignDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	var p byte
	if len(pre) > 0 {
		p = pre[len(pre)-1]
	}
	if p == '/' || p == '\\' {
		return false, 0 // a path: /etc/passwd
	}
	if d.word && setAlnum[p] && !((isLower(p) || isDigit(p)) && isUpper(w[0])) {
		return false, 0 // inside a word: bypass, compass, author
	}
	// The start of the name, before the keyword.
	ns := len(pre)
	for ns > 0 && setName[pre[ns-1]] {
		ns--
	}
	head := pre[ns:]
	// A command-line flag: the name starts with dashes after a blank (or
	// the start): --password, --db-password, -srcstorepass.
	dashes := 0
	for dashes < len(head) && head[dashes] == '-' {
		dashes++
	}
	if dashes > 0 && ns > 0 && !setBlank[pre[ns-1]] && pre[ns-1] != '"' && pre[ns-1] != '\'' && pre[ns-1] != '\n' && pre[ns-1] != '\r' {
		dashes = 0 // a flag begins the line, or follows a blank or a quote: --password at column 0 of any line (issue 27)
	}
	if d.whole && len(head) == 0 && bytes.HasPrefix(w, []byte("PASS")) {
		return false, 0 // a test's result, not a key: Go's "--- PASS: TestX/sub (0.01s)", automake's "PASS: t1"
	}
	if ns >= 3 && string(pre[ns-3:ns]) == "://" || ns >= 5 && string(pre[ns-5:ns]) == `:\/\/` {
		return false, 0 // a URL's user (https://x-access-token:TOKEN@host): urlPassDet masks its password, up to the "@"
	}
	if ns >= 2 && string(pre[ns-2:ns]) == "::" || d.notAfter != nil && lastWordIn(d.notAfter, head) {
		return false, 0 // a scope (AWS::SecretsManager::Secret), a token that is not a credential (nextToken, pad_token)
	}
	j, st := d.nameEnd(w, kw)
	switch st {
	case scan.More:
		return scan.Wait(final, j)
	case scan.No:
		return false, 0
	}
	if dashes > 0 && flagSwitch(head, w[:j]) {
		return false, 0 // a switch, not a password's flag: --disabled-password, --password-stdin (issue 27)
	}
	return d.afterName(w, pre, kw, j, assignKey{p: p, ns: ns, dashes: dashes}, final, sink)
}

// nameEnd reads the rest of the key's name from the end of the keyword,
// w[kw:]: a camelCase part (secretKey), a glued word (apikey, tokenvalue),
// more of a compound name (db_password_hash). It returns Yes and the end of
// the name; No when the keyword is part of a longer word (tokenizer) or the
// name is about a secret rather than one (token_url, pwd.py); More, and the
// offset to wait from, when w ends first.
func (d *assignDet) nameEnd(w []byte, kw int) (int, scan.Lex) {
	i := kw
	if i == len(w) {
		return i, scan.More
	}
	upperKw := isUpper(w[kw-1])
	if c := w[i]; setLetter[c] {
		switch {
		case d.whole:
			return 0, scan.No
		case isUpper(c) && !upperKw: // a camelCase part: secretKey, apiTokenValue
			if d.word {
				// A short key word glued to a word that is no credential's:
				// AuthFail, SessionClosed (see credentialParts).
				ok, st := camelPartOK(w, i)
				if st == scan.More {
					return i, scan.More
				}
				if !ok {
					return 0, scan.No
				}
			}
		default:
			n, st := gluedWord(w, i)
			if st == scan.More {
				return i, scan.More
			}
			if n == 0 {
				return 0, scan.No // a longer word: tokenizer, passwords
			}
		}
	} else if d.whole && setName[c] {
		if isDigit(c) {
			return 0, scan.No
		}
		if i+1 == len(w) {
			return i, scan.More
		}
		if setAlnum[w[i+1]] {
			return 0, scan.No // db_pass_file, pass.txt
		}
	}
	j := scan.Skip(w, i, setName, assignNameMax+1)
	if j-kw > assignNameMax {
		return 0, scan.No
	}
	if j == len(w) {
		return j, scan.More
	}
	if j > kw && (lastWordIn(nonSecretWordSet(), w[:j]) || extension(w[kw:j])) {
		return 0, scan.No // token_url, PASSWORD_MIN_LENGTH, secretName, pwd.py
	}
	if j > kw && bytes.IndexByte(w[kw:j], '.') >= 0 && lastWordIn(dottedConfigWordSet(), w[:j]) {
		return 0, scan.No // -Djava.security.auth.login.config=FILE
	}
	return j, scan.Yes
}

// afterName reads what follows the key's name, which ends at w[j]: the
// quote that may close the name and blanks, then an XML element's ">" or
// a separator, and goes on to the value (noSeparator, separated).
func (d *assignDet) afterName(w, pre []byte, kw, j int, k assignKey, final bool, sink match.SpanSink) (bool, int) {
	name := w[:j]
	k.env = !hasLower(pre[k.ns:]) && !hasLower(name)
	if k.p == ':' && w[j] == ':' {
		return false, 0 // a field of an ARN or URN: arn:aws:secretsmanager:*:*:secret:name
	}
	kq, st := scan.QuoteAt(w, j)
	if st == scan.More {
		return scan.Wait(final, j)
	}
	k.quote = kq.N
	i := scan.Skip(w, j+kq.N, setBlank, assignBlankMax)
	if i == len(w) {
		return scan.Wait(final, i)
	}
	k.blank = i > j+kq.N
	c := valueCtx{kw: w[:kw]}

	if kq.N == 0 && !k.blank && w[i] == '>' {
		return d.xmlElement(w, i+1, name, final, sink)
	}
	n, sep, st := sepAt(w, i)
	switch {
	case st == scan.More && (w[i] == '=' || w[i] == ':'):
		return scan.Wait(final, i+1) // no value starts at its separator: "PASSWORD=" is shown at once
	case st == scan.More:
		return scan.Wait(final, i)
	case n == 0:
		return d.noSeparator(w, pre, i, &k, c, final, sink)
	}
	return d.separated(w, i+n, sep, &k, c, final, sink)
}

// noSeparator reads on from w[i] after a key that no separator follows:
// the value of a command-line flag (--password VALUE), of a key named as a
// value ("name": "DB_PASSWORD", "value": "...") or of SQL's PASSWORD
// 'VALUE'. Anything else after a key is no assignment.
func (d *assignDet) noSeparator(w, pre []byte, i int, k *assignKey, c valueCtx, final bool, sink match.SpanSink) (bool, int) {
	switch {
	case k.dashes > 0 && k.quote == 0 && k.blank:
		// A command-line flag: --password VALUE, -storepass VALUE; in
		// prose ("the --password option") it is followed by words. A
		// flag is never its value (issue 27): --password --no-verify.
		switch flagAt(w, i) {
		case scan.More:
			return scan.Wait(final, i)
		case scan.Yes:
			return false, 0
		}
		c.strong, c.prose, c.wordy = true, true, true
		return d.value(w, i, c, final, sink)
	case k.dashes > 0 && k.quote > 0 && w[i] == ',':
		// An argument list: ["--password", "VALUE"] (issue 27).
		return d.listValue(w, i+1, c, final, sink)
	case k.dashes > 0 && (w[i] == '\n' || w[i] == '\r') && yamlItem(pre[:k.ns]):
		// A YAML list of arguments: "- --password" then "- VALUE".
		return d.nextItem(w, i, c, final, sink)
	case namedValue(pre[:k.ns]):
		// A key named as a value: "name": "DB_PASSWORD", "value": "...".
		return d.lookValue(w, i, c, final, sink)
	case d.lenient && k.blank && k.quote == 0 && w[i] == '\'':
		// SQL: PASSWORD 'VALUE', IDENTIFIED BY 'VALUE'.
		c.sql = true
		return d.value(w, i, c, final, sink)
	}
	return false, 0
}

// separated reads on from w[i], just after the key's separator sep ('=' or
// ':'): how strong the context is (NAME=value in an environment), and where
// the value is: on the line after "key:", in the object after "key: {", in
// a Go-printed map, or right here.
func (d *assignDet) separated(w []byte, i int, sep byte, k *assignKey, c valueCtx, final bool, sink match.SpanSink) (bool, int) {
	j := scan.Skip(w, i, setBlank, assignBlankMax)
	if j == len(w) {
		return scan.Wait(final, j)
	}
	afterBlank := j > i
	if k.dashes > 0 && sep == '=' && afterBlank {
		return false, 0 // an empty flag value: "--password= --next"
	}
	i = j
	c.tight = sep == '=' && !k.blank && !afterBlank && k.quote == 0
	c.strong = c.tight && (k.env || k.p == '?' || k.p == '&' || k.p == ';' || k.dashes > 0)
	c.prose = sep == ':' && afterBlank
	c.query = k.p == '?' || k.p == '&' || !afterBlank && i >= 3 && w[i-3] == '%' // after ?, & or a %3D separator
	switch w[i] {
	case '\n', '\r', '|', '>':
		if sep == ':' {
			return d.nextLine(w, i, c, final, sink)
		}
		if w[i] != '|' && w[i] != '>' {
			return false, 0
		}
	case '{':
		switch bracedAt(w, i, final) {
		case scan.More:
			return scan.Wait(final, i)
		case scan.Yes:
			return d.value(w, i, c, final, sink) // Jenkins: secret: {AQAAABAAAAAQ...}
		}
		return d.lookValue(w, i+1, c, final, sink)
	case '[':
		if sep == ':' && !afterBlank {
			i++ // a Go-printed map: map[password:[VALUE]]
		}
	}
	return d.value(w, i, c, final, sink)
}

func hasLower(b []byte) bool {
	for _, c := range b {
		if isLower(c) {
			return true
		}
	}
	return false
}

// namedValue reports whether pre, the bytes before a key's name, end with
// the key of a field that names a variable or parameter (name: , "name":
// ", Name=, key=", ParameterKey=): the value comes in a "value" field next.
func namedValue(pre []byte) bool {
	i := len(pre)
	for i > 0 && (pre[i-1] == '"' || pre[i-1] == '\'' || pre[i-1] == '\\') {
		i--
	}
	for i > 0 && setBlank[pre[i-1]] {
		i--
	}
	if i == 0 || pre[i-1] != ':' && pre[i-1] != '=' {
		return false
	}
	i--
	for i > 0 && (pre[i-1] == '"' || pre[i-1] == '\'' || pre[i-1] == '\\' || setBlank[pre[i-1]]) {
		i--
	}
	switch lastWord(pre[:i]) {
	case "name", "key":
		return true
	}
	return false
}

// gluedWord returns the length of a word of gluedWords at w[i] (any case)
// that is not followed by another lower-case letter.
func gluedWord(w []byte, i int) (int, scan.Lex) {
	for _, g := range gluedWords {
		switch scan.HasAt(w, i, g, true) {
		case scan.More:
			return 0, scan.More
		case scan.Yes:
			e := i + len(g)
			if e == len(w) {
				return 0, scan.More
			}
			if !isLower(w[e]) || isUpper(w[i]) {
				return len(g), scan.Yes
			}
		}
	}
	return 0, scan.Yes
}

// lastByteKw runs a detector whose keywords end with one byte that is not
// part of the key word itself ("pass=" for "pass"): the detector sees the
// keyword without it.
type lastByteKw struct{ d *assignDet }

func (l *lastByteKw) Window(kw int) int { return l.d.Window(kw - 1) }
func (l *lastByteKw) Back() int         { return l.d.Back() }
func (l *lastByteKw) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	return l.d.Eval(w, pre, kw-1, final, sink)
}

// valueCtx is what the key and separator tell about the value.
type valueCtx struct {
	kw     []byte // the keyword as written
	strong bool   // a context where any literal is a value (NAME=value in an environment, --flag, a URL query, XML)
	prose  bool   // after ": ", a bare value followed by another word is prose
	wordy  bool   // a lower-case word is no value ("the --password option")
	query  bool   // in a URL query: "&" ends a bare value (see valueEnd)
	tight  bool   // key=value with no blank or quote around the "=" (password=V), as shells, env files and URLs write it
	sql    bool   // no separator: PASSWORD 'V', as often prose ("the password 'reset' flow", "pass 'yes' as the value")
	arg    bool   // the bare value is followed by "," or ")": an argument of code (f(password=pw)), a name
}

// value reads the value at w[i] (quoted or bare) and masks it if it is a
// secret.
func (d *assignDet) value(w []byte, i int, c valueCtx, final bool, sink match.SpanSink) (bool, int) {
	if i == len(w) {
		return scan.Wait(final, i)
	}
	q, st := scan.QuoteAt(w, i)
	if st == scan.More {
		return scan.Wait(final, i)
	}
	if q.N == 0 {
		// A Python string prefix: b"...", r'...', rb"...".
		k := i
		for k < len(w) && k-i < 2 && bytes.IndexByte([]byte("bBrRuU"), w[k]) >= 0 {
			k++
		}
		if k > i {
			if k == len(w) {
				return scan.Wait(final, i)
			}
			if w[k] == '"' || w[k] == '\'' {
				q = scan.Quote{N: k - i + 1, Q: w[k]}
			}
		}
	}
	if q.N > 0 {
		return d.quoted(w, i+q.N, q, c, final, sink)
	}
	if w[i] == '=' && i+1 < len(w) && setToken[w[i+1]] && w[i+1] != '=' {
		i++ // "password: =V": V is the value, the "=" stays (and is not remembered with it)
	}
	vs := i
	cut := false // w ends where its next byte decides whether the value goes on
	for i < len(w) && i-vs <= assignValueMax {
		b := w[i]
		if b == '\\' || isQuote(b) && i > vs {
			if i+1 == len(w) {
				cut = !final
				break
			}
			if b == '\\' && jsonEscape[w[i+1]] || b != '\\' && !quoteInValue(w[i+1]) {
				break
			}
		} else if !setToken[b] {
			break
		}
		i++
	}
	whole := !cut && i < len(w) || final
	if e := valueEnd(w[vs:i], c.query, whole && i-vs <= assignValueMax); vs+e < i {
		c.arg = w[vs+e] == ',' || w[vs+e] == ')'
		i, whole = vs+e, true
	}
	if i-vs > assignValueMax {
		set := setToken
		if c.query {
			set = setQueryValue
		}
		sink.Add(vs, i, d.kind, match.Extender{Mode: match.ExtSet, Set: set, Max: extendMax})
		return false, 0
	}
	if !whole {
		return true, vs
	}
	ve := i
	if c.prose && i < len(w) && setBlank[w[i]] && word(w[vs:i]) {
		j := scan.Skip(w, i, setBlank, 8)
		if j == len(w) && !final {
			return true, vs
		}
		if j < len(w) && setLetter[w[j]] {
			return false, 0 // passwd: all authentication tokens updated
		}
	}
	if c.wordy && letters(w[vs:ve]) && !hasUpper(w[vs:ve]) {
		c.strong = false
	}
	if d.secret(w[vs:ve], false, c) {
		sink.Add(vs, ve, d.kind, match.Extender{})
	}
	return false, 0
}

func hasUpper(b []byte) bool {
	for _, c := range b {
		if isUpper(c) {
			return true
		}
	}
	return false
}

// quoted reads a quoted value starting at w[vs], after the opening quote q,
// and masks it if it is a secret.
func (d *assignDet) quoted(w []byte, vs int, q scan.Quote, c valueCtx, final bool, sink match.SpanSink) (bool, int) {
	if vs+1 < len(w) && w[vs] == '=' && w[vs+1] != '=' && w[vs+1] != q.Q && w[vs+1] != '\\' && w[vs+1] != '\n' {
		vs++ // "password": "=V": V is masked and remembered, the "=" stays (see value)
	}
	i := vs
	ve := -1
	cut := false // w ends inside a lexeme that may close the value
	for i < len(w) && w[i] != '\n' && i-vs <= assignValueMax {
		b := w[i]
		if q.Named != "" {
			if b == q.Named[0] {
				st := scan.HasAt(w, i, q.Named, true)
				if st == scan.More {
					cut = true
					break
				}
				if st == scan.Yes {
					ve = i
					break
				}
			}
			i++
			continue
		}
		if b == '\\' && q.Esc == 0 && q.Q != '\'' {
			if i+1 < len(w) && w[i+1] != '\n' {
				i += 2
				continue
			}
			if i+1 == len(w) {
				cut = true
				break
			}
		}
		if b == q.Q {
			run := 0
			for run < i-vs && w[i-1-run] == '\\' {
				run++
			}
			if q.Esc == 0 || run <= q.Esc {
				ve = i - min(run, q.Esc)
				break
			}
		}
		i++
	}
	if ve < 0 && i-vs > assignValueMax {
		set := newQuoteSet(q.Q)
		sink.Add(vs, i, d.kind, match.Extender{Mode: match.ExtSet, Set: set, Max: extendMax})
		return false, 0
	}
	if ve < 0 {
		if !final && (i == len(w) || cut) {
			return true, vs
		}
		// No closing quote on the line: the quote closed a string the key
		// was in ('Password: ' + x), or the value is cut.
		return false, 0
	}
	if d.secret(w[vs:ve], true, c) {
		sink.Add(vs, ve, d.kind, match.Extender{})
	}
	return false, 0
}

var quoteSets = sync.OnceValue(func() map[byte]*scan.ByteSet {
	return map[byte]*scan.ByteSet{
		'"':  scan.NewSet("\"\n").Not(),
		'\'': scan.NewSet("'\n").Not(),
		'`':  scan.NewSet("`\n").Not(),
	}
})

func newQuoteSet(q byte) *scan.ByteSet { return quoteSets()[q] }

// xmlElement reads <key>VALUE</...key> from w[i], just after the ">".
func (d *assignDet) xmlElement(w []byte, i int, name []byte, final bool, sink match.SpanSink) (bool, int) {
	switch scan.HasAt(w, i, "<![CDATA[", false) {
	case scan.More:
		return scan.Wait(final, i)
	case scan.Yes:
		return d.cdata(w, i+len("<![CDATA["), name, final, sink)
	}
	vs := i
	for i < len(w) && w[i] != '<' && w[i] != '\n' && i-vs <= assignValueMax {
		i++
	}
	if i-vs > assignValueMax {
		// Longer than a value is looked at: the element's text is masked as
		// far as it goes on its line, without waiting for the closing tag
		// (issue 27: it used to be shown).
		sink.Add(vs, i, d.kind, match.Extender{Mode: match.ExtSet, Set: setXMLText, Max: extendMax})
		return false, 0
	}
	if i < len(w) && w[i] == '\n' {
		return false, 0
	}
	return d.closingTag(w, i, vs, i, name, final, sink)
}

// closingTag masks the element text w[vs:ve] when the closing tag of the
// element named name ("</", a name that ends with the key's, ">") starts
// at w[i] and the text is a secret; it waits (true, vs) while the tag may
// still arrive.
func (d *assignDet) closingTag(w []byte, i, vs, ve int, name []byte, final bool, sink match.SpanSink) (bool, int) {
	e := i + 2 + assignNameMax + len(name) + 1
	if len(w) < e && !final && bytes.IndexByte(w[i:], '>') < 0 {
		return true, vs
	}
	if scan.HasAt(w, i, "</", false) != scan.Yes {
		return false, 0
	}
	k := bytes.IndexByte(w[i:min(len(w), e)], '>')
	if k < 0 {
		return false, 0
	}
	tag := w[i+2 : i+k]
	if len(tag) < len(name) || !bytes.EqualFold(tag[len(tag)-len(name):], name) {
		return false, 0
	}
	if d.secret(w[vs:ve], true, valueCtx{kw: name, strong: true}) {
		sink.Add(vs, ve, d.kind, match.Extender{})
	}
	return false, 0
}

// cdata reads an element's text in a CDATA section that starts at w[vs]
// (<password><![CDATA[V]]></password>): V, up to "]]>", is the value, on
// its line; the closing tag must follow.
func (d *assignDet) cdata(w []byte, vs int, name []byte, final bool, sink match.SpanSink) (bool, int) {
	i := vs
	for i < len(w) && w[i] != '\n' && i-vs <= assignValueMax {
		if w[i] == ']' && scan.HasAt(w, i, "]]>", false) != scan.No {
			break
		}
		i++
	}
	if i-vs > assignValueMax {
		sink.Add(vs, i, d.kind, match.Extender{Mode: match.ExtSet, Set: setXMLText, Max: extendMax})
		return false, 0
	}
	if i == len(w) || len(w)-i < 3 {
		if final {
			return false, 0
		}
		return true, vs
	}
	if w[i] == '\n' {
		return false, 0
	}
	return d.closingTag(w, i+len("]]>"), vs, i, name, final, sink)
}

// nextLine reads a value on the line after "key:" (YAML): "key:\n  VALUE",
// "key: |\n  VALUE", or "key:\n  value: VALUE".
func (d *assignDet) nextLine(w []byte, i int, c valueCtx, final bool, sink match.SpanSink) (bool, int) {
	if w[i] == '|' || w[i] == '>' {
		i++
		for i < len(w) && (w[i] == '-' || w[i] == '+') {
			i++
		}
		i = scan.Skip(w, i, setBlank, assignBlankMax)
	}
	if i < len(w) && w[i] == '\r' {
		i++
	}
	if i == len(w) {
		return scan.Wait(final, i)
	}
	if w[i] != '\n' {
		return false, 0
	}
	i++
	k := scan.Skip(w, i, setBlank, assignBlankMax)
	if k == len(w) {
		return scan.Wait(final, i)
	}
	if k == i || w[k] == '\n' || w[k] == '\r' || w[k] == '#' {
		return false, 0 // not indented: another key
	}
	if scan.HasAt(w, k, "- ", false) == scan.Yes {
		return false, 0 // a list
	}
	// "value: V" on the next line is an object's value; anything else with a
	// colon is another key.
	switch scan.HasAt(w, k, "value", true) {
	case scan.More:
		return scan.Wait(final, i)
	case scan.Yes:
		return d.lookValue(w, k, c, final, sink)
	}
	e := k
	for e < len(w) && w[e] != '\n' && e-k <= assignValueMax {
		if w[e] == ':' && (e+1 < len(w) && (w[e+1] == ' ' || w[e+1] == '\n')) {
			return false, 0
		}
		e++
	}
	if e == len(w) && !final {
		return true, k
	}
	c.prose = true
	c.strong = false
	return d.value(w[:e], k, c, true, sink)
}

// lookValue looks, from w[i], for the first "value" key of the object or
// lines that follow (at most assignLookMax bytes and 6 lines, not past the
// end of the object) and masks its value if it is a secret.
func (d *assignDet) lookValue(w []byte, i int, c valueCtx, final bool, sink match.SpanSink) (bool, int) {
	from := i
	if i < len(w) && w[i] == '\n' {
		from = i + 1
	}
	lim := i + assignLookMax
	depth, lines := 0, 0
	for k := i; k < lim; k++ {
		if k == len(w) {
			return scan.Wait(final, from)
		}
		switch b := w[k]; b {
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth < 0 {
				return false, 0
			}
		case '\n':
			if lines++; lines > 6 {
				return false, 0
			}
		case 'v', 'V':
			if k > i && (setName[w[k-1]] && !(isLower(w[k-1]) && b == 'V')) {
				continue
			}
			st := scan.HasAt(w, k, "value", true)
			if st == scan.More {
				return scan.Wait(final, from)
			}
			if st == scan.No {
				continue
			}
			e := k + len("value")
			if e == len(w) {
				return scan.Wait(final, from)
			}
			if setName[w[e]] {
				continue
			}
			kq, st := scan.QuoteAt(w, e)
			if st == scan.More {
				return scan.Wait(final, from)
			}
			e = scan.Skip(w, e+kq.N, setBlank, assignBlankMax)
			n, sep, st := sepAt(w, e)
			if st == scan.More {
				return scan.Wait(final, from)
			}
			if n == 0 {
				continue
			}
			e += n
			s := scan.Skip(w, e, setBlank, assignBlankMax)
			if s == len(w) {
				return scan.Wait(final, from)
			}
			vc := valueCtx{kw: c.kw, prose: sep == ':' && s > e}
			return d.value(w, s, vc, final, sink)
		}
	}
	return false, 0
}

// secret reports whether v, the value given to the key, is a secret.
func (d *assignDet) secret(v []byte, quoted bool, c valueCtx) bool {
	if d.valueSet != nil {
		if len(v) != d.valueLen {
			return false
		}
		for _, b := range v {
			if !d.valueSet[b] {
				return false
			}
		}
		return true
	}
	if d.randomOnly {
		return keySecret(v, quoted)
	}
	if !d.lenient && codeChain(v) {
		return false // a status code chain: sts:5_rsn:0
	}
	if d.lenient && passwordWord(v, c.kw) && (quoted && !c.sql || !quoted && c.tight && !c.arg) {
		return true // password=correcthorsebatterystaple, {"password": "hunter"}
	}
	return literalSecret(v, quoted, c.strong, d.lenient, d.minLen, c.kw)
}

// literalSecret decides whether v, a value assigned to a secret-looking key
// whose keyword is kw, is a literal secret rather than code, a placeholder
// or a name (SPEC §6: only literal-looking values are masked).
//
// Never: a placeholder (see placeholder), a type name (str, string), a URL
// (the URL rules look inside it), a name made of words that contains the
// keyword itself (X-Fake-Connection-Token, encodeUserPassword); bare values
// that are code (a call, an index, a composite literal, a member chain like
// self.password or os.environ) or a path.
//
// Then, for password-like keys (lenient): a quoted value that is not prose,
// with a digit, a symbol or random (letters only: see passwordWord); a bare
// value in a strong context (NAME=value in an environment, --flag VALUE, a
// URL query, an XML element); else a bare value with a digit or a symbol
// (hunter2, P@ss), or all digits and at least 6 of them, or random.
// For the other keys (token, secret, api key...): at least minLen bytes, not
// all digits, and random (see random; or hex, see hexToken; or of a random
// token's entropy, see dense) unless the context is strong. A Jenkins
// encrypted secret in braces (see bracedSecret) always counts.
func literalSecret(v []byte, quoted, strong, lenient bool, minLen int, kw []byte) bool {
	if bracedSecret(v) {
		return true // Jenkins: <secret>{AQAAABAAAAAQ...}</secret>
	}
	if len(v) == 0 || placeholder(v) || typeWord(v) || choices(v) || bytes.Contains(v, []byte("://")) || bytes.HasPrefix(v, []byte("arn:")) || regex(v) {
		return false
	}
	s := shapeOf(v)
	rnd := s.random() || hexToken(v) || dense(v) || randomLetters(v) || randomNumber(v)
	if !rnd && s.digit == 0 && s.other == 0 && containsFold(v, kw) {
		return false
	}
	if !lenient && bytes.ContainsAny(v, " \t") {
		return false // tokens and keys have no blanks
	}
	if quoted {
		switch {
		case prose(v):
			return false
		case lenient:
			return len(v) >= 3 && (s.digit > 0 || symbol(v) || rnd)
		}
		return len(v) >= minLen && !s.allDigits() && rnd
	}
	if code(v) || path(v) || ident(v) && containsFold(v, kw) {
		return false
	}
	switch {
	case strong && lenient:
		return true
	case strong:
		return len(v) >= minLen && !s.allDigits()
	case lenient:
		if s.allDigits() {
			return len(v) >= 6
		}
		return len(v) >= 3 && (s.digit > 0 || symbol(v)) || rnd
	}
	return len(v) >= minLen && !s.allDigits() && rnd
}

// passwordWord reports whether v, a bare value given to a password-like
// key whose keyword is kw in a tight assignment (password=V), is a
// password made of letters (issue 27: password=correcthorsebatterystaple
// was shown), as is a quoted one after a separator ({"password":
// "hunter"}; with none it is as often prose: "the password 'reset' flow",
// "pass 'yes' as the value"): 3 letters or more, no placeholder (password, passwd, None),
// type name (str) or name that holds the keyword (userPassword). A value
// with "_", "." or brackets is a name or a call of code (new_password,
// args.password, getpass()) and is decided by literalSecret.
func passwordWord(v, kw []byte) bool {
	return len(v) >= 3 && letters(v) && !placeholder(v) && !typeWord(v) && !containsFold(v, kw)
}

// letters reports whether v is letters only (a word).
func letters(v []byte) bool {
	for _, c := range v {
		if !setLetter[c] {
			return false
		}
	}
	return true
}

// symbol reports whether v holds a byte that is neither a letter, a digit
// nor a separator of words (- _ . and blanks): P@ss, hunter!.
func symbol(v []byte) bool {
	for _, c := range v {
		if !setAlnum[c] && c != '-' && c != '_' && c != '.' && c != ' ' && c != '\t' {
			return true
		}
	}
	return false
}

// shape counts the classes of a value's bytes and its runs: maximal pieces
// of one class, where an upper-case letter followed by lower-case ones is
// one run (a Capitalized word), the separators of names and paths (- _ . /
// : @ and blanks) separate runs without being one, and every other symbol
// is a run of its own.
type shape struct {
	lower, upper, digit, other, seps, runs int
	badRuns, badLetters                    int // letter runs that are no word (see unwordy)
}

func shapeOf(v []byte) shape {
	s := shapeRuns(v)
	// Letter runs, split as camelCase words.
	for i := 0; i < len(v); {
		if !setLetter[v[i]] {
			i++
			continue
		}
		j := i + 1
		if isUpper(v[i]) {
			for j < len(v) && isUpper(v[j]) {
				j++
			}
			if j < len(v) && isLower(v[j]) && j-i > 1 {
				j-- // TLSConfig: the C begins the next word
			}
		}
		for j < len(v) && isLower(v[j]) {
			j++
		}
		vowel := false
		for _, c := range v[i:j] {
			switch scan.Lower(c) {
			case 'a', 'e', 'i', 'o', 'u', 'y':
				vowel = true
			}
		}
		if j-i <= 2 || !vowel {
			s.badRuns++
			s.badLetters += j - i
		}
		i = j
	}
	return s
}

func shapeRuns(v []byte) shape {
	var s shape
	prev, upRun := 0, 0 // prev: 1 lower, 2 upper, 3 digit, 0 none; upRun: upper letters in a row
	for _, c := range v {
		cl := 0
		switch {
		case isLower(c):
			s.lower++
			cl = 1
		case isUpper(c):
			s.upper++
			cl = 2
		case isDigit(c):
			s.digit++
			cl = 3
		case c == '-' || c == '_' || c == '.' || c == ' ' || c == '\t' || c == '/' || c == ':' || c == '@':
			s.seps++
			prev = 0
			continue
		default:
			s.other++
			s.runs++
			prev = 0
			continue
		}
		if cl == 2 {
			upRun++
		} else if cl != 1 {
			upRun = 0
		}
		switch {
		case cl == 1 && prev == 2 && upRun > 1:
			s.runs++ // "TLSConfig": TLS, Config; "ZVYx": ZV, Yx
		case cl != prev && !(cl == 1 && prev == 2):
			s.runs++
		}
		if cl == 1 {
			upRun = 0
		}
		prev = cl
	}
	return s
}

func (s shape) allDigits() bool { return s.digit > 0 && s.lower+s.upper+s.other == 0 }

// random reports whether a value has a secret's randomness rather than the
// shape of words or identifiers: at least 8 bytes that are not separators,
// of at least two classes (lower, upper, digit, symbol), and either an
// average run of at most 3 bytes (Zq8v3LmN0pXr: 11 runs in 12 bytes;
// nextNonSpace: 3 in 12; X-Fake-Connection-Token: 4 in 20) or at least 4
// digits and 4 letters in 12 bytes or more (AbCdEf0123456789).
func (s shape) random() bool {
	n := s.lower + s.upper + s.digit + s.other
	if n < 8 {
		return false
	}
	classes := 0
	for _, k := range []int{s.lower, s.upper, s.digit, s.other} {
		if k > 0 {
			classes++
		}
	}
	if classes < 2 {
		return false
	}
	return 3*s.runs >= n || s.digit >= 4 && s.lower+s.upper >= 4 && n >= 12 || n >= 16 && s.unwordy()
}

// unwordy reports whether the letters of a value read as no words: at
// least 3 of its letter runs (split as camelCase: "TLSConfig" is TLS,
// Config) are of one or two letters or have no vowel, and they hold a
// third of its letters or more (fxrttWsjFMKvXmafech: fxrtt, Wsj, FM, Kv;
// getTokenFromHeaderValue: none).
func (s shape) unwordy() bool {
	return s.badRuns >= 3 && 3*s.badLetters >= s.lower+s.upper
}

func containsFold(v, kw []byte) bool {
	if len(kw) == 0 || len(kw) > len(v) {
		return false
	}
	return bytes.Contains(bytes.ToLower(v), bytes.ToLower(kw))
}

// typeWords are type names that follow a key in code ("password: str").
var typeWords = []string{"str", "string", "int", "integer", "bool", "boolean", "bytes", "byte", "number", "float", "double",
	"text", "object", "any", "char", "list", "dict", "array", "optional", "unknown", "void", "buffer", "secretstr"}

// algorithms are the values of settings about a password that name how it
// is hashed or checked (password_encryption = scram-sha-256), no secret.
var algorithms = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"md4": true, "md5": true, "sha": true, "sha1": true, "sha-1": true, "sha224": true, "sha256": true, "sha-256": true,
		"sha384": true, "sha512": true, "sha-512": true, "scram-sha-1": true, "scram-sha-256": true, "scram-sha-512": true,
		"bcrypt": true, "scrypt": true, "argon2": true, "argon2i": true, "argon2d": true, "argon2id": true, "pbkdf2": true,
		"pbkdf2_sha256": true, "pbkdf2-sha256": true, "pbkdf2_sha512": true, "yescrypt": true, "sha256crypt": true,
		"sha512crypt": true, "md5crypt": true, "crypt": true, "des": true, "3des": true, "aes": true, "aes128": true,
		"aes256": true, "aes-128": true, "aes-256": true, "blowfish": true, "ntlm": true, "plain": true, "plaintext": true,
		"cleartext": true, "hmac-sha1": true, "hmac-sha256": true, "hmac-sha512": true, "hmac-md5": true,
	}
})

// choices reports whether v is an algorithm name (see algorithms) or a list
// of choices joined by "|" each a placeholder word or an algorithm
// (true|false, md5|scram-sha-256): a setting's documented values.
func choices(v []byte) bool {
	if len(v) > 32 {
		return false
	}
	for _, part := range bytes.Split(v, []byte("|")) {
		var buf [32]byte
		n := copy(buf[:], part)
		for k := range n {
			buf[k] = scan.Lower(buf[k])
		}
		if !algorithms()[string(buf[:n])] && !(bytes.IndexByte(v, '|') > 0 && len(part) > 0 && placeholder(part)) {
			return false
		}
	}
	return true
}

func typeWord(v []byte) bool {
	for _, t := range typeWords {
		if len(v) == len(t) && bytes.EqualFold(v, []byte(t)) {
			return true
		}
	}
	return false
}

// prose reports whether v is words and blanks (an explanation, not a
// value): two or more blank-separated words of letters only.
func prose(v []byte) bool {
	f := bytes.Fields(v)
	if len(f) < 2 {
		return false
	}
	for _, w := range f {
		w = bytes.TrimRight(w, ".,:;!?")
		for _, c := range w {
			if !setLetter[c] && c != '\'' && c != '-' {
				return false
			}
		}
	}
	return true
}

// regex reports whether v reads as a regular expression: \w \d \s, (?, [^,
// a character class of ranges ([A-Za-z0-9], [a-f0-9]) or a bracket followed
// by a repetition (]{32}, ]+, ]*).
func regex(v []byte) bool {
	for _, t := range []string{`\w`, `\d`, `\s`, `\W`, `\S`, `(?`, `[^`, `\b`, `]{`, `]+`, `]*`} {
		if bytes.Contains(v, []byte(t)) {
			return true
		}
	}
	for i := 0; i+3 < len(v); i++ {
		if v[i] == '[' && setAlnum[v[i+1]] && v[i+2] == '-' && setAlnum[v[i+3]] && bytes.IndexByte(v[i:], ']') > 0 {
			return true // [A-Z...]
		}
	}
	return false
}

// identStart and identByte are the bytes of identifiers in common
// languages.
var (
	identStart = scan.NewSet("A-Za-z_$")
	identByte  = scan.NewSet("A-Za-z0-9_$")
)

// code reports whether a bare value is code: a call, index or composite
// literal after an identifier (next(), response["k"], Token{...},
// []byte("x")), a member chain (self.password, os.environ, t.typ) that is
// not random, or a scope (Kind::X) or arrow (a->b).
func code(v []byte) bool {
	if k := bytes.IndexAny(v, "([{"); k >= 0 {
		pre := bytes.TrimLeft(v[:k], "&*!")
		if len(pre) == 0 || pre[0] == '[' || ident(pre) && callExpr(v[k:]) {
			return true // a call only when nothing but more of it follows its ")": abc(def)ghi1 is a value
		}
	}
	if bytes.Contains(v, []byte("::")) || bytes.Contains(v, []byte("->")) {
		return true
	}
	if numberLiteral(v) {
		return true // a number literal: 0x53c237_53c237, not a 0x-prefixed token (see numberLiteral)
	}
	if bytes.IndexByte(v, '.') > 0 && ident(v) {
		for _, part := range bytes.Split(v, []byte(".")) {
			if shapeOf(part).random() && len(part) >= 16 {
				return false
			}
		}
		return true
	}
	return false
}

// ident reports whether v is an identifier or a chain of them joined by dots.
func ident(v []byte) bool {
	for _, part := range bytes.Split(v, []byte(".")) {
		if len(part) == 0 || !identStart[part[0]] {
			return false
		}
		for _, c := range part {
			if !identByte[c] {
				return false
			}
		}
	}
	return true
}

// path reports whether a bare value is a file path: it starts with / ~/ ./
// or ../ and no part of it is random.
func path(v []byte) bool {
	if !(v[0] == '/' || bytes.HasPrefix(v, []byte("~/")) || bytes.HasPrefix(v, []byte("./")) || bytes.HasPrefix(v, []byte("../"))) {
		return false
	}
	for _, part := range bytes.Split(v, []byte("/")) {
		if shapeOf(part).random() {
			return false
		}
	}
	return true
}

var placeholderWords = []string{
	"null", "none", "nil", "undefined", "true", "false", "redacted",
	"hidden", "masked", "secret", "password", "(none)", "(null)", "n/a",
	"(sensitive)", "sensitive", "(sensitive value)", "omitted", "censored", "filtered", "example",
	"passwd", "pass", "pwd", "token", "user", "username",
}

// placeholder reports whether an assigned value is a stand-in rather than a
// secret: empty, a mask like "****" or "xxxx", a reference like $VAR, ${VAR},
// %s, %(name)s, {{ var }} or #{var}, <angle> or {brace} templates, an
// earlier marker, or a word such as null, none, true, false.
func placeholder(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	switch v[0] {
	case '$', '%':
		return true
	case '!':
		if len(v) > 1 && ident(v[1:]) {
			return true // a YAML tag: password: !vault |, Password: !Ref DbPassword
		}
	}
	if v[0] == '<' && v[len(v)-1] == '>' || v[0] == '{' && v[len(v)-1] == '}' || bytes.HasPrefix(v, []byte("[REDACTED")) {
		return true
	}
	for _, lt := range []string{"&lt;", "&#x3c;", "&#60;"} {
		if len(v) > len(lt) && bytes.EqualFold(v[:len(lt)], []byte(lt)) {
			return true // <string> escaped in HTML: passphrase: &#x3C;string> (Node.js API docs)
		}
	}
	for _, t := range []string{"{{", "${", "#{", "{}", "[REDACTED", "***"} {
		if bytes.Contains(v, []byte(t)) {
			return true
		}
	}
	same := true
	for _, c := range v {
		if c != '*' && c != 'x' && c != 'X' && c != '.' && c != '#' {
			same = false
			break
		}
	}
	if same {
		return true
	}
	for _, p := range placeholderWords {
		if len(v) == len(p) && bytes.EqualFold(v, []byte(p)) {
			return true
		}
	}
	return false
}

func (d *assignDet) AfterKeyword() bool  { return true }
func (l *lastByteKw) AfterKeyword() bool { return true }
