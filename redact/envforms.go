package redact

import (
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// The forms of an environment or --redact-file value that other encoders
// than Go's encoding/json, net/url and encoding/base64 write (issue 27,
// SPEC §6 "common encodings of those values"): added to variants.

// uriComponentKeep are the bytes encodeURIComponent leaves unescaped
// besides RFC 3986's unreserved ones: ECMA-262 §19.2.6.5 (uriMark,
// "- _ . ! ~ * ' ( )"), also what Python's quote(v, safe="!*'()") prints.
const uriComponentKeep = "!*'()"

// xxdColumns is how many hex digits `xxd -p` writes per line (30 bytes;
// xxd(1): "-p ... plain hexdump style", 30 octets per line by default).
const xxdColumns = 60

// hexLinesMax is the longest value, in bytes, whose `xxd -p` lines are
// forms of their own (34 lines): a line is a literal of its own, and hex
// dumps of longer values (a PEM key) are rare enough not to pay for.
const hexLinesMax = 1024

// jsonStyle is one JSON encoder's string escaping (see jsonEncode).
type jsonStyle struct {
	hexBytes string // ASCII bytes written as \u00XX
	upper    bool   // the hex of hexBytes in upper case (PHP), else lower
	ascii    bool   // every non-ASCII character as \uXXXX (lower-case hex; surrogate pairs above U+FFFF)
	slash    bool   // "/" as "\/"
}

// jsonStyles are the escapings of the JSON encoders whose output is not
// Go's (json.Marshal's HTML-safe form and the SetEscapeHTML(false) one are
// in variants already):
//   - Python's json.dumps (ensure_ascii=True, the default: non-ASCII as
//     \uXXXX; docs.python.org/3/library/json.html#json.dumps);
//   - PHP's json_encode, by default "\/" and non-ASCII as \uXXXX, with
//     JSON_HEX_TAG|JSON_HEX_AMP|JSON_HEX_APOS|JSON_HEX_QUOT "<>&'\"" as
//     \u003C \u003E \u0026 \u0027 \u0022 (upper-case hex), with and without
//     JSON_UNESCAPED_SLASHES (php.net/manual/en/json.constants.php;
//     ext/json/json_encoder.c);
//   - Gson's HTML-safe default, "<>&='" as \u003c \u003e \u0026 \u003d
//     \u0027 (com.google.gson.stream.JsonWriter HTML_SAFE_REPLACEMENT_CHARS).
var jsonStyles = []jsonStyle{
	{ascii: true},
	{ascii: true, slash: true},
	{hexBytes: `<>&'"`, upper: true, ascii: true, slash: true},
	{hexBytes: `<>&'"`, upper: true, ascii: true},
	{hexBytes: `<>&='`},
}

// jsonSpecial holds the bytes that make some jsonStyle's form of a value
// differ from the value: without any of them, jsonForms adds nothing.
var jsonSpecial = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c < 0x20 || c >= 0x80 || strings.IndexByte(`"\/<>&='`, byte(c)) >= 0
	}
	return t
}()

// moreForms returns the forms of v (at least minVariant bytes) that
// variants adds to Go's: the encodeURIComponent spelling (upper- and
// lower-case hex), hex (lower and upper case, as xxd -p,
// Go's %x and Python's bytes.hex() print it, and lower-case hex wrapped
// at xxd -p's 60 columns, for values up to hexLinesMax bytes), and the JSON escapings of jsonStyles, each
// also escaped a second time (JSON in a JSON string). A value with no
// byte of jsonSpecial has 4 such forms (plus one per 60 hex digits past
// the first line); one with them up to 14 more.
//
// Not added, by decision: `\xHH` and `%HH` of every byte, and hex with
// separators (od, hexdump, xxd without -p): no common tool writes
// printable text so, and each would cost three or four times the value's
// size again.
func moreForms(v string) []string {
	out := make([]string, 0, 20)
	uri := percent(v, uriComponentKeep)
	out = append(out, uri, lowerHex(uri))
	h := hex.EncodeToString([]byte(v))
	out = append(out, h, strings.ToUpper(h))
	if len(v) <= hexLinesMax {
		out = append(out, wrapped(h, xxdColumns)...)
	}
	if !needsJSON(v) {
		return out
	}
	for _, st := range jsonStyles {
		f, ok := jsonEncode(v, st)
		if !ok || f == v {
			continue
		}
		out = append(out, f)
		if g, _ := jsonEncode(f, jsonStyle{}); g != f {
			out = append(out, g)
		}
	}
	return out
}

// needsJSON reports whether v holds a byte of jsonSpecial.
func needsJSON(v string) bool {
	for i := 0; i < len(v); i++ {
		if jsonSpecial[v[i]] {
			return true
		}
	}
	return false
}

// jsonEncode returns the contents of the JSON string that encodes v in
// style st (RFC 8259 §7: '"', '\\' and control characters escaped; \b \f
// \n \r \t by name, other controls as \u00xx), and false when st.ascii and
// v is not valid UTF-8 (such an encoder would not print it as is).
func jsonEncode(v string, st jsonStyle) (string, bool) {
	const lower, upper = "0123456789abcdef", "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(v) + len(v)/4 + 8)
	u := func(r rune, digits string) {
		b.WriteString(`\u`)
		b.WriteByte(digits[r>>12&15])
		b.WriteByte(digits[r>>8&15])
		b.WriteByte(digits[r>>4&15])
		b.WriteByte(digits[r&15])
	}
	for i := 0; i < len(v); {
		c := v[i]
		if c >= utf8.RuneSelf {
			if !st.ascii {
				b.WriteByte(c)
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(v[i:])
			if r == utf8.RuneError && n == 1 {
				return "", false
			}
			if r > 0xffff {
				r -= 0x10000
				u(0xd800+r>>10, lower)
				u(0xdc00+r&0x3ff, lower)
			} else {
				u(r, lower)
			}
			i += n
			continue
		}
		i++
		switch {
		case strings.IndexByte(st.hexBytes, c) >= 0:
			if st.upper {
				u(rune(c), upper)
			} else {
				u(rune(c), lower)
			}
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '/' && st.slash:
			b.WriteString(`\/`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			u(rune(c), lower)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}
