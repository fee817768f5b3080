package store

import (
	"testing"
	"time"

	"github.com/capwrap/capwrap/receipt"
)

// TestAdvisePrune: the advised `prune --keep-last N` is the largest N
// that frees at least what is needed, counting the capture that asks as
// kept and a running one not at all; none when no prune frees enough.
func TestAdvisePrune(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	t0 := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	var ids []string
	for i, size := range []int{100, 200, 400} { // oldest first
		c, err := d.Create(t0.Add(time.Duration(i)*time.Minute), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		c.Stream(Stdout).Write(pattern(size))
		c.Finalize()
		c.Publish(&receipt.Receipt{Schema: receipt.Schema})
		ids = append(ids, c.ID())
	}
	running, err := d.Create(t0.Add(3*time.Minute), Limits{}) // never counted
	if err != nil {
		t.Fatal(err)
	}
	running.Stream(Stdout).Write(pattern(5000))
	running.Drain()
	defer running.Discard()
	current, err := d.Create(t0.Add(4*time.Minute), Limits{}) // the run that asks
	if err != nil {
		t.Fatal(err)
	}
	defer current.Discard()
	for _, tc := range []struct {
		need    int64
		current string
		want    PruneAdvice
		ok      bool
	}{
		{1, current.ID(), PruneAdvice{KeepLast: 3, Frees: 100, Removes: 1}, true},
		{100, current.ID(), PruneAdvice{KeepLast: 3, Frees: 100, Removes: 1}, true},
		{101, current.ID(), PruneAdvice{KeepLast: 2, Frees: 300, Removes: 2}, true},
		{700, current.ID(), PruneAdvice{KeepLast: 1, Frees: 700, Removes: 3}, true},
		{701, current.ID(), PruneAdvice{}, false},
		{0, current.ID(), PruneAdvice{KeepLast: 3, Frees: 100, Removes: 1}, true},
		// Asked for by an old capture: it is kept, so only the older ones go.
		{150, ids[1], PruneAdvice{}, false},
		{100, ids[1], PruneAdvice{KeepLast: 2, Frees: 100, Removes: 1}, true},
		// No capture asking: every finished one may go.
		{700, "", PruneAdvice{KeepLast: 0, Frees: 700, Removes: 3}, true},
	} {
		got, ok := d.AdvisePrune(tc.need, tc.current)
		if got != tc.want || ok != tc.ok {
			t.Errorf("AdvisePrune(%d, %s) = %+v, %v; want %+v, %v", tc.need, tc.current, got, ok, tc.want, tc.ok)
		}
	}
}
