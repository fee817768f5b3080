package store

// PruneAdvice is a `capwrap prune --keep-last N` that would free space
// (issue 26: a remedy that works now, computed from the captures on
// disk, not a fixed `--older-than 7d` that frees nothing when every
// capture is minutes old).
type PruneAdvice struct {
	// KeepLast is N: prune keeps the N newest captures that are not
	// running and removes the other ones.
	KeepLast int
	// Frees is the bytes of stream files it removes, as prune counts
	// them.
	Frees int64
	// Removes is the number of captures it removes.
	Removes int
}

// AdvisePrune returns the `prune --keep-last N` with the largest N that
// frees at least need bytes, counting the capture current (the run that
// asks, about to end) among the finished ones and never among those
// removed. ok is false when even removing every other finished capture
// frees less than need, or nothing; a running capture is never counted
// (prune does not touch one). need is in bytes; need <= 0 asks for the
// smallest prune that frees anything.
func (d *Dir) AdvisePrune(need int64, current string) (PruneAdvice, bool) {
	entries, err := d.List()
	if err != nil {
		return PruneAdvice{}, false
	}
	var done []Entry // newest first, as prune --keep-last orders them
	for _, e := range entries {
		if !e.Running || e.ID == current {
			done = append(done, e)
		}
	}
	// Removing done[k:] frees suffix[k]; the largest k with enough wins.
	minKeep := 0 // and never the capture that asks
	for i, e := range done {
		if e.ID == current {
			minKeep = i + 1
		}
	}
	need = max(need, 1)
	var freed int64
	for k := len(done) - 1; k >= minKeep; k-- {
		freed += done[k].Stdout.Size + done[k].Stderr.Size
		if freed >= need {
			return PruneAdvice{KeepLast: k, Frees: freed, Removes: len(done) - k}, true
		}
	}
	return PruneAdvice{}, false
}
