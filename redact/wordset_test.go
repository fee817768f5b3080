package redact

import (
	"bytes"
	"strings"
	"testing"

	"github.com/capwrap/capwrap/redact/internal/testlog"
)

// TestWordSetFilter: lastWordIn, with its filter of lengths and first and
// last bytes, answers as a plain lookup of lastWord in the map: for every
// word of each set, in names of every case and shape, and for the names of
// a log (which the filter mostly turns away).
func TestWordSetFilter(t *testing.T) {
	sets := map[string]*wordSet{
		"nonSecretWords":     nonSecretWordSet(),
		"dottedConfigWords":  dottedConfigWordSet(),
		"nonSecretPrefix":    nonSecretPrefixSet(),
		"notSecretKeyPrefix": notSecretKeyPrefixSet(),
	}
	var names []string
	for _, s := range sets {
		for w := range s.m {
			names = append(names, w, strings.ToUpper(w), "db_"+w, "DB_"+strings.ToUpper(w)+"_", "my."+w, "x-"+w+"-",
				"api"+strings.ToUpper(w[:1])+w[1:], w+"2", w+"s", w[1:], w[:len(w)-1], "a"+w, w+"z")
		}
	}
	for _, f := range bytes.FieldsFunc(testlog.Make(64<<10, 10), func(r rune) bool { return !setName[byte(r)] }) {
		names = append(names, string(f))
	}
	names = append(names, "", "_", "9", strings.Repeat("a", 30), "x_"+strings.Repeat("url", 9))
	for setName, s := range sets {
		hits := 0
		for _, n := range names {
			want := s.m[lastWord([]byte(n))]
			if got := lastWordIn(s, []byte(n)); got != want {
				t.Errorf("%s: lastWordIn(%q) = %v, want %v (last word %q)", setName, n, got, want, lastWord([]byte(n)))
			}
			if want {
				hits++
			}
		}
		if hits < len(s.m) {
			t.Errorf("%s: %d names found, want at least the set's %d words", setName, hits, len(s.m))
		}
	}
}
