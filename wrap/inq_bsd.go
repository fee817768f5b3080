//go:build darwin || freebsd

package wrap

import "golang.org/x/sys/unix"

// fionread is FIONREAD, _IOR('f', 127, int) in <sys/filio.h> on macOS and
// FreeBSD alike; golang.org/x/sys/unix does not name it.
const fionread = 0x4004667f

// inq is the number of bytes waiting to be read on fd, a pipe's read end
// or a pty master: FIONREAD (the BSDs have no TIOCINQ).
func inq(fd int) (int, error) {
	return unix.IoctlGetInt(fd, fionread)
}
