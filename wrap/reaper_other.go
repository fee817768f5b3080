//go:build !linux && !freebsd

package wrap

// becomeSubreaper reports false: macOS has no subreaper (no
// PR_SET_CHILD_SUBREAPER, no PROC_REAP_ACQUIRE), so a descendant that
// leaves the command's process group (setsid, setpgid) and whose parent
// exits is re-parented to launchd, out of capwrap's sight. There only the
// command's process group, and descendants whose parents are still alive,
// are covered (README, platforms).
func becomeSubreaper() bool { return false }
