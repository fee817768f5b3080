package store

import "golang.org/x/sys/unix"

// mkfifoAt makes a FIFO name, mode perm, in the directory dirfd (dirPath
// names the same directory, for systems without mkfifoat).
func mkfifoAt(dirfd int, dirPath, name string, perm uint32) error {
	return unix.Mkfifoat(dirfd, name, perm)
}
