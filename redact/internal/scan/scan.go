// Package scan holds the primitives for reading a window of bytes that may
// end too early to decide: byte sets and the runs they span, and readers of
// lexemes (a literal, a quote) that answer yes, no, or "more bytes needed"
// when the window ends inside one. The redactor's detectors are written in
// them, and the matcher's open-ended spans grow over a ByteSet.
//
// It knows nothing of secrets, keywords or streams: a window is a []byte,
// and whether it may still grow is the caller's to say.
package scan

// ByteSet is a set of byte values.
type ByteSet [256]bool

// NewSet builds a set from a spec of single bytes and ranges "a-z"; a '-'
// that is first or last stands for itself.
func NewSet(spec string) *ByteSet {
	s := new(ByteSet)
	for i := 0; i < len(spec); i++ {
		if i+2 < len(spec) && spec[i+1] == '-' {
			for c := int(spec[i]); c <= int(spec[i+2]); c++ {
				s[c] = true
			}
			i += 2
			continue
		}
		s[spec[i]] = true
	}
	return s
}

// Not returns the complement of s.
func (s *ByteSet) Not() *ByteSet {
	t := new(ByteSet)
	for i := range s {
		t[i] = !s[i]
	}
	return t
}

// Union returns a set holding the bytes of s and t.
func (s *ByteSet) Union(t *ByteSet) *ByteSet {
	u := new(ByteSet)
	for i := range s {
		u[i] = s[i] || t[i]
	}
	return u
}

// Skip returns the first index at or after i, at most i+max, whose byte is
// not in set (len(w) when w ends first).
func Skip(w []byte, i int, set *ByteSet, max int) int {
	lim := min(len(w), i+max)
	for i < lim && set[w[i]] {
		i++
	}
	return i
}

// Wait is a detector's answer when its window w ended before a decision:
// pending, with spans no earlier than from; or, when w is final (it will
// not grow), no secret.
func Wait(final bool, from int) (pending bool, at int) {
	return !final, from
}

// Lex is the answer of a lexeme reader: found, not there, or the window
// ended inside a prefix of one.
type Lex int8

const (
	No Lex = iota
	Yes
	More
)

// LexMax is the longest lexeme QuoteAt reads (a quote after its
// backslashes), in bytes; callers reading a separator after a quote count
// on it too.
const LexMax = 8

// Lower maps ASCII upper case to lower case and leaves every other byte
// alone.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// HasAt reports whether w[i:] starts with s, folding ASCII case of w's bytes
// if fold (s must then be lower case): More when w ends inside a prefix of s.
func HasAt(w []byte, i int, s string, fold bool) Lex {
	for k := 0; k < len(s); k++ {
		if i+k == len(w) {
			return More
		}
		c := w[i+k]
		if fold {
			c = Lower(c)
		}
		if c != s[k] {
			return No
		}
	}
	return Yes
}

// Quote is a quote lexeme: a quote byte after Esc backslashes, or an escape
// that stands for a double quote (\u0022, &quot;).
type Quote struct {
	N     int    // length of the lexeme in bytes, 0: none
	Q     byte   // the quote byte
	Esc   int    // backslashes before it
	Named string // "\\u0022" or "&quot;": the lexeme itself closes
}

// QuoteAt reads a quote lexeme at w[i]: a quote (" ' `), one after up to
// LexMax-1 backslashes (\" \\\"), \u0022 or &quot; in any case.
func QuoteAt(w []byte, i int) (Quote, Lex) {
	if i == len(w) {
		return Quote{}, More
	}
	switch c := w[i]; c {
	case '"', '\'', '`':
		return Quote{N: 1, Q: c}, Yes
	case '\\':
		j := i
		for j < len(w) && w[j] == '\\' && j-i < LexMax-1 {
			j++
		}
		if j == len(w) {
			return Quote{}, More
		}
		if w[j] == '"' || w[j] == '\'' {
			return Quote{N: j - i + 1, Q: w[j], Esc: j - i}, Yes
		}
		if j == i+1 {
			switch HasAt(w, i, `\u0022`, true) {
			case Yes:
				return Quote{N: 6, Q: '"', Named: `\u0022`}, Yes
			case More:
				return Quote{}, More
			}
		}
	case '&':
		switch HasAt(w, i, "&quot;", true) {
		case Yes:
			return Quote{N: 6, Q: '"', Named: "&quot;"}, Yes
		case More:
			return Quote{}, More
		}
	}
	return Quote{}, No
}
