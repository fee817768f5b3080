package wrap

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// SocketPair returns the two ends of a connected Unix stream socket, both
// close-on-exec. macOS has no SOCK_CLOEXEC: the flag is set right after,
// under syscall.ForkLock, which os/exec holds while it forks, so that no
// program started meanwhile inherits them.
func SocketPair() (a, b *os.File, err error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, err
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	return os.NewFile(uintptr(fds[0]), "link"), os.NewFile(uintptr(fds[1]), "link"), nil
}
