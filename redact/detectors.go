package redact

import (
	"bytes"
	"regexp"

	"github.com/capwrap/capwrap/redact/internal/match"
	"github.com/capwrap/capwrap/redact/internal/scan"
)

// Detectors: each decides, from a bounded window that starts at a keyword,
// whether a secret is there and which bytes it covers. They are plain
// scanners over bytes (no regexp on the hot path) written so that a decision
// taken on a partial window is the one the full window would give.

var (
	setAlnum   = scan.NewSet("A-Za-z0-9")
	setB64URL  = scan.NewSet("A-Za-z0-9_-")
	setLetter  = scan.NewSet("A-Za-z")
	setBlank   = scan.NewSet(" \t")
	setControl = scan.NewSet("\x00-\x1f\x7f")
	// setName continues a key name: "password_hash", "api-key.v2".
	setName = scan.NewSet("A-Za-z0-9_.-")
	// setAuthValue holds the bytes of an Authorization header value.
	setAuthValue = scan.NewSet(" ,;\"'").Union(setControl).Not()
	// setBearer holds the bytes of an RFC 6750 token68.
	setBearer = scan.NewSet("A-Za-z0-9._~+/=-")
	// setURLUser and setURLPass hold the bytes of a URL's userinfo parts.
	setURLUser = scan.NewSet(" /@:?#").Union(setControl).Not()
	setURLPass = scan.NewSet(" /@?").Union(setControl).Not() // "#" too: unescaped, it is part of a password more often than a fragment before an "@"
	setPEMName = scan.NewSet("A-Z0-9 ")
	// setLine holds every byte but the newline.
	setLine = scan.NewSet("\n").Not()
)

// extendMax bounds how far an open-ended token span grows: far enough for any
// credential, and then bytes flow again.
const extendMax = 1 << 30

// prefixDet finds tokens that begin with a fixed keyword: "ghp_" + 36
// alphanumerics and the like.
type prefixDet struct {
	kind     int32
	body     *scan.ByteSet // bytes that continue the token after the keyword
	min, max int           // body length, in bytes
	afterKw  bool          // the span starts after the keyword (webhook URLs) rather than at it
	left     *scan.ByteSet // no match when the byte before the keyword is in left
	right    *scan.ByteSet // no match when the byte after the body is in right
	overlong bool          // a body over max bytes is masked and dropped while it lasts; else no match
}

func (d *prefixDet) Window(kw int) int { return kw + d.max + 1 }

// glued reports whether a token is glued to the word before it: the byte
// just before it (the last of pre) is in set. Some letters do not glue,
// because output puts them right before a word without being part of it:
// the letter that ends an ANSI control sequence (ECMA-48 CSI: "\x1b[31m",
// "\x1b[m", "\x1b[38;5;196m": ESC, "[", parameter bytes, the letter) and
// the letter of a backslash escape in JSON or a quoted string ("\n", "\t").
// A letter after digits that no CSI opens glues ("HEX0fAKIA..." is no AWS
// key). pre must hold glueBack bytes where the stream has them.
func glued(pre []byte, set *scan.ByteSet) bool {
	n := len(pre)
	if n == 0 || !set[pre[n-1]] {
		return false
	}
	if n >= 2 && setLetter[pre[n-1]] {
		if pre[n-2] == '\\' {
			return false
		}
		// Back over the CSI's parameter bytes (0x30-0x3f: digits, ";", "?"...)
		// to its "[" and ESC.
		i := n - 2
		for i >= 0 && pre[i] >= 0x30 && pre[i] <= 0x3f {
			i--
		}
		if i >= 1 && pre[i] == '[' && pre[i-1] == 0x1b {
			return false
		}
	}
	return true
}

// glueBack is how many bytes before a token glued looks at: the longest
// usual CSI ("\x1b[38;2;255;255;255m" is 19 bytes) and its letter.
const glueBack = 24

func (d *prefixDet) Back() int  { return glueBack }
func (d *jwtDet) Back() int     { return glueBack }
func (d *discordDet) Back() int { return glueBack }
func (d *bearerDet) Back() int  { return glueBack }

func (d *prefixDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	if d.left != nil && glued(pre, d.left) {
		return false, 0
	}
	s := 0
	if d.afterKw {
		s = kw
	}
	i := scan.Skip(w, kw, d.body, d.max+1)
	n := i - kw
	if n > d.max {
		if d.overlong {
			sink.Add(s, i, d.kind, match.Extender{Mode: match.ExtSet, Set: d.body, Max: extendMax})
		}
		return false, 0
	}
	if i == len(w) && !final {
		return true, s
	}
	if n < d.min || d.right != nil && i < len(w) && d.right[w[i]] {
		return false, 0
	}
	sink.Add(s, i, d.kind, match.Extender{})
	return false, 0
}

