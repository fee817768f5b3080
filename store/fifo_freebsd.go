package store

import "golang.org/x/sys/unix"

// mkfifoAt makes a FIFO name, mode perm, in the directory dirfd:
// mknodat(2) with S_IFIFO, which x/sys/unix offers on FreeBSD where it has
// no mkfifoat.
func mkfifoAt(dirfd int, dirPath, name string, perm uint32) error {
	return unix.Mknodat(dirfd, name, unix.S_IFIFO|perm, 0)
}
