package store

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// mkfifoAt makes a FIFO name, mode perm, in the directory dirPath:
// golang.org/x/sys/unix has no mkfifoat on macOS, so the FIFO is made by
// path (the capture directory is capwrap's own, 0700), and OpenControl
// then opens it through the capture's os.Root and checks it is a FIFO.
func mkfifoAt(dirfd int, dirPath, name string, perm uint32) error {
	return unix.Mkfifo(filepath.Join(dirPath, name), perm)
}
