package wrap

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The keyboard for a command that reads its keys from its stderr pty
// (issue 23). With --pty auto at a terminal the command's stderr is a pty
// of capwrap's, so that it keeps its colours and an interactive shell its
// prompt. Some programs read their keys from the terminal their stderr
// names rather than from /dev/tty: less before version 633 (the pager of
// git, man, systemctl...) and util-linux's more. Such a program puts that
// terminal in non-canonical mode to read single keys, and it never touches
// capwrap's own terminal, so it never asks for it (no SIGTTIN). capwrap
// notices the change (the pty's ICANON cleared) and copies the keyboard
// into the pty, with its terminal's ICANON and ECHO off (ISIG stays: Ctrl-C
// still signals the foreground job, capwrap's, which forwards it). When
// the command's own group held the terminal (capwrap gave it at the
// spawn), capwrap takes it for the relay and gives it back at the end.
// The relay ends when the program gives the mode back, the command ends,
// or capwrap hands the terminal over or stops; the attributes capwrap
// changed are then restored.
//
// capwrap relays one key (byte) at a time and, after each, watches the
// pty's mode closely (every keyWatchStep) before it takes the next from
// the terminal: until the program has read the key (the slave's input
// queue is empty), then keyWatch more. The key that quits a pager is
// followed at once by the pager's restoring the mode, and what was typed
// after it stays in the terminal for the shell that started the pager,
// which must have the terminal back before it reads it again (an
// interactive shell ignores SIGTTIN, so a read from the background would be
// end of file to it: the shell would exit). On a busy machine the pager may
// read the key long after it was relayed: the watch counts from the read,
// not from the relay, up to keyWait in all. Keys typed faster meanwhile
// wait in the terminal; none is lost.
const (
	keyWatch     = 50 * time.Millisecond
	keyWait      = 10 * time.Second
	keyWatchStep = 500 * time.Microsecond
)

// keyRelay copies the keyboard (capwrap's terminal) into the command's
// stderr pty, one relay at a time. The zero value is idle.
type keyRelay struct {
	mu       sync.Mutex
	saved    *unix.Termios // the terminal's attributes before start; nil when idle
	done     chan struct{} // closed when the copying goroutine has returned
	handBack bool          // capwrap took the terminal from the command for the relay
	stopping bool          // stop asked the goroutine to end
}

// termios returns the attributes of the terminal behind f (for a pty
// master, those of its slave), without taking f out of non-blocking mode.
func termios(f *os.File) (*unix.Termios, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var t *unix.Termios
	var ioctlErr error
	if err := rc.Control(func(fd uintptr) { t, ioctlErr = unix.IoctlGetTermios(int(fd), ioctlGetTermios) }); err != nil {
		return nil, err
	}
	return t, ioctlErr
}

// setTermios sets the attributes of the terminal behind f.
func setTermios(f *os.File, t *unix.Termios) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioctlErr error
	if err := rc.Control(func(fd uintptr) { ioctlErr = unix.IoctlSetTermios(int(fd), ioctlSetTermios, t) }); err != nil {
		return err
	}
	return ioctlErr
}

// readsKeys reports whether the terminal behind pty (a master) is in
// non-canonical input mode: the program on its slave reads single keys.
func readsKeys(pty *os.File) bool {
	t, err := termios(pty)
	return err == nil && t.Lflag&unix.ICANON == 0
}

// checkKeys starts the key relay when the command has taken its stderr pty
// for its keys while either group, capwrap's or the command's, holds the
// terminal, and ends one whose pty is back in canonical mode (the
// window-size poll calls it).
func (c *child) checkKeys() {
	if !c.cfg.PTY.has(1) {
		return
	}
	fg, own := c.foregroundGroup(), unix.Getpgrp()
	want := (fg == own || fg == c.pid) && readsKeys(c.streams[1].r)
	switch {
	case want && !c.keys.running():
		if fg == c.pid {
			setTerminalGroup(c.cfg.TTY, own)
		}
		c.keys.start(c.cfg.TTY, c.streams[1].r, c.streams[1].slave, fg == c.pid, c.pid)
	case !want && c.keys.running():
		if c.keys.stop(c.cfg.TTY) && c.foregroundGroup() == own {
			setTerminalGroup(c.cfg.TTY, c.pid)
		}
	}
}

// running reports whether a relay runs.
func (k *keyRelay) running() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.saved != nil
}

// start begins copying tty's input to pty, with tty's ICANON and ECHO
// off; handBack says capwrap took the terminal from the command's group,
// pgid, for it. It does nothing when a relay runs already, or when tty
// cannot be read with a deadline (not under Go's poller: macOS).
func (k *keyRelay) start(tty, pty *os.File, slave string, handBack bool, pgid int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.saved != nil {
		return
	}
	saved, err := termios(tty)
	if err != nil {
		return
	}
	raw := *saved
	raw.Lflag &^= unix.ICANON | unix.ECHO
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if setTermios(tty, &raw) != nil {
		return
	}
	if tty.SetReadDeadline(time.Time{}) != nil {
		_ = setTermios(tty, saved)
		if handBack {
			setTerminalGroup(tty, pgid)
		}
		return
	}
	k.saved, k.handBack, k.stopping = saved, handBack, false
	k.done = make(chan struct{})
	go k.copy(tty, pty, slave, pgid, k.done)
}

