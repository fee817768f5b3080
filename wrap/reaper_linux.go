package wrap

import "golang.org/x/sys/unix"

// becomeSubreaper makes capwrap the subreaper of the command's tree
// (prctl PR_SET_CHILD_SUBREAPER, Linux 3.4): a descendant orphaned by its
// parent's exit, or one that called setsid or setpgid and was left behind,
// is re-parented to capwrap instead of init, so capwrap can still find and
// end it (SPEC §3). It reports whether that holds; one system call.
func becomeSubreaper() bool {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
}
