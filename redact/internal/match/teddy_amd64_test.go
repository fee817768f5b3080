//go:build !purego

package match

import "testing"

// checkTeddyMasks holds each vector kernel this CPU has to teddyBlock, their
// portable statement, on b: teddyMasks256, teddyMasks512 where there is
// AVX-512, and teddyMasks, which runs the faster one and teddyMasks256 for
// the last blocks; the same masks and the documented number of blocks.
func checkTeddyMasks(t *testing.T, tt *teddyTables, b []byte, room int) {
	t.Helper()
	// blocks is how many masks a kernel stores that needs need bytes for a
	// step of step masks.
	blocks := func(need, step int) int {
		if len(b) < need {
			return 0
		}
		return min(room/step, (len(b)-need)/(32*step)+1) * step
	}
	check := func(name string, kernel func(*teddyTables, []byte, []uint32) int, want int) {
		t.Helper()
		masks := make([]uint32, room)
		n := kernel(tt, b, masks)
		if n != want {
			t.Fatalf("%s: len %d, room %d: %d blocks judged, want %d", name, len(b), room, n, want)
		}
		for k := 0; k < n; k++ {
			if got, want := masks[k], teddyBlock(tt, b, 32*k); got != want {
				t.Fatalf("%s: len %d block %d: mask %032b, portable %032b", name, len(b), k, got, want)
			}
		}
	}
	check("teddyMasks", teddyMasks, blocks(32+teddyLen-1, 1))
	check("teddyMasks256", teddyMasks256, blocks(32+teddyLen-1, 1))
	if haveTeddy512() {
		check("teddyMasks512", teddyMasks512, blocks(64+teddyLen-1, 2))
	}
}
