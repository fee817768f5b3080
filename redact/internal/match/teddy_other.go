//go:build !amd64

package match

// haveTeddy is false where there is no vector implementation of teddyMasks.
var haveTeddy = false

// teddyMasks is never called without a vector implementation.
func teddyMasks(t *teddyTables, b []byte, masks []uint32) (n int) { return 0 }
