//go:build !linux

package store

import "os"

// startWriteback does nothing: there is no sync_file_range here, and
// Finalize's fsync writes everything.
func startWriteback(f *os.File, off, n int64) {}
