//go:build !linux

package wrap

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseOnExecFrom marks every descriptor from fd up close-on-exec (see
// the Linux version): here from the listing of /dev/fd, or, where that
// shows only the standard three, up to the descriptor limit (at most
// 65536 of them).
func CloseOnExecFrom(fd int) {
	if entries, err := os.ReadDir("/dev/fd"); err == nil && len(entries) > 3 {
		for _, e := range entries {
			if n, err := strconv.Atoi(e.Name()); err == nil && n >= fd {
				unix.CloseOnExec(n)
			}
		}
		return
	}
	var lim unix.Rlimit
	top := 1024
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < 65536 {
		top = int(lim.Cur)
	} else if lim.Cur >= 65536 {
		top = 65536
	}
	for n := fd; n < top; n++ {
		unix.CloseOnExec(n)
	}
}