// jwtDet finds JSON Web Tokens: three base64url segments joined by dots, the
// first starting with "eyJ" (base64 of `{"`).
type jwtDet struct{ kind int32 }

const (
	jwtWindow    = 4096
	jwtHeaderMax = 512
	jwtPartMin   = 10
	jwtSigMin    = 16
)

func (d *jwtDet) Window(int) int { return jwtWindow }

func (d *jwtDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	if glued(pre, setB64URL) {
		return false, 0
	}
	i := scan.Skip(w, 0, setB64URL, jwtHeaderMax+1)
	if i > jwtHeaderMax {
		return false, 0
	}
	if i == len(w) {
		return scan.Wait(final, 0)
	}
	if w[i] != '.' || i < jwtPartMin {
		return false, 0
	}
	i++
	j := i
	i = scan.Skip(w, i, setB64URL, len(w))
	if i == len(w) {
		if !final {
			return true, 0
		}
		if len(w) == jwtWindow && i-j >= jwtPartMin {
			// The payload runs past the window: drop it as it arrives.
			sink.Add(0, i, d.kind, match.Extender{Mode: match.ExtSet, Set: setB64URL.Union(scan.NewSet(".")), Max: extendMax})
		}
		return false, 0
	}
	if w[i] != '.' || i-j < jwtPartMin {
		return false, 0
	}
	i++
	j = i
	i = scan.Skip(w, i, setB64URL, jwtSigMin)
	if i-j == jwtSigMin {
		sink.Add(0, i, d.kind, match.Extender{Mode: match.ExtSet, Set: setB64URL, Max: extendMax})
		return false, 0
	}
	if i == len(w) {
		return scan.Wait(final, 0)
	}
	return false, 0
}

// discordDet finds Discord bot tokens: base64 of the bot's numeric id (so it
// starts with one of the keywords of discordKeywords: MTA, MTE ... OTk), a dot,
// six characters, a dot, 27 to 38 characters.
type discordDet struct{ kind int32 }

var discordParts = [3][2]int{{24, 26}, {6, 6}, {27, 38}}

func (d *discordDet) Window(int) int { return 26 + 1 + 6 + 1 + 38 + 1 }

func (d *discordDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	if glued(pre, setB64URL) {
		return false, 0
	}
	i := 0
	for p, lim := range discordParts {
		j := i
		i = scan.Skip(w, i, setB64URL, lim[1]+1)
		n := i - j
		if n > lim[1] {
			return false, 0
		}
		if i == len(w) && !final {
			return true, 0
		}
		if n < lim[0] {
			return false, 0
		}
		if p < 2 {
			if i == len(w) || w[i] != '.' {
				return false, 0
			}
			i++
		}
	}
	sink.Add(0, i, d.kind, match.Extender{})
	return false, 0
}

// urlPassDet finds the password in "scheme://user:password@host"; its
// keyword is "://" and it masks the password only.
type urlPassDet struct{ kind int32 }

const (
	urlUserMax = 128
	urlPassMax = 256
	// urlUserTokenMin is the shortest user part of a URL masked as a token
	// when it has no password; it must look random too (see literalSecret).
	urlUserTokenMin = 16
)

func (d *urlPassDet) Window(kw int) int { return kw + urlUserMax + 1 + urlPassMax + 1 }

func (d *urlPassDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	if len(pre) == 0 || !setAlnum[pre[len(pre)-1]] {
		return false, 0 // no scheme before "://"
	}
	i := scan.Skip(w, kw, setURLUser, urlUserMax+1)
	if i-kw > urlUserMax {
		return false, 0
	}
	if i == len(w) {
		return scan.Wait(final, kw) // the user may be a token
	}
	if w[i] == '@' && i > kw {
		// No password: the user part may be a token itself
		// (https://TOKEN@git.example.com/repo.git).
		if u := w[kw:i]; len(u) >= urlUserTokenMin && literalSecret(u, false, false, false, urlUserTokenMin, nil) {
			sink.Add(kw, i, d.kind, match.Extender{})
		}
		return false, 0
	}
	if w[i] != ':' {
		return false, 0
	}
	i++
	ps := i
	i = scan.Skip(w, i, setURLPass, urlPassMax+1)
	if i-ps > urlPassMax {
		// Too long to tell: dropped rather than released.
		sink.Add(ps, i, d.kind, match.Extender{Mode: match.ExtSet, Set: setURLPass, Max: extendMax})
		return false, 0
	}
	if i == len(w) {
		return scan.Wait(final, ps)
	}
	if w[i] != '@' || placeholder(w[ps:i]) {
		return false, 0
	}
	sink.Add(ps, i, d.kind, match.Extender{})
	return false, 0
}

