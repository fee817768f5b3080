package store

import "golang.org/x/sys/unix"

// renameExcl renames old to new inside the directory dirfd and fails with
// EEXIST when new exists. FreeBSD has no exclusive rename: a file is
// linked to its new name (linkat(2) fails with EEXIST on an existing one,
// whatever it is) and its old name removed. A directory cannot be
// hard-linked (EPERM): ENOTSUP then, and renameNoReplace checks and
// renames, which leaves a window between the two that a capture ID's 50
// random bits make harmless.
func renameExcl(dirfd int, oldname, newname string) error {
	if err := unix.Linkat(dirfd, oldname, dirfd, newname, 0); err != nil {
		if err == unix.EPERM {
			return unix.ENOTSUP
		}
		return err
	}
	return unix.Unlinkat(dirfd, oldname, 0)
}
