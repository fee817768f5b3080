package store

import "golang.org/x/sys/unix"

// renameExcl renames old to new inside the directory dirfd and fails with
// EEXIST when new exists: renameatx_np(2) with RENAME_EXCL, the macOS
// spelling of Linux's RENAME_NOREPLACE.
func renameExcl(dirfd int, oldname, newname string) error {
	return unix.RenameatxNp(dirfd, oldname, dirfd, newname, unix.RENAME_EXCL)
}
