package wrap

import "golang.org/x/sys/unix"

// inq is the number of bytes waiting to be read on fd, a pipe's read end
// or a pty master: TIOCINQ (Linux's name for FIONREAD).
func inq(fd int) (int, error) {
	return unix.IoctlGetInt(fd, unix.TIOCINQ)
}
