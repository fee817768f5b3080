package redact

import (
	"bytes"
	"testing"

	"github.com/capwrap/capwrap/redact/internal/testlog"
)

// scalarOnly returns a copy of p whose matcher never uses the vector
// prefilter, so the tests run the scalar path on machines that have the
// vector one.
func scalarOnly(p *Policy) *Policy {
	q := *p
	q.m = p.m.WithoutVector()
	return &q
}

// vectorReady waits until p's vector tables are built (they are built in
// the background, see internal/match's teddyLater), so that what follows
// runs the vector path from its first byte.
func vectorReady(p *Policy) { p.m.BuildVector() }

// TestVectorPathSameOutput: the redacted output of the catalogue and of
// the fuzz policy is the same with and without the vector prefilter.
// (internal/match holds the prefilter to its portable statement, and to
// finding every keyword occurrence the scalar path finds.)
func TestVectorPathSameOutput(t *testing.T) {
	log := testlog.Make(1<<20, 100)
	for name, p := range map[string]*Policy{"catalogue": mustPolicy(t, Options{}), "fuzz": fuzzPolicy()} {
		t.Run(name, func(t *testing.T) {
			vectorReady(p)
			got := redactChunks(t, p, log, []int{4096, 65536, 7})
			want := redactChunks(t, scalarOnly(p), log, []int{65536})
			if !bytes.Equal(got, want) {
				t.Fatal("vector and scalar paths differ")
			}
		})
	}
}
