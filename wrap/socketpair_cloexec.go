//go:build linux || freebsd

package wrap

import (
	"os"

	"golang.org/x/sys/unix"
)

// SocketPair returns the two ends of a connected Unix stream socket, both
// close-on-exec from the start (SOCK_CLOEXEC): a job's link to its
// launcher (SPEC §10), which no other program may inherit.
func SocketPair() (a, b *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "link"), os.NewFile(uintptr(fds[1]), "link"), nil
}
