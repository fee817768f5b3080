//go:build !linux

package main

// hangfsMain exists on Linux only, where the hung-disk tests mount a FUSE
// file system (hangfs_test.go); elsewhere the helper refuses.
func hangfsMain([]string) int { return 2 }
