package wrap

import (
	"os"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// defaultWinsize is the window size of a pty when capwrap has no terminal to
// copy it from: 24 rows of 80 columns, the VT100's.
var defaultWinsize = unix.Winsize{Row: 24, Col: 80}

// PTYAvailable reports whether a pseudo-terminal can be allocated here, so
// that --pty auto can fall back to pipes with a warning and --pty always can
// fail before the command starts (issue 6).
func PTYAvailable() error {
	m, s, err := pty.Open()
	if err != nil {
		return err
	}
	m.Close()
	s.Close()
	return nil
}

// openPTY returns a pseudo-terminal pair: the master, which capwrap reads,
// and the slave, which becomes one of the child's output streams. The slave
// is put in raw output mode (no OPOST: no "\n" to "\r\n" translation), so
// the child's bytes arrive exactly as written (SPEC §2), and takes the
// window size of capwrap's terminal, or 80x24.
func openPTY() (master, slave *os.File, err error) {
	m, slave, err := pty.Open()
	if err != nil {
		return nil, nil, err
	}
	// pty.Open leaves the master in blocking mode (it calls Fd), where
	// read deadlines do not work and the drain timeout could not end a
	// read. A non-blocking duplicate registers with Go's poller.
	master, err = pollable(m)
	if err != nil {
		slave.Close()
		return nil, nil, err
	}
	if err = rawOutput(slave); err == nil {
		err = setWinsize(master, currentWinsize())
	}
	if err != nil {
		master.Close()
		slave.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

// rawOutput turns off output post-processing on a terminal, so that what
// the child writes arrives byte for byte. The input modes stay as a new
// terminal's (canonical, echo): nothing is typed into a capwrap pty unless
// the child takes it for its keys, which it shows by changing them (see
// keyRelay).
func rawOutput(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioctlErr error
	err = rc.Control(func(fd uintptr) {
		var t *unix.Termios
		t, ioctlErr = unix.IoctlGetTermios(int(fd), ioctlGetTermios)
		if ioctlErr != nil {
			return
		}
		t.Oflag &^= unix.OPOST
		ioctlErr = unix.IoctlSetTermios(int(fd), ioctlSetTermios, t)
	})
	if err != nil {
		return err
	}
	return ioctlErr
}

// currentWinsize is the window size of the first of capwrap's stdout,
// stderr and stdin that is a terminal, or 80x24 when none is.
func currentWinsize() *unix.Winsize {
	for _, fd := range []int{1, 2, 0} {
		if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && ws.Row > 0 {
			return ws
		}
	}
	ws := defaultWinsize
	return &ws
}

// pollable returns a non-blocking duplicate of f, which Go's runtime poller
// manages (so SetReadDeadline works), and closes f.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// setWinsize sets a terminal's window size (TIOCSWINSZ) without taking the
// file out of non-blocking mode.
func setWinsize(f *os.File, ws *unix.Winsize) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioctlErr error
	if err := rc.Control(func(fd uintptr) {
		ioctlErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws)
	}); err != nil {
		return err
	}
	return ioctlErr
}
