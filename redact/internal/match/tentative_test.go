package match

import (
	"bytes"
	"testing"
)

// TestTentative: Writer.Tentative offers the held bytes only when they are
// the beginning of a keyword whose text is public and nothing else is
// pending; never a value waiting for its detector, the beginning of a
// literal secret or of a remembered value, nor anything after Close.
func TestTentative(t *testing.T) {
	kws := []Keyword{
		{Text: []byte("ghp_"), Exact: true, Det: tokenDet{}},       // public: a token's prefix
		{Text: []byte("token="), Exact: true, Det: tokenDet{}},     // public: the value follows it
		{Text: []byte("ghx-literal-secret"), Exact: true, Kind: 0}, // a literal secret
		{Text: []byte("PASSWORD"), Exact: false, Det: tokenDet{}},  // case-insensitive
	}
	markers := [][]byte{[]byte("[secret]")}
	for _, tc := range []struct {
		name   string
		writes []string
		close  bool
		want   string // "" for nil
		out    string // written so far
	}{
		{"nothing held", []string{"plain x."}, false, "", "plain x."},
		{"a token's prefix", []string{"see g", "hp"}, false, "ghp", "see "},
		{"a keyword typed a byte at a time", []string{"e", "c", "h", "o", " ", "p", "a"}, false, "pa", "echo "},
		{"case-insensitive keyword", []string{"x PASS"}, false, "PASS", "x "},
		{"a literal secret's beginning", []string{"x ghx-li"}, false, "", "x "},
		{"both a public and a literal secret's beginning", []string{"x gh"}, false, "", "x "},
		{"a value waiting for its detector", []string{"token=ab"}, false, "", "token="},
		{"a complete keyword, its value not begun", []string{"x token="}, false, "token=", "x "},
		{"a remembered value's beginning", []string{"token=s3cr3tvalue1\n", "x s3c"}, false, "", "token=[secret]\nx "},
		{"after close", []string{"see gh"}, true, "", "see gh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			w := NewWriter(New(kws, markers, nil), &out, func(v []byte) []byte { return v }, nil, nil)
			for _, s := range tc.writes {
				if _, err := w.Write([]byte(s)); err != nil {
					t.Fatal(err)
				}
			}
			if tc.close {
				w.Close()
			}
			if got := string(w.Tentative()); got != tc.want {
				t.Errorf("Tentative() = %q, want %q", got, tc.want)
			}
			if out.String() != tc.out {
				t.Errorf("written %q, want %q", out.String(), tc.out)
			}
		})
	}
}
