package wrap

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Job control at a terminal (SPEC §2, §3; issue 23). The child runs in a
// process group of its own, so that --timeout, stop and the watchdog reach
// all of it; it starts in the background of the terminal, so that the
// terminal's foreground stays with the shell's job that capwrap is part of
// (in `capwrap make | less`, less keeps it). The terminal goes to the
// child's group on demand only: when the child touches it from the
// background and the kernel stops it for that (SIGTTIN, SIGTTOU) while
// capwrap's group is in the foreground. A prompt on /dev/tty therefore
// works whatever capwrap's stdin is, and a command that never reads the
// terminal never takes it from anyone. capwrap never saves or restores the
// terminal's attributes.

// OpenTTY opens capwrap's controlling terminal, for Config.TTY, or returns
// nil when capwrap has none (a session without a terminal: CI, a daemon,
// a harness that started capwrap with setsid). The file is close-on-exec:
// the child does not inherit it.
func OpenTTY() *os.File {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	return f
}

// terminalGroup is the foreground process group of the terminal tty, or
// -1. It goes through SyscallConn, not Fd, which would take tty out of
// non-blocking mode (the key relay reads it with a deadline).
func terminalGroup(tty *os.File) int {
	pgrp := -1
	if rc, err := tty.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			if n, err := unix.IoctlGetInt(int(fd), unix.TIOCGPGRP); err == nil {
				pgrp = n
			}
		})
	}
	return pgrp
}

// setTerminalGroup makes pgid the foreground process group of tty.
func setTerminalGroup(tty *os.File, pgid int) {
	if rc, err := tty.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPGRP, pgid) })
	}
}

// jobControl reports whether capwrap does job control for the child
// (Config.TTY).
func (c *child) jobControl() bool {
	return c.cfg.TTY != nil
}

// foregroundGroup is the terminal's foreground process group, or -1.
func (c *child) foregroundGroup() int {
	return terminalGroup(c.cfg.TTY)
}

// handForeground gives the terminal to the child's group, only when
// capwrap's own group holds it: never from the background, where it would
// take the terminal from the shell.
func (c *child) handForeground() {
	if c.foregroundGroup() == unix.Getpgrp() {
		c.keys.stop(c.cfg.TTY) // the terminal's attributes as the child would find them
		setTerminalGroup(c.cfg.TTY, c.pid)
	}
}

// reclaimForeground makes capwrap's own process group the terminal's
// foreground group again, only when the child's group holds it; a terminal
// the shell has taken (capwrap put in the background) stays with the
// shell. SIGTTOU is ignored by then, so the call from a background group
// succeeds. Calling it twice is harmless.
func (c *child) reclaimForeground() {
	if c.foregroundGroup() == c.pid {
		setTerminalGroup(c.cfg.TTY, unix.Getpgrp())
	}
}

// stopped is job control for a child that stopped on sig, so that a
// command stops and resumes as it would without capwrap. A child stopped
// for want of the terminal (SIGTTIN or SIGTTOU: it read or set it from its
// background group) while capwrap's group holds it gets it, and is
// continued. Otherwise (Ctrl-Z, relayed by capwrap or received from the
// terminal the child held; the terminal wanted while the shell holds it,
// after "capwrap ... &" or bg) the job stops through capwrap (suspend).
func (c *child) stopped(sig syscall.Signal) {
	wantsTerminal := sig == syscall.SIGTTIN || sig == syscall.SIGTTOU
	if wantsTerminal && c.foregroundGroup() == unix.Getpgrp() {
		c.handForeground()
		_ = syscall.Kill(-c.pid, syscall.SIGCONT)
		return
	}
	c.suspend(wantsTerminal)
	// suspend has handled the SIGCONT that ended it, and a SIGTSTP that
	// stopped the job with it; neither is to be relayed a second time.
	for _, ch := range []chan os.Signal{c.contC, c.tstpC} {
		select {
		case <-ch:
		default:
		}
	}
}

// suspend is job control through capwrap (POSIX shells' Ctrl-Z): the child
// was stopped. capwrap takes the terminal back if the child has it and
// stops its own job (stopJob), so the shell sees it stopped. When the shell
// continues it, with fg, the child gets the terminal back if it held it or
// stopped for want of it (wantsTerminal); with bg the terminal stays with
// the shell. Either way the child is continued.
func (c *child) suspend(wantsTerminal bool) {
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	c.settleOutput()
	held := c.foregroundGroup() == c.pid
	c.reclaimForeground()
	if c.keys.stop(c.cfg.TTY) { // the shell gets its terminal as it left it
		held = true // lent to the key relay, the command's all the same
	}
	stopJob(cont)
	if held || wantsTerminal {
		// Continued. A shell may give its job the terminal just after
		// the SIGCONT (fg): wait for that a moment; after bg it never
		// comes.
		for i := 0; i < 200 && c.foregroundGroup() != unix.Getpgrp(); i++ {
			time.Sleep(time.Millisecond)
		}
		c.handForeground()
	}
	_ = syscall.Kill(-c.pid, syscall.SIGCONT)
}

// checkStoppedMember is Ctrl-Z behind a shell (terminalPoll calls it). An
// interactive shell that capwrap runs (capwrap bash) has no job control:
// its terminal for that is its stderr, capwrap's pty, not its controlling
// terminal. Ctrl-Z then stops the command the shell runs in the
// foreground, while the shell, which ignores SIGTSTP, waits for it for
// good, and nothing reads the keyboard. When the command's group holds
// the terminal, its direct child ignores SIGTSTP and a member of the group
// is stopped, capwrap stops its own job as for any Ctrl-Z (suspend): the
// shell capwrap runs in shows it stopped, and fg continues it all.
// (Linux and macOS; FreeBSD cannot see the stopped member.)
func (c *child) checkStoppedMember() {
	if c.foregroundGroup() == c.pid && ignoresStop(c.pid) && stoppedMember(c.pid) {
		c.suspend(false)
	}
}

// stopGrace is how long stopJob waits for capwrap's own stop to take
// effect before it concludes the stop was discarded: kill(2) does not stop
// a multi-threaded process before it returns, and an orphaned process
// group discards a SIGTSTP (POSIX), so no SIGCONT would come.
const stopGrace = 200 * time.Millisecond

// settleOutput waits, before capwrap's job stops, until what the stopped
// child wrote has been read and passed on (to the terminal, in tee mode):
// its last bytes before the stop (a full-screen program's "show the
// cursor", "leave the alternate screen") reach the terminal before the
// shell's "Stopped", as without capwrap. It waits until every stream is
// empty and no write is in progress, twice settleStep apart (a pty passes
// data on to its master a little later), at most settleMax.
func (c *child) settleOutput() {
	calm := 0
	for end := time.Now().Add(settleMax); calm < 2 && time.Now().Before(end); time.Sleep(settleStep) {
		if c.outputPending() {
			calm = 0
		} else {
			calm++
		}
	}
}

// outputPending reports whether a stream holds unread bytes or its
// writer is busy with some.
func (c *child) outputPending() bool {
	for _, s := range c.streams {
		s.mu.Lock()
		writing := !s.writeFrom.IsZero()
		s.mu.Unlock()
		if writing {
			return true
		}
		rc, err := s.r.SyscallConn()
		if err != nil {
			continue
		}
		n := 0
		_ = rc.Control(func(fd uintptr) { n, _ = inq(int(fd)) })
		if n > 0 {
			return true
		}
	}
	return false
}

// settleStep and settleMax pace and bound settleOutput.
const (
	settleStep = 5 * time.Millisecond
	settleMax  = 300 * time.Millisecond
)
