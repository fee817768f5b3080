package redact

import (
	"bytes"
	"math"

	"github.com/capwrap/capwrap/redact/internal/scan"
)

// Value extents (SPEC §6 "password=/secret:-style assignments: the value
// only"; issue 27 "What to build" 1): where a bare value ends is decided by
// its carrier, not by the first symbol it holds. A masker that stops at the
// first special character shows the rest of the password
// (password=Tr0ub4dor&3 showed "&3").
//
//   - In key=value lines, env dumps and flags the value is the whole token:
//     it runs to a blank, a quote, a control byte or the end of the line,
//     whatever symbols it holds (p@ss!w0rd%^&*(), ~x(y)z*1+2=3?4,5.6:7).
//   - Inside the token, a byte ends the value only where its carrier says
//     so: "&" in a URL query (the key comes after "?" or "&", or its
//     separator is "%3D": RFC 3986 §3.4 and the WHATWG URL Standard's
//     application/x-www-form-urlencoded parser split on "&"; there "%26"
//     too, a query inside a query's value), or anywhere
//     before "name=" or "amp;" (a form body, user=a&password=X&grant=y); ";"
//     and "," before "name=" (connection strings, Password=X;Database=y:
//     the .NET SqlConnection.ConnectionString syntax) or at the end of the
//     token (Set-Cookie: a=X; Path=/, RFC 6265 §4.1.1); "<" that opens a
//     tag.
//   - At the end of the token, closing brackets the value did not open
//     (map[password:[X]], User(name=a, password=X), {Password:X}), and ">"
//     or "/>" (<input password=X/>) are not part of it.

// setToken holds the bytes of a bare value's token: everything but blanks,
// quotes and control bytes.
var setToken = scan.NewSet(" \t\"'`").Union(setControl).Not()

// setQueryValue holds the bytes of a value in a URL query that is masked
// past assignValueMax as it arrives: a token's, but "&" ends it.
var setQueryValue = scan.NewSet(" \t\"'`&").Union(setControl).Not()

// setValueStart holds the first byte of a name that may follow "&", ";" or
// "," inside a token as the next key (a letter or "_").
var setValueStart = scan.NewSet("A-Za-z_")

// nextKeyAt reports whether tok[i:] starts a name then "=" (or ":" when
// colon): the next key of a query, form body or connection string.
func nextKeyAt(tok []byte, i int, colon bool) bool {
	if i >= len(tok) || !setValueStart[tok[i]] {
		return false
	}
	j := scan.Skip(tok, i, setName, assignNameMax+1)
	if j == len(tok) || j-i > assignNameMax {
		return false
	}
	return tok[j] == '=' || colon && tok[j] == ':'
}

// valueEnd returns the length of the value at the start of tok, a bare
// token (see setToken), in a URL query when query is set. whole says tok is
// the whole token (its end was seen): only then are trailing brackets and
// punctuation trimmed.
func valueEnd(tok []byte, query, whole bool) int {
	e := len(tok)
	for i := 0; i < len(tok); i++ {
		switch tok[i] {
		case '&':
			if query || nextKeyAt(tok, i+1, false) || scan.HasAt(tok, i+1, "amp;", false) == scan.Yes {
				e = i
			}
		case '%':
			if query && scan.HasAt(tok, i, "%26", false) == scan.Yes {
				e = i // an escaped "&": the query of a URL inside a URL's query
			}
		case ';', ',':
			if nextKeyAt(tok, i+1, tok[i] == ',') {
				e = i
			}
		case '<':
			if i+1 < len(tok) && (tok[i+1] == '/' || setLetter[tok[i+1]]) {
				e = i
			}
		}
		if e < len(tok) {
			whole = true // what the value holds is known: the cut may be trimmed too
			break
		}
	}
	if !whole {
		return e
	}
	return trimValue(tok[:e])
}