// copy is the relay's goroutine: it copies keys until stop sets a past
// deadline, a read fails (EIO: capwrap's group no longer holds the
// terminal), or the pty goes back to canonical mode after a key; in that
// last case it ends the relay itself (restoring tty). When capwrap took
// the terminal from the command's group, it lends it back while each key
// is delivered and watched, and takes it again only while the program
// still reads keys.
func (k *keyRelay) copy(tty, pty *os.File, slave string, pgid int, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 32)
	for {
		// One key at a time: the rest stays in the terminal. A key that
		// sends an escape sequence (an arrow, a function key) goes whole,
		// with what of it has arrived already.
		n, err := tty.Read(buf[:1])
		if n == 1 && buf[0] == 0x1b {
			n += readPending(tty, buf[1:])
		}
		if n > 0 {
			// The command's group gets the terminal back before the key
			// can end its pager: the shell that started the pager reads
			// the terminal as soon as the pager exits, and a read from
			// the background would be end of file to it, on a busy
			// machine before capwrap could hand the terminal back.
			lent := k.lend(tty, pgid)
			if _, werr := pty.Write(buf[:n]); werr != nil {
				return
			}
			if k.watch(pty, slave) || lent && !retake(tty, pgid) {
				k.finish(tty, pgid)
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// watch polls pty's mode after a relayed key until keyWatch after the
// program read it (slave's input queue empty), keyWait at most, and
// reports whether it went back to canonical (the program stopped reading
// keys). It gives up at once when stop was asked.
func (k *keyRelay) watch(pty *os.File, slave string) bool {
	start := time.Now()
	var read time.Time // when the key was seen read; zero until then
	for {
		if !readsKeys(pty) {
			return true
		}
		k.mu.Lock()
		stopping := k.stopping
		k.mu.Unlock()
		now := time.Now()
		if read.IsZero() && unread(slave) == 0 {
			read = now
		}
		if stopping || !read.IsZero() && now.Sub(read) >= keyWatch || now.Sub(start) >= keyWait {
			return false
		}
		time.Sleep(keyWatchStep)
	}
}

// unread is the number of bytes in the input queue of the pty slave at
// path, that its program has not read; 0 when it cannot be asked (the
// watch then counts from the relay).
func unread(path string) int {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			if q, err := inq(int(fd)); err == nil {
				n = q
			}
		})
	}
	return n
}

// lend gives the terminal to the command's group, pgid, between two keys,
// when capwrap took it from that group for the relay (start's handBack)
// and holds it; it reports whether it did.
func (k *keyRelay) lend(tty *os.File, pgid int) bool {
	k.mu.Lock()
	handBack := k.handBack
	k.mu.Unlock()
	if !handBack || terminalGroup(tty) != unix.Getpgrp() {
		return false
	}
	setTerminalGroup(tty, pgid)
	return true
}

// retake takes the terminal back from the command's group, pgid, for the
// next key, once the program still reads keys after the last one; it
// reports false when that group no longer holds the terminal (the shell
// has it: the relay ends).
func retake(tty *os.File, pgid int) bool {
	if terminalGroup(tty) != pgid {
		return false
	}
	setTerminalGroup(tty, unix.Getpgrp())
	return true
}

// finish ends the relay from its own goroutine: tty's attributes restored,
// the terminal given back to the command's group if capwrap took it.
func (k *keyRelay) finish(tty *os.File, pgid int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.saved == nil || k.stopping {
		return // stop is ending it
	}
	_ = setTermios(tty, k.saved)
	if k.handBack && terminalGroup(tty) == unix.Getpgrp() {
		setTerminalGroup(tty, pgid)
	}
	k.saved, k.handBack = nil, false
}

// stop ends a running relay: the copying goroutine has returned and tty's
// attributes are those start found, when stop returns. It reports whether
// the terminal is to go back to the command (start's handBack); the caller
// does that. It does nothing, and reports false, when no relay runs.
func (k *keyRelay) stop(tty *os.File) (handBack bool) {
	k.mu.Lock()
	if k.saved == nil {
		done := k.done
		k.mu.Unlock()
		if done != nil {
			<-done // a goroutine that finished the relay itself
		}
		return false
	}
	k.stopping = true
	done := k.done
	k.mu.Unlock()
	_ = tty.SetReadDeadline(time.Now())
	<-done
	k.mu.Lock()
	defer k.mu.Unlock()
	_ = setTermios(tty, k.saved)
	handBack = k.handBack
	k.saved, k.handBack, k.stopping = nil, false, false
	return handBack
}

// readPending reads into p what tty holds already, without waiting, at
// most len(p) bytes, and returns how many it read.
func readPending(tty *os.File, p []byte) int {
	rc, err := tty.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Control(func(fd uintptr) {
		if q, err := inq(int(fd)); err == nil && q > 0 {
			m, _ := unix.Read(int(fd), p[:min(q, len(p))])
			n = max(m, 0)
		}
	})
	return n
}
