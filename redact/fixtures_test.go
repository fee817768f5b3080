package redact

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/capwrap/capwrap/redact/internal/match"
)

var update = flag.Bool("update", false, "rewrite internal/match/testdata/keywords from the policies")

// TestMatchFixtures: the keyword sets that internal/match's tests run on
// (its testdata/keywords: the catalogue's, and the fuzz policy's with its
// short values and the line start of its patterns) are this package's as
// they are now. The matcher's tests cannot import the policy (it imports
// the matcher), so they read them from there; after a change to the
// catalogue, run go test ./redact -run TestMatchFixtures -update.
func TestMatchFixtures(t *testing.T) {
	for name, p := range map[string]*Policy{"catalogue": mustPolicy(t, Options{}), "fuzz": fuzzPolicy()} {
		var b strings.Builder
		fmt.Fprintf(&b, "# The keywords of redact's %s policy, in order, one a line: e (exact) or i\n", name)
		fmt.Fprintf(&b, "# (any ASCII case), a (no span starts before the keyword's end) or -, and the\n")
		fmt.Fprintf(&b, "# keyword, Go-quoted. Written by go test ./redact -run TestMatchFixtures -update.\n")
		for _, k := range p.kws {
			exact, after := "i", "-"
			if k.Exact {
				exact = "e"
			}
			if a, ok := k.Det.(match.AfterKeyword); ok && a.AfterKeyword() {
				after = "a"
			}
			fmt.Fprintf(&b, "%s %s %s\n", exact, after, strconv.Quote(string(k.Text)))
		}
		path := filepath.Join("internal", "match", "testdata", "keywords", name+".txt")
		if *update {
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != b.String() {
			t.Errorf("%s is not the %s policy's keywords (%v): run go test ./redact -run TestMatchFixtures -update", path, name, err)
		}
	}
}