// pemDet finds PEM private-key blocks and masks each whole, BEGIN line to END
// line. Its keyword is "-----BEGIN "; the block's body is dropped as it
// arrives, so nothing is held for it. A block with no END within pemMax bytes
// is masked up to that bound (the undecidable part is dropped, never released).
type pemDet struct{ kind int32 }

const (
	pemLabelMax = 48
	pemMax      = 64 << 10
)

func (d *pemDet) Window(kw int) int { return kw + pemLabelMax + 1 + 5 }

func (d *pemDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	i := scan.Skip(w, kw, setPEMName, pemLabelMax+1)
	if i-kw > pemLabelMax {
		return false, 0
	}
	if i == len(w) {
		return scan.Wait(final, 0)
	}
	label := w[kw:i]
	if !bytes.HasSuffix(label, []byte("PRIVATE KEY")) && !bytes.HasSuffix(label, []byte("PRIVATE KEY BLOCK")) {
		return false, 0
	}
	const dashes = "-----"
	rest := w[i:min(len(w), i+len(dashes))]
	if string(rest) != dashes[:len(rest)] {
		return false, 0
	}
	if len(rest) < len(dashes) {
		return scan.Wait(final, 0)
	}
	e := i + len(dashes)
	sink.Add(0, e, d.kind, match.Extender{Mode: match.ExtPEM, Max: pemMax - e})
	return false, 0
}

// authDet finds the value of an Authorization header or field:
// "Authorization: Bearer VALUE", `"authorization": "Basic VALUE"`. The scheme
// stays visible and names the kind.
type authDet struct {
	bearer, basic, other int32
}

const (
	authSchemeMax = 24
	authValueMax  = 512
)

func (d *authDet) Window(kw int) int {
	return kw + 1 + assignBlankMax + 1 + assignBlankMax + 1 + authSchemeMax + 1 + assignBlankMax + max(authValueMax, authParamsMax) + 1
}

var authSchemes = []string{"bearer", "basic", "token", "bot", "digest", "negotiate", "ntlm", "apikey", "aws4-hmac-sha256"}

// keySeparator reads what follows a header's or field's name at w[kw:]:
// the quote that may close the name, blanks, and ":" or "=". It returns
// scan.Yes and the index just past the separator; scan.No when something else
// follows; scan.More, and the offset to wait from, when w ends first.
func keySeparator(w []byte, kw int) (scan.Lex, int) {
	kq, st := scan.QuoteAt(w, kw)
	if st == scan.More {
		return scan.More, kw
	}
	i := scan.Skip(w, kw+kq.N, setBlank, assignBlankMax)
	switch {
	case i == len(w):
		return scan.More, i
	case w[i] != ':' && w[i] != '=':
		return scan.No, 0
	}
	return scan.Yes, i + 1
}

func (d *authDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	st, i := keySeparator(w, kw)
	switch st {
	case scan.More:
		return scan.Wait(final, i)
	case scan.No:
		return false, 0
	}
	set := setAuthValue
	if i < len(w) && w[i] == '[' {
		i++ // a Go-printed header map: map[Authorization:[Basic VALUE]]
		set = setAuthValueBracket
	}
	i = scan.Skip(w, i, setBlank, assignBlankMax)
	vq, st := scan.QuoteAt(w, i)
	if st == scan.More {
		return scan.Wait(final, i)
	}
	i += vq.N
	ws := i
	j := scan.Skip(w, i, newSchemeSet, authSchemeMax+1)
	if j == len(w) {
		return scan.Wait(final, ws)
	}
	vs := ws
	kind := d.other
	if j > ws && j-ws <= authSchemeMax && setBlank[w[j]] {
		k := scan.Skip(w, j, setBlank, assignBlankMax)
		if k == len(w) {
			return scan.Wait(final, ws)
		}
		if set[w[k]] {
			vs = k
			switch {
			case bytes.EqualFold(w[ws:j], []byte("bearer")):
				kind = d.bearer
			case bytes.EqualFold(w[ws:j], []byte("basic")):
				kind = d.basic
			}
		}
	}
	if vs > ws {
		// Digest, AWS4-HMAC-SHA256, OAuth: parameters, of which only some
		// are credentials (authparams.go).
		if done, pending, from := authParams(w, vs, final, d.other, sink); done {
			return pending, from
		}
	}
	i = vs
	for i < len(w) && set[w[i]] && i-vs <= authValueMax {
		if w[i] == '\\' && (i+1 == len(w) || jsonEscape[w[i+1]]) {
			break // the end of an escaped string: \"Bearer VALUE\"
		}
		i++
	}
	if i-vs > authValueMax {
		sink.Add(vs, i, kind, match.Extender{Mode: match.ExtSet, Set: set, Max: extendMax})
		return false, 0
	}
	if i == len(w) && !final {
		return true, vs
	}
	v := w[vs:i]
	if vs == ws {
		for _, s := range authSchemes {
			if bytes.EqualFold(v, []byte(s)) {
				return false, 0 // a scheme with no value
			}
		}
		// No scheme: the value must be a literal secret, not code
		// ("Authorization": []string{...}, authorization: string).
		if !literalSecret(v, vq.N > 0, false, false, authMin, w[:kw]) {
			return false, 0
		}
	}
	if len(v) < authMin || placeholder(v) {
		return false, 0
	}
	sink.Add(vs, i, kind, match.Extender{})
	return false, 0
}

