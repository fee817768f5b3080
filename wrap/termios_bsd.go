//go:build darwin || freebsd

package wrap

import "golang.org/x/sys/unix"

// The ioctls that read and set a terminal's attributes (see the Linux
// file): TIOCGETA and TIOCSETA here.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
