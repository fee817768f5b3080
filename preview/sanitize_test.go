package preview

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain", "hello world 123456\n", "hello world 123456\n"},
		{"tabs kept", "a\tb\n\tc", "a\tb\n\tc"},
		{"utf8 kept", "héllo €𝄞 日本\n", "héllo €𝄞 日本\n"},
		{"sgr colour", "\x1b[31mred\x1b[0m \x1b[1;38;5;208mbold\x1b[m\n", "red bold\n"},
		{"cursor movement", "a\x1b[2Kb\x1b[1A\x1b[10;20Hc\x1b[?25l\n", "abc\n"},
		{"osc title bel", "\x1b]0;my title\x07text\n", "text\n"},
		{"osc title st", "\x1b]2;title\x1b\\text\n", "text\n"},
		{"osc hyperlink", "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},
		{"dcs", "\x1bPq#0;2;0;0;0\x1b\\x", "x"},
		{"charset and keypad", "\x1b(Ba\x1b=b\x1b7c\x1b8\n", "abc\n"},
		{"unterminated csi at end", "ab\x1b[31", "ab"},
		{"malformed csi ends at newline", "a\x1b[12\nb", "a\nb"},
		{"lone esc", "a\x1b\x01b", `a\x1b\x01b`},
		{"esc at end", "a\x1b", `a\x1b`},
		{"progress bar", "10%\r50%\r100%\n", "100%\n"},
		{"progress bar leading cr", "\r10%\r50%\r100%\ndone\n", "100%\ndone\n"},
		{"progress then crlf", "10%\r100%\r\n", "100%\n"},
		{"crlf is a line end", "a\r\nb\r\n", "a\nb\n"},
		{"trailing cr keeps last frame", "abc\r", "abc"},
		{"empty frames ignored", "abc\r\r\n", "abc\n"},
		{"erase line then frame", "working\r\x1b[Kdone\n", "done\n"},
		{"partial frame at end", "10%\r5", "5"},
		{"nul", "a\x00b\n", `a\x00b` + "\n"},
		{"bel", "ding\x07\n", `ding\x07` + "\n"},
		{"backspace del formfeed", "a\bb\x7fc\fd", `a\x08b\x7fc\x0cd`},
		{"c1 control", "a\u0085b\u009bc", `a\u0085b\u009bc`},
		{"invalid utf8", "a\xffb\xc3(c\n", "a\uFFFDb\uFFFD(c\n"},
		{"truncated utf8 at end", "ab\xe2\x82", "ab\uFFFD\uFFFD"},
		{"encoded replacement char kept", "\uFFFD", "\uFFFD"},
		{"long osc is shown", "\x1b]" + strings.Repeat("x", maxString) + "\n", strings.Repeat("x", maxString) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(Sanitize([]byte(tt.in)))
			if got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			checkDisplay(t, got)
			// The meter agrees with the renderer.
			var m meter
			for q := 0; q < len(tt.in); {
				k, n := nextUnit([]byte(tt.in[q:]), true)
				m.add(k, n)
				q += n
			}
			if m.bytes() != len(got) || m.chars() != utf8.RuneCountInString(got) {
				t.Errorf("meter = %d chars %d bytes, display has %d, %d", m.chars(), m.bytes(), utf8.RuneCountInString(got), len(got))
			}
		})
	}
}

// checkDisplay fails unless s is display text: valid UTF-8 with no control
// byte but '\n' and '\t'.
func checkDisplay(t testing.TB, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("display is not valid UTF-8: %q", s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			t.Errorf("display has control byte %#x at %d: %q", c, i, s)
			return
		}
	}
}

// TestNextUnitCutIndependence checks the property render and the cuts rely
// on: a unit that ends before the end of its input is the same unit when the
// input is cut right after it, and undecided units are never shorter.
func TestNextUnitCutIndependence(t *testing.T) {
	inputs := []string{
		"\x1b[31mx\x1b[12\ny\x1b]0;t\x07z\x1b]0;t\x1bxq\x1b(B\x1b ~\r\n\r\rx\xe2\x82\xac\xe2\x82q",
		"\x1b]" + strings.Repeat("y", maxString+5),
		"\x1b[" + strings.Repeat("1;", maxCSI),
		"\x1b" + strings.Repeat(" ", maxEscSeq+2) + "x",
	}
	for _, in := range inputs {
		p := []byte(in)
		for q := 0; q < len(p); {
			k, n := nextUnit(p[q:], true)
			if q+n < len(p) {
				k2, n2 := nextUnit(p[q:q+n], true)
				if k2 != k || n2 != n {
					t.Errorf("unit at %d of %q: %v,%d whole vs %v,%d cut", q, in, k, n, k2, n2)
				}
			}
			for end := q + 1; end < len(p); end++ {
				k3, n3 := nextUnit(p[q:end], false)
				if n3 != 0 && (k3 != k || n3 != n) {
					t.Errorf("unit at %d of %q cut at %d without eof: %v,%d want %v,%d", q, in, end, k3, n3, k, n)
				}
			}
			q += n
		}
	}
}
