package match

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestDirectAt: the direct check finds at a position exactly the keywords
// that begin there and end within the input: a case-insensitive one in
// any case of its letters (and only of its letters: "-" is not "\r", whose
// byte differs by 0x20 too), an exact one in its own case, one of eight,
// nine or seventeen bytes (the comparison of each further word), one of
// three bytes, one of one, several sharing their first four bytes, with
// eight bytes or more after the position and with fewer (the end of the
// input).
func TestDirectAt(t *testing.T) {
	texts := []string{"secret", "secret_", "secretaccesskey", "token", "a-b=", "AKIA", "Passwd=", "password", "passphrase", "aws_secret_access_key", "eyJ", "\n"}
	exact := map[string]bool{"AKIA": true, "eyJ": true, "\n": true}
	kws := make([][]byte, len(texts))
	ex := make([]bool, len(texts))
	for i, k := range texts {
		kws[i], ex[i] = []byte(k), exact[k]
	}
	d := newDirect(kws, ex)
	for _, tc := range []struct {
		in   string
		p    int
		want []string // the keywords found at p, in the order of texts
	}{
		{"x secret_key = 1", 2, []string{"secret", "secret_"}},
		{"x SeCrEt_key = 1", 2, []string{"secret", "secret_"}},
		{"x SECRETACCESSKEY=abc", 2, []string{"secret", "secretaccesskey"}},
		{"x secretaccesske", 2, []string{"secret"}}, // runs past the end
		{"x secret", 2, []string{"secret"}},         // ends at the end, fewer than eight bytes on
		{"x secre", 2, nil},
		{"x secrets", 2, []string{"secret"}},
		{"x sEcReT", 2, []string{"secret"}},
		{"tokenizer", 0, []string{"token"}},
		{"TOKEN", 0, []string{"token"}},
		{"tokem xxxxx", 0, nil},
		{"A-B= and more", 0, []string{"a-b="}},
		{"a\rb= and more", 0, nil},
		{"A\rB= and more", 0, nil},
		{"AKIAQ7ZPLXW3RTYU4BNM", 0, []string{"AKIA"}},
		{"akiaq7zplxw3rtyu4bnm", 0, nil},
		{"Akia", 0, nil},
		{"AKIA", 0, []string{"AKIA"}},
		{"PASSWD=hunter2", 0, []string{"Passwd="}},
		{"PassWord: x", 0, []string{"password"}},
		{"passed the test", 0, nil},
		{"PASSPHRASE=x", 0, []string{"passphrase"}},
		{"passphrasE", 0, []string{"passphrase"}},
		{"passphrasx and more", 0, nil},
		{"AWS_SECRET_ACCESS_KEY=abc", 0, []string{"aws_secret_access_key"}},
		{"aws_secret_access_kez=abc", 0, nil},
		{"aws_secret_accesx_key=abc", 0, nil},
		{"aws_secret_access_key", 0, []string{"aws_secret_access_key"}},
		{"aws_secret_access_ke", 0, nil},
		{"eyJhbGciOiJIUzI1NiJ9", 0, []string{"eyJ"}},
		{"EYJhbGciOiJIUzI1NiJ9", 0, nil},
		{"eyj", 0, nil},
		{"eyJ", 0, []string{"eyJ"}},
		{"\nfoo bar baz", 0, []string{"\n"}},
		{"x\n", 1, []string{"\n"}},
	} {
		var got []string
		for _, h := range d.at([]byte(tc.in), tc.p, nil) {
			if h.start != int32(tc.p) || int(h.end-h.start) != len(texts[h.kw]) {
				t.Fatalf("%q at %d: hit %+v for %q", tc.in, tc.p, h, texts[h.kw])
			}
			got = append(got, texts[h.kw])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q at %d: found %q, want %q", tc.in, tc.p, got, tc.want)
		}
	}
}

// TestDirectKeep: keep lets through every position where a keyword of
// three bytes or more begins, in any case it matches, and rejects one
// whose first four bytes, or fifth byte, or first three, no keyword has
// (a slot that several keys share lets through what one of them may
// begin); the keywords of the catalogue, at every offset of a 64-bit mask.
func TestDirectKeep(t *testing.T) {
	set := loadKeywords("catalogue")
	d := newDirect(set.texts, set.exact)
	pad := strings.Repeat(" ", 72)
	for ki, k := range set.texts {
		if len(k) < 3 {
			continue
		}
		for _, c := range []string{string(k), strings.ToUpper(string(k)), strings.ToLower(string(k))} {
			if set.exact[ki] && c != string(k) {
				continue
			}
			for at := 0; at < 64; at += 7 {
				b := []byte(pad[:at] + c + pad)
				if got := d.keep(b, 0, []uint32{uint32(uint64(1) << at), uint32(uint64(1) << at >> 32)}, nil); !slices.Equal(got, []int32{int32(at)}) {
					t.Fatalf("keyword %q as %q at %d: keep gives %v", k, c, at, got)
				}
			}
		}
	}
	for _, no := range []string{"PASSED  ", "passed  ", "tests/te", "   12345", "compute("} {
		b := []byte(no + pad)
		if got := d.keep(b, 0, []uint32{1, 0}, nil); len(got) != 0 {
			t.Errorf("%q: keep lets it through", no)
		}
	}
	b := []byte(fmt.Sprintf("%-80s", "x token=1 PASSED password: y"))
	got := d.keep(b, 0, []uint32{^uint32(0), ^uint32(0)}, nil)
	if !slices.Equal(got, []int32{2, 17}) {
		t.Errorf("keep over a whole mask gives %v, want [2 17]", got)
	}
}
