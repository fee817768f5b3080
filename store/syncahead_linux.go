package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing bytes [off, off+n) of f to
// the disk, without waiting for it (sync_file_range SYNC_FILE_RANGE_WRITE);
// a failure is ignored: Finalize's fsync writes them anyway.
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}
