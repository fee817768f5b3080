package store

import "golang.org/x/sys/unix"

// renameExcl renames old to new inside the directory dirfd and fails with
// EEXIST when new exists: renameat2(2) with RENAME_NOREPLACE. A file system
// without it says EINVAL or ENOTSUP; renameNoReplace then falls back.
func renameExcl(dirfd int, oldname, newname string) error {
	return unix.Renameat2(dirfd, oldname, dirfd, newname, unix.RENAME_NOREPLACE)
}
