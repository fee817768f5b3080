package wrap

import (
	"os"

	"golang.org/x/sys/unix"
)

// procctl(2) values of <sys/procctl.h> (FreeBSD 10.2 and later).
const (
	pPID            = 0 // P_PID, idtype_t
	procReapAcquire = 2 // PROC_REAP_ACQUIRE
)

// procctl is procctl(2) on capwrap's own process.
func procctl(cmd int, data uintptr) error {
	_, _, errno := unix.Syscall6(unix.SYS_PROCCTL, pPID, uintptr(os.Getpid()), uintptr(cmd), data, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// becomeSubreaper makes capwrap the reaper of the command's tree
// (procctl PROC_REAP_ACQUIRE): a descendant orphaned by its parent's exit,
// or one that called setsid or setpgid, stays in capwrap's reaper subtree,
// so capwrap can still find and end it (SPEC §3). It reports whether that
// holds.
func becomeSubreaper() bool {
	return procctl(procReapAcquire, 0) == nil
}
