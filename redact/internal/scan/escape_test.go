package scan

import (
	"strings"
	"testing"
)

// TestEscapeAt: the display escapes EscapeAt reads (ECMA-48 §5.3-5.6), and
// what it is not; every prefix of an escape is More.
func TestEscapeAt(t *testing.T) {
	for _, c := range []struct {
		in  string
		n   int
		lex Lex
	}{
		{"\x1b[0m", 4, Yes},
		{"\x1b[01;31mS", 8, Yes},
		{"\x1b[K", 3, Yes},
		{"\x1b[m", 3, Yes},
		{"\x1b[38;2;255;100;0mx", 17, Yes},
		{"\x1b[?25l", 6, Yes},
		{"\x1b[2 q", 5, Yes},                   // intermediate byte
		{"\x1b(B\x1b[m", 3, Yes},               // nF, tput sgr0
		{"\x1b]8;;https://x/\x1b\\v", 17, Yes}, // OSC ended by ST
		{"\x1b]0;title\x07", 10, Yes},          // OSC ended by BEL
		{"\x1bPq#0\x1b\\", 7, Yes},             // DCS
		{"\x1b7", 2, Yes},                      // Fp
		{"\x1bM", 2, Yes},                      // Fe
		{"\x1bc", 2, Yes},                      // Fs
		{"x\x1b[0m", 0, No},
		{"\x1b\n", 0, No},
		{"\x1b\x1b[0m", 0, No},
		{"\x1b[0\n", 0, No},
		{"\x1b[" + strings.Repeat("1;", 40) + "m", 0, No}, // over EscMax
		{"\x1b]0;t\x1bx", 0, No},
		{"\x1b]0;t\x18", 0, No},
		{"\x1b]" + strings.Repeat("u", EscStringMax) + "\x07", 0, No},
		{"", 0, No},
	} {
		n, lex := EscapeAt([]byte(c.in), 0)
		if n != c.n || lex != c.lex {
			t.Errorf("EscapeAt(%q) = %d, %v; want %d, %v", c.in, n, lex, c.n, c.lex)
		}
		if c.lex != Yes {
			continue
		}
		for k := 1; k < c.n; k++ {
			if n, lex := EscapeAt([]byte(c.in[:k]), 0); lex != More {
				t.Errorf("EscapeAt(%q) = %d, %v; want More", c.in[:k], n, lex)
			}
		}
	}
}
