//go:build !linux

package store

// mapSlab returns nil: without transparent huge pages a slab of its own
// saves nothing, and chunks come from the Go heap.
func mapSlab(n int) []byte { return nil }

// unmapSlab is never called with a slab here.
func unmapSlab(b []byte) {}
