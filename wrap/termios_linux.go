package wrap

import "golang.org/x/sys/unix"

// The ioctls that read and set a terminal's attributes (tcgetattr and
// tcsetattr): TCGETS and TCSETS on Linux, TIOCGETA and TIOCSETA on the
// BSDs and macOS. Same struct termios, same meaning.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
