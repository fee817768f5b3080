package match

import (
	"bytes"
	"strings"
	"testing"
)

// TestLiterals: exact keywords without a Detector (literal.go), short and
// long, one longer than MaxLiteral, are found wherever they occur whole,
// whatever the writes, with the same output as one write; bytes that may
// begin one are held back only until they are decided; and the holdback
// counts at most MaxLiteral bytes of a literal.
func TestLiterals(t *testing.T) {
	long := strings.Repeat("0123456789cdefgh", MaxLiteral/16+100) // MaxLiteral+1600 bytes, no "ab"
	kws := []Keyword{
		{Text: []byte("ab"), Exact: true, Kind: 0},
		{Text: []byte("s3cr3t!"), Exact: true, Kind: 1},
		{Text: []byte("s3cr3t!-longer-value"), Exact: true, Kind: 2},
		{Text: []byte(long), Exact: true, Kind: 3},
	}
	markers := [][]byte{[]byte("[A]"), []byte("[S]"), []byte("[L]"), []byte("[X]")}
	m := New(kws, markers, nil)
	if h := m.Holdback(); h != MaxLiteral {
		t.Errorf("Holdback() = %d, want %d", h, MaxLiteral)
	}
	for _, tc := range []struct{ in, want string }{
		{"xaby", "x[A]y"},
		{"aab", "a[A]"},
		{"a", "a"},
		{"s3cr3t", "s3cr3t"},
		{"s3cr3t!", "[S]"},
		{"x s3cr3t!-longer-value y", "x [S] y"}, // the shorter starts the run: one marker, its kind
		{"s3cr3t!-longer-valu", "[S]-longer-valu"},
		{"<" + long + ">", "<[X]>"},
		{long[:MaxLiteral] + "!", "[X]!"},                      // its first MaxLiteral bytes: masked
		{long[:MaxLiteral+7] + "!", "[X]!"},                    // and as far as it continues
		{long[:MaxLiteral-1] + "!", long[:MaxLiteral-1] + "!"}, // fewer: not
		{long + long[:MaxLiteral] + "ab", "[X]"},               // back to back, and "ab" touching: one run
	} {
		for _, size := range []int{0, 1, 3, 8, MaxLiteral - 1, MaxLiteral + 1} {
			if got := writeInPieces(m, tc.in, size); got != tc.want {
				t.Errorf("%.40q in writes of %d: got %.60q, want %.60q", tc.in, size, got, tc.want)
			}
		}
	}
	// Long literals alone (few heads: scanned for their rarest byte).
	few := New([]Keyword{kws[2], kws[3]}, markers, nil)
	for _, tc := range []struct{ in, want string }{
		{"x s3cr3t!-longer-value y", "x [L] y"},
		{"s3cr3t!-longer-valu", "s3cr3t!-longer-valu"},
		{"<" + long + ">" + long[:MaxLiteral+7] + "!", "<[X]>[X]!"},
	} {
		for _, size := range []int{0, 1, 5, MaxLiteral + 1} {
			if got := writeInPieces(few, tc.in, size); got != tc.want {
				t.Errorf("few heads: %.40q in writes of %d: got %.60q, want %.60q", tc.in, size, got, tc.want)
			}
		}
	}
	// A byte that cannot begin a literal is released at once; one that may
	// is held until the next write decides.
	var out bytes.Buffer
	w := NewWriter(m, &out, nil, nil, nil)
	w.Write([]byte("xyz"))
	if out.String() != "xyz" {
		t.Errorf("after xyz: written %q", out.String())
	}
	w.Write([]byte(" s3c"))
	if out.String() != "xyz " {
		t.Errorf("after s3c: written %q, want the beginning of a literal held", out.String())
	}
	w.Write([]byte("ret"))
	if out.String() != "xyz s3cret" {
		t.Errorf("after ret: written %q", out.String())
	}
}

// writeInPieces is what a Writer of m makes of in written size bytes at a
// time (all at once for size 0).
func writeInPieces(m *Matcher, in string, size int) string {
	var out bytes.Buffer
	w := NewWriter(m, &out, nil, nil, nil)
	for b := []byte(in); len(b) > 0; {
		n := len(b)
		if size > 0 {
			n = min(n, size)
		}
		w.Write(b[:n])
		b = b[n:]
	}
	w.Close()
	return out.String()
}