// trimValue returns the length of v without the punctuation and closing
// brackets that end the token rather than the value: "," ";" ":" ">" "/>",
// a ")" "]" "}" or "`" that no bracket or backtick of the value opened, and
// a "." "!" "?" after one of those.
func trimValue(v []byte) int {
	e := len(v)
	for e > 0 {
		switch v[e-1] {
		case ',', ';', ':', '>':
			e--
			if v[e] == '>' && e > 0 && v[e-1] == '/' {
				e--
			}
			continue
		case ')', ']', '}':
			if opened(v[:e-1], v[e-1]) {
				return e
			}
			e--
			continue
		case '`':
			if bytes.Count(v[:e-1], []byte("`"))%2 == 1 {
				return e
			}
			e-- // a markdown code span closes: `curl -u user:X`,
			continue
		case '.', '!', '?':
			// A full stop after a closing bracket or backtick the value did
			// not open: (GnuPG key: X). ends the sentence, not the value.
			if e >= 2 && (v[e-2] == ')' || v[e-2] == ']' || v[e-2] == '}') && !opened(v[:e-2], v[e-2]) ||
				e >= 2 && v[e-2] == '`' && bytes.Count(v[:e-2], []byte("`"))%2 == 0 {
				e--
				continue
			}
		}
		return e
	}
	return e
}

// opened reports whether v holds an unclosed opening bracket for the closing
// bracket c.
func opened(v []byte, c byte) bool {
	o := byte('(')
	switch c {
	case ']':
		o = '['
	case '}':
		o = '{'
	}
	depth := 0
	for _, b := range v {
		switch b {
		case o:
			depth++
		case c:
			if depth > 0 {
				depth--
			}
		}
	}
	return depth > 0
}

// callExpr reports whether s, the rest of a bare value from its first
// bracket after an identifier (or from its start), ends the value as code
// does: brackets that close (or stay open: the arguments go on past a
// blank, f(a, b)), followed only by more of a chain (.next(), [0], ?, !)
// up to the end, or, after "]", a type name and another bracket (Go's
// map[rune]string{). parser.next(), os.Getenv(, f(x), Token{...},
// a.b().c[0] are code; abc(def)ghi1 and ab[cd]ef1 are not: text follows the
// closing bracket in the token.
func callExpr(s []byte) bool {
	for i := 0; i < len(s); {
		switch s[i] {
		case '(', '[', '{':
			k := closeAt(s, i)
			if k < 0 {
				return true // the arguments go on past the token
			}
			i = k + 1
			if s[k] == ']' {
				// A Go type: map[rune]string{, []byte(, [4]int{.
				j := i
				for j < len(s) && identByte[s[j]] {
					j++
				}
				if j > i && j < len(s) && (s[j] == '(' || s[j] == '{' || s[j] == '[') {
					i = j
				}
			}
		case '.':
			j := i + 1
			for j < len(s) && identByte[s[j]] {
				j++
			}
			if j == i+1 {
				return false
			}
			i = j
		case '?', '!':
			i++
		default:
			return false
		}
	}
	return true
}

// closeAt returns the index in s of the bracket that closes the one at
// s[i], counting brackets of all three kinds, or -1.
func closeAt(s []byte, i int) int {
	depth := 0
	for k := i; k < len(s); k++ {
		switch s[k] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth--; depth == 0 {
				return k
			}
		}
	}
	return -1
}

// numberLiteral reports whether v is a number literal of code with a base
// prefix (0x, 0o, 0b; Go, Python, Rust, JavaScript spell them alike, "_"
// between digits) that fits 64 bits: 0x53c2, 0xFF, 0o755. A longer one
// (0x9f8e7d6c5b4a39281726354), or one with bytes outside its base's digits,
// is no number of code but a token that happens to start with 0x.
func numberLiteral(v []byte) bool {
	if len(v) < 3 || v[0] != '0' || randomNumber(v) {
		return false
	}
	digits, max := setHexDigit, 16
	switch v[1] {
	case 'x', 'X':
	case 'o', 'O':
		digits, max = setOctDigit, 22
	case 'b', 'B':
		digits, max = setBinDigit, 64
	default:
		return false
	}
	n := 0
	for _, c := range v[2:] {
		switch {
		case digits[c]:
			n++
		case c == '_':
		default:
			return false
		}
	}
	return n > 0 && n <= max
}