// authMin is the shortest Authorization value masked, in bytes ("Bearer
// mytoken" in a test is no credential).
const authMin = 8

var setAuthValueBracket = scan.NewSet(" ,;\"'[]").Union(setControl).Not()

var newSchemeSet = scan.NewSet("A-Za-z0-9-")

// bearerDet finds "Bearer TOKEN" outside an Authorization header: the keyword
// as a word, blanks, and a token68 of at least bearerMin bytes ("Bearer token
// expired" stays).
type bearerDet struct{ kind int32 }

const bearerMin = 12

func (d *bearerDet) Window(kw int) int { return kw + assignBlankMax + authValueMax + 1 }

func (d *bearerDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	if glued(pre, setLetter) {
		return false, 0
	}
	i := scan.Skip(w, kw, setBlank, assignBlankMax)
	if i == len(w) {
		return scan.Wait(final, i)
	}
	if i == kw {
		return false, 0
	}
	vs := i
	i = scan.Skip(w, i, setBearer, authValueMax+1)
	if i-vs > authValueMax {
		sink.Add(vs, i, d.kind, match.Extender{Mode: match.ExtSet, Set: setBearer, Max: extendMax})
		return false, 0
	}
	if i == len(w) && !final {
		return true, vs
	}
	if i-vs < bearerMin {
		return false, 0
	}
	sink.Add(vs, i, d.kind, match.Extender{})
	return false, 0
}

// lineMax is the longest line a --redact-pattern is matched against, in
// bytes; the rest of a longer line is dropped (undecidable), not released.
const lineMax = 4096

// prefixRegexDet runs a --redact-pattern that starts with a literal (its
// keyword) on the rest of the line from that literal.
type prefixRegexDet struct {
	kind, undecidable int32
	re                *regexp.Regexp // anchored at the start of the window
}

func (d *prefixRegexDet) Window(int) int { return lineMax + 1 }

func (d *prefixRegexDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	nl := bytes.IndexByte(w, '\n')
	if nl < 0 {
		if !final {
			return true, 0
		}
		nl = min(len(w), lineMax)
	}
	if m := d.re.FindIndex(w[:nl]); m != nil && m[1] > m[0] {
		sink.Add(m[0], m[1], d.kind, match.Extender{})
	}
	if nl == lineMax && nl < len(w) && w[nl] != '\n' {
		sink.Add(nl, nl+1, d.undecidable, match.Extender{Mode: match.ExtSet, Set: setLine, Max: extendMax})
	}
	return false, 0
}

// lineRegexDet runs the --redact-patterns that have no literal prefix on
// every line. Its keyword is "\n"; the stream's first line is opened at
// offset 0 with an empty keyword.
type lineRegexDet struct {
	kind, undecidable int32
	res               []*regexp.Regexp
}

func (d *lineRegexDet) Window(kw int) int { return kw + lineMax + 1 }

func (d *lineRegexDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	line := w[kw:]
	nl := bytes.IndexByte(line, '\n')
	if nl < 0 {
		if !final {
			return true, kw
		}
		nl = min(len(line), lineMax)
	}
	for _, re := range d.res {
		for _, m := range re.FindAllIndex(line[:nl], -1) {
			if m[1] > m[0] {
				sink.Add(kw+m[0], kw+m[1], d.kind, match.Extender{})
			}
		}
	}
	if nl == lineMax && nl < len(line) && line[nl] != '\n' {
		sink.Add(kw+nl, kw+nl+1, d.undecidable, match.Extender{Mode: match.ExtSet, Set: setLine, Max: extendMax})
	}
	return false, 0
}

// The spans of these detectors start after their keywords (see
// afterKeyword).
func (d *prefixDet) AfterKeyword() bool  { return d.afterKw }
func (d *authDet) AfterKeyword() bool    { return true }
func (d *bearerDet) AfterKeyword() bool  { return true }
func (d *urlPassDet) AfterKeyword() bool { return true }
