package scan

import "testing"

func TestNewSet(t *testing.T) {
	s := NewSet("a-c_-")
	for c := 0; c < 256; c++ {
		want := c == 'a' || c == 'b' || c == 'c' || c == '_' || c == '-'
		if s[c] != want {
			t.Errorf("NewSet(\"a-c_-\")[%q] = %v", byte(c), s[c])
		}
	}
	if u := NewSet("a").Union(NewSet("b")).Not(); u['a'] || u['b'] || !u['c'] {
		t.Error("Union or Not wrong")
	}
}

func TestSkip(t *testing.T) {
	digits := NewSet("0-9")
	for _, c := range []struct {
		w      string
		i, max int
		want   int
	}{
		{"123ab", 0, 10, 3},
		{"123ab", 0, 2, 2},  // at most i+max
		{"12345", 1, 10, 5}, // w ends first
		{"ab", 0, 10, 0},
	} {
		if got := Skip([]byte(c.w), c.i, digits, c.max); got != c.want {
			t.Errorf("Skip(%q, %d, digits, %d) = %d, want %d", c.w, c.i, c.max, got, c.want)
		}
	}
}

// TestLexemesOnCutWindows: a window that ends inside a lexeme is More,
// never No, so that a detector waits rather than decides wrong.
func TestLexemesOnCutWindows(t *testing.T) {
	for _, c := range []struct {
		w    string
		s    string
		want Lex
	}{
		{"&QUOT;x", "&quot;", Yes},
		{"&quo", "&quot;", More},
		{"&qux", "&quot;", No},
		{"", "a", More},
	} {
		if got := HasAt([]byte(c.w), 0, c.s, true); got != c.want {
			t.Errorf("HasAt(%q, %q) = %d, want %d", c.w, c.s, got, c.want)
		}
	}
	for _, c := range []struct {
		w    string
		want Quote
		st   Lex
	}{
		{`"x`, Quote{N: 1, Q: '"'}, Yes},
		{"`x", Quote{N: 1, Q: '`'}, Yes},
		{`\\\"x`, Quote{N: 4, Q: '"', Esc: 3}, Yes},
		{`\\\`, Quote{}, More},
		{`\u0022x`, Quote{N: 6, Q: '"', Named: `\u0022`}, Yes},
		{`\u00`, Quote{}, More},
		{`&quot;`, Quote{N: 6, Q: '"', Named: "&quot;"}, Yes},
		{`&q`, Quote{}, More},
		{``, Quote{}, More},
		{`x"`, Quote{}, No},
		{`\n`, Quote{}, No},
	} {
		got, st := QuoteAt([]byte(c.w), 0)
		if got != c.want || st != c.st {
			t.Errorf("QuoteAt(%q) = %+v, %d; want %+v, %d", c.w, got, st, c.want, c.st)
		}
	}
}
