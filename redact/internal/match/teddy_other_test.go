//go:build !amd64 || purego

package match

import "testing"

// checkTeddyMasks is never called where there is no vector kernel
// (haveTeddy is false, and its callers check it first).
func checkTeddyMasks(t *testing.T, tt *teddyTables, b []byte, room int) {
	t.Fatal("checkTeddyMasks called without a vector kernel")
}
