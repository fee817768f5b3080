package wrap

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseOnExecFrom marks every descriptor from fd up close-on-exec, so that
// a program capwrap starts next inherits only what it is given (a job's
// supervisor must hold none of its caller's descriptors, SPEC §10).
// close_range(2) with CLOSE_RANGE_CLOEXEC where the kernel has it (5.11),
// else one fcntl per descriptor listed in /proc/self/fd.
func CloseOnExecFrom(fd int) {
	if unix.CloseRange(uint(fd), ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= fd {
			unix.CloseOnExec(n)
		}
	}
}