// randomNumber reports whether v is an octal or binary number too long and
// irregular for a constant of code, as a value given to a secret key
// (issue 27: secret=0o7312345670123 and api_key=0b101100111000111101 were
// shown, as both fit 64 bits): 10 octal digits or more (file modes have 3
// to 6: 0o755, 0o104755), or 17 binary digits or more (masks of 8 and 16
// bits: 0b11110000) in 6 runs or more, with no "_" between digit groups
// (0b1111_0000_1111_0000_1 is written by a person for a person).
func randomNumber(v []byte) bool {
	if len(v) < 3 || v[0] != '0' || bytes.IndexByte(v, '_') >= 0 {
		return false
	}
	d := v[2:]
	switch v[1] {
	case 'o', 'O':
		for _, c := range d {
			if !setOctDigit[c] {
				return false
			}
		}
		return len(d) >= 10
	case 'b', 'B':
		runs := 0
		for k, c := range d {
			if !setBinDigit[c] {
				return false
			}
			if k == 0 || c != d[k-1] {
				runs++
			}
		}
		return len(d) >= 17 && runs >= 6
	}
	return false
}

var (
	setHexDigit = scan.NewSet("0-9a-fA-F")
	setOctDigit = scan.NewSet("0-7")
	setBinDigit = scan.NewSet("01")
)

// hexToken reports whether v is a random-looking hexadecimal token: 16 hex
// digits or more (after an optional 0x), in one case, with a letter and
// a digit (9f8e7d6c5b4a3928, 3928172635491827a3). Hex has few letters by
// chance (6 of its 16 digits), so the run measure of shape.random misses
// it; as a value given to a secret key it is a key or a digest of one.
func hexToken(v []byte) bool {
	if len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		v = v[2:]
	}
	if len(v) < 16 {
		return false
	}
	var lower, upper, digit bool
	for _, c := range v {
		switch {
		case isDigit(c):
			digit = true
		case 'a' <= c && c <= 'f':
			lower = true
		case 'A' <= c && c <= 'F':
			upper = true
		default:
			return false
		}
	}
	return digit && (lower != upper)
}

// bracedSecret reports whether v is an encrypted secret as Jenkins stores
// it in credentials.xml, config.xml and JCasC exports: "{" base64 "}"
// (Jenkins core, core/src/main/java/hudson/util/Secret.java,
// getEncryptedValue returns "{" + Base64(payload) + "}", and
// ENCRYPTED_VALUE_PATTERN is \{?[A-Za-z0-9+/]+={0,2}}?; the version 1
// payload starts with the bytes 1 and a 4-byte IV length, "AQAAAB..."), at
// least 16 base64 bytes that start so or look random. A template
// ({password}, {0}, {{ var }}) is no such value.
func bracedSecret(v []byte) bool {
	if len(v) < 18 || v[0] != '{' || v[len(v)-1] != '}' {
		return false
	}
	in := v[1 : len(v)-1]
	for k, c := range in {
		if !setBase64[c] && !(c == '=' && len(in)-k <= 2) {
			return false
		}
	}
	return len(in) >= 16 && (bytes.HasPrefix(in, []byte("AQAAAB")) || shapeOf(bytes.TrimRight(in, "=")).random())
}

var setBase64 = scan.NewSet("A-Za-z0-9+/")

// setXMLText holds the bytes of an XML element's text on one line: all but
// "<" (the closing tag) and the newline. An element's text longer than
// assignValueMax is masked while it lasts.
var setXMLText = scan.NewSet("<\n").Not()

// dense reports whether v has the Shannon entropy of a random base64 token
// rather than the letters of words: 24 to assignValueMax bytes, no blanks,
// upper- and lower-case letters, and at least 4.5 bits per byte and 85 %
// of the most its length allows (log2 of it). 4.5 is the base64 limit of
// Yelp's detect-secrets (Base64HighEntropyString, --base64-limit, default
// 4.5) and of truffleHog's entropy check. It catches what the run measure
// of shape.random misses in a long value with words in it
// (wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY: 4.66 bits), while names of
// code stay below (AbstractAuthenticationTokenProviderFactoryBean: 4.07,
// HTTPBasicAuthHandlerWithPasswordMgr: 4.32).
func dense(v []byte) bool {
	if len(v) < 24 || len(v) > assignValueMax {
		return false
	}
	var n [256]uint16
	var lower, upper bool
	for _, c := range v {
		switch {
		case setBlank[c]:
			return false
		case isLower(c):
			lower = true
		case isUpper(c):
			upper = true
		}
		n[c]++
	}
	if !lower || !upper {
		return false
	}
	h, l := 0.0, float64(len(v))
	for _, k := range n {
		if k > 0 {
			p := float64(k) / l
			h -= p * math.Log2(p)
		}
	}
	return h >= 4.5 && h >= 0.85*math.Log2(l)
}

