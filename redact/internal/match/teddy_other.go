//go:build !amd64 || purego

package match

// haveTeddy is false where there is no vector implementation of teddyMasks
// (and in a purego build, which leaves the assembly out).
func haveTeddy() bool { return false }

// teddyMasks is never called without a vector implementation.
func teddyMasks(t *teddyTables, b []byte, masks []uint32) (n int) { return 0 }