// bracedAt reports whether the token at w[i] is an encrypted secret in
// braces (see bracedSecret) rather than an object that opens there; More
// when w ends before the token does.
func bracedAt(w []byte, i int, final bool) scan.Lex {
	j := scan.Skip(w, i, setToken, assignValueMax+1)
	if j == len(w) && !final && j-i <= assignValueMax {
		return scan.More
	}
	if bracedSecret(bytes.TrimRight(w[i:j], ",;")) {
		return scan.Yes
	}
	return scan.No
}

// isQuote reports whether c is a quote: " ' or `.
func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// quoteInValue reports whether a quote inside a bare value is part of it,
// given the byte after it (next): a letter or digit follows it (ab"cd1,
// p'ss1 in an env dump). Otherwise it closes the string the assignment
// was in ("password=X", 'token=X',).
func quoteInValue(next byte) bool { return setAlnum[next] }

// word reports whether v is a word of prose: letters, and an apostrophe
// between letters (backup's, don't), which a bare value now holds (see
// quoteInValue).
func word(v []byte) bool {
	for k, c := range v {
		if !setLetter[c] && !(c == '\'' && k > 0 && k+1 < len(v)) {
			return false
		}
	}
	return len(v) > 0
}

// commonBigrams are the letter pairs that make 97 % of the pairs in the
// words of English text (counted over the licence texts of Debian's
// /usr/share/common-licenses: 187,032 pairs, 377 kinds; these 206 cover
// 97 % of them). A word, a name of code or a phrase glued into one
// (correcthorsebatterystaple: 2 of 24 pairs are not among them,
// AbstractAuthenticationTokenProviderFactoryBean: 5 of 45) is mostly made
// of them; random letters mostly are not (about 70 % of their pairs).
const commonBigrams = "abacadagaiakalamanaparasatauavaybabebiblbobrbubycacccechciclco" +
	"ctcudadddedidodueaecedeeefegeielemenepeqeresetevexeyfafefffifofrftfufygageghgig" +
	"ngrhahehihohtiaibicidieifigiliminioipirisitivkelaldlelilllolslulymambmemimmmomp" +
	"msmunancndnengninonsntnunvnyobocodofogolomonoporosotouovowpapepiplpoppprptpupyqu" +
	"rarcrdrerirkrmrorrrsrtrysascseshsisospssstsutatethtitltotrtstttwtyuaubucuduiulum" +
	"unurusutvaveviwawewhwiwoxtyiyoyr"

var commonBigram = func() (t [26][26]bool) {
	for i := 0; i+1 < len(commonBigrams); i += 2 {
		t[commonBigrams[i]-'a'][commonBigrams[i+1]-'a'] = true
	}
	return t
}()

// randomLetters reports whether v, letters only, reads as random letters
// rather than words (issue 27: password=XiHdpVCSUQJJyh and token=V for 16
// random lower-case letters were shown, as the run measure of shape.random
// needs two classes of bytes or 16 bytes): 10 letters or more in mixed
// case, 12 or more in one case, and at least 40 % of its letter pairs (in
// lower case) not among commonBigrams. Random letters have about 70 % such
// pairs (fewer than 40 % in about 3 of 100 draws of 14 letters), words and
// names of code 0 to 30 %.
func randomLetters(v []byte) bool {
	var lower, upper bool
	for _, c := range v {
		switch {
		case isLower(c):
			lower = true
		case isUpper(c):
			upper = true
		default:
			return false
		}
	}
	if len(v) < 10 || len(v) < 12 && !(lower && upper) {
		return false
	}
	rare := 0
	for i := 0; i+1 < len(v); i++ {
		if !commonBigram[scan.Lower(v[i])-'a'][scan.Lower(v[i+1])-'a'] {
			rare++
		}
	}
	return 5*rare >= 2*(len(v)-1)
}
