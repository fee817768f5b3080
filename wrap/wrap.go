// Package wrap runs one child command the way SPEC §3 describes: in its own
// process group, with stdin inherited, its stdout and stderr read concurrently
// from two pipes (or two pseudo-terminals, SPEC §2 --pty), signals forwarded
// to the group, the terminal's foreground group handed over and back, a
// timeout with escalation, and a bounded drain after the child exits.
//
// wrap knows nothing of files, previews or redaction: every byte it reads is
// handed, unchanged and in order, to the io.Writer given for that stream.
// What that writer does (sanitize, spool to disk, keep a head and tail, copy
// to a terminal) is the caller's business.
package wrap

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ReadBufferSize is the size in bytes of each stream's read buffer. One read
// from a pipe returns at most this many bytes and is handed to the stream's
// writer in one Write call.
const ReadBufferSize = 256 << 10

// pipeSize is the capacity in bytes requested for each pipe (F_SETPIPE_SZ,
// Linux); larger pipes mean fewer reads for a fast child. Failure is ignored.
const pipeSize = 1 << 20

// winsizePoll is how often, with ptys, capwrap compares its terminal's
// window size with the last one it passed on.
const winsizePoll = 100 * time.Millisecond

// ForwardedSignals are the signals capwrap passes on to the child's process
// group (SPEC §3).
var ForwardedSignals = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH,
}

// Config says what to run and where its output goes.
type Config struct {
	// Args is the command and its arguments; Args[0] is looked up in PATH
	// as exec.LookPath does.
	Args []string
	// Env is the child's environment; nil means capwrap's own.
	Env []string
	// Stdout and Stderr receive the bytes read from the child's streams,
	// one Write per read (at most ReadBufferSize bytes). The slice is
	// reused after Write returns, so a writer must copy what it keeps.
	// Writes for one stream never overlap; the two streams are written
	// from two goroutines concurrently. A writer's error is ignored: the
	// pipe keeps being drained whatever happens downstream.
	Stdout, Stderr io.Writer
	// Timeout, when positive, sends SIGTERM to the process group after
	// this long, then SIGKILL after KillAfter (SPEC §3, as timeout(1)).
	Timeout   time.Duration
	KillAfter time.Duration
	// DrainTimeout is how long to wait for end-of-file on both streams
	// after the direct child exits (SPEC §3, default 1s).
	DrainTimeout time.Duration
	// Foreground makes the child's process group the foreground group of
	// the terminal on stdin for the run, and restores capwrap's group
	// afterwards. The caller sets it only when stdin is a terminal and
	// capwrap is in its foreground group (see InForeground).
	Foreground bool
	// PTY gives the child a pseudo-terminal of its own for stdout and one
	// for stderr instead of pipes (SPEC §2 --pty); with StderrPipe, stderr
	// stays a pipe and only stdout is a pty.
	PTY        bool
	StderrPipe bool
	// OnStart, when set, is called once the child runs, with its PID,
	// before any of its output is read.
	OnStart func(pid int)
}

// State values of Result.State (the receipt's process.state, SPEC §7).
const (
	StateExited     = "exited"
	StateSignaled   = "signaled"
	StateTimeout    = "timeout"
	StateNotStarted = "not_started"
)

// Result is what became of the child.
type Result struct {
	// State is exited, signaled, timeout or not_started.
	State string
	// ExitCode is the child's exit code, or -1 when it did not exit
	// normally (signaled, not started).
	ExitCode int
	// Signal is the signal that killed the child, or 0.
	Signal syscall.Signal
	// TimedOut is true when --timeout expired; ExitCode or Signal still
	// say how the child ended.
	TimedOut bool
	// StartErr is why the child could not be started; with NotFound or
	// NotExecutable set when that is the reason (exit 127 and 126).
	StartErr      error
	NotFound      bool
	NotExecutable bool
	// PID is the child's process ID (also its process group ID).
	PID int
	// Started and Ended bracket the run: from just before the spawn to
	// the end of the drain.
	Started, Ended time.Time
	// DrainTimedOut is true when a stream had not reached end-of-file
	// DrainTimeout after the child exited (a descendant kept it open).
	DrainTimedOut bool
	// Forwarded is the last signal capwrap received and passed on to the
	// group (SIGWINCH aside), or 0: with Signal equal to it, the run was
	// cancelled through capwrap rather than killed by something else.
	Forwarded syscall.Signal
	// ObservedStdout and ObservedStderr count bytes read from each stream.
	ObservedStdout, ObservedStderr int64
}

// InForeground reports whether fd is a terminal whose foreground process
// group is capwrap's own, the condition for Config.Foreground (SPEC §3).
func InForeground(fd int) bool {
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// stream is one of the child's two output channels as capwrap reads it.
type stream struct {
	r        *os.File // capwrap's end: the pipe's read end or the pty master
	w        *os.File // the child's end, closed in capwrap after the spawn
	dst      io.Writer
	observed atomic.Int64
	eof      bool
}

// Run starts the child, drains both streams into cfg.Stdout and cfg.Stderr,
// forwards signals and enforces the timeout, and returns when the child has
// exited and its streams have reached end-of-file or the drain timeout has
// passed. It does not return an error: a start failure is reported in
// Result.StartErr with State not_started.
func Run(cfg Config) Result {
	res := Result{ExitCode: -1, Started: time.Now()}
	finish := func() Result { res.Ended = time.Now(); return res }

	cmd := exec.Command(cfg.Args[0], cfg.Args[1:]...)
	cmd.Env = cfg.Env
	cmd.Stdin = os.Stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cfg.Foreground {
		cmd.SysProcAttr.Foreground = true
		cmd.SysProcAttr.Ctty = 0 // the child's fd 0 is capwrap's stdin
	}
	if cmd.Err != nil {
		return failStart(res, cmd.Err)
	}

	streams, err := openStreams(cfg)
	if err != nil {
		return failStart(res, err)
	}
	out, errs := streams[0], streams[1]
	cmd.Stdout, cmd.Stderr = out.w, errs.w

	// Signals are caught before the spawn so none is lost in between;
	// handled signals revert to their default in the child at exec.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, ForwardedSignals...)
	defer signal.Stop(sigs)

	err = cmd.Start()
	out.w.Close()
	errs.w.Close()
	if err != nil {
		out.r.Close()
		errs.r.Close()
		return failStart(res, err)
	}
	pid := cmd.Process.Pid
	res.PID = pid
	if cfg.Foreground {
		// From here capwrap is a background process of the terminal: its
		// writes there (TOSTOP) and the hand-back must not stop it. The
		// child has already exec'd, so it does not inherit the ignore.
		signal.Ignore(syscall.SIGTTOU, syscall.SIGTTIN)
		defer reclaimForeground(pid)
	}
	if cfg.OnStart != nil {
		cfg.OnStart(pid)
	}

	var pumps sync.WaitGroup
	for _, s := range streams {
		pumps.Add(1)
		go func() { defer pumps.Done(); s.pump() }()
	}
	drained := make(chan struct{})
	go func() { pumps.Wait(); close(drained) }()

	// capwrap reaps the child itself, with WUNTRACED, to see it stop
	// (Ctrl-Z) as well as end; os/exec's Wait reports only the end.
	waits := make(chan syscall.WaitStatus, 1)
	resume := make(chan struct{})
	go waitChild(pid, waits, resume)

	var timeoutC <-chan time.Time
	if cfg.Timeout > 0 {
		t := time.NewTimer(cfg.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	// With ptys and the terminal handed to the child, SIGWINCH from the
	// terminal goes to the child's group, not to capwrap: capwrap watches
	// the window size itself and passes changes on to the ptys.
	var winchC <-chan time.Time
	if cfg.PTY && cfg.Foreground {
		t := time.NewTicker(winsizePoll)
		defer t.Stop()
		winchC = t.C
	}
	lastWS := currentWinsize()
	// fg of a capwrap job put in the background (bg) while it ran: the
	// shell gives capwrap's group the terminal, which passes it on.
	var contC chan os.Signal
	if cfg.Foreground {
		contC = make(chan os.Signal, 1)
		signal.Notify(contC, syscall.SIGCONT)
		defer signal.Stop(contC)
	}
	var killC <-chan time.Time
	var ws syscall.WaitStatus
	for done := false; !done; {
		select {
		case sig := <-sigs:
			forward(pid, sig, cfg.PTY, streams)
			res.noteForwarded(sig)
		case <-contC:
			handForeground(pid)
		case <-winchC:
			if ws := currentWinsize(); *ws != *lastWS {
				lastWS = ws
				forward(pid, syscall.SIGWINCH, true, streams)
			}
		case <-timeoutC:
			res.TimedOut = true
			_ = syscall.Kill(-pid, syscall.SIGTERM)
			k := time.NewTimer(cfg.KillAfter)
			defer k.Stop()
			killC = k.C
		case <-killC:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			killC = nil
		case ws = <-waits:
			if !ws.Stopped() {
				done = true
				break
			}
			if cfg.Foreground {
				suspend(pid)
			}
			resume <- struct{}{}
		}
	}
	cmd.Process.Release()
	if cfg.Foreground {
		reclaimForeground(pid)
	}

	// Drain: the direct child is gone; wait for end-of-file on both
	// streams, but no longer than DrainTimeout, still forwarding signals.
	drainC := time.After(cfg.DrainTimeout)
drain:
	for {
		select {
		case <-drained:
			break drain
		case sig := <-sigs:
			forward(pid, sig, cfg.PTY, streams)
			res.noteForwarded(sig)
		case <-killC:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			killC = nil
		case <-drainC:
			res.DrainTimedOut = true
			now := time.Now()
			out.r.SetReadDeadline(now)
			errs.r.SetReadDeadline(now)
			<-drained
			break drain
		}
	}
	if res.TimedOut && killC != nil {
		reapGroup(pid, killC)
	}
	out.r.Close()
	errs.r.Close()
	res.DrainTimedOut = res.DrainTimedOut && !(out.eof && errs.eof)
	res.ObservedStdout = out.observed.Load()
	res.ObservedStderr = errs.observed.Load()

	switch {
	case ws.Signaled():
		res.State, res.Signal = StateSignaled, ws.Signal()
	default:
		res.State, res.ExitCode = StateExited, ws.ExitStatus()
	}
	if res.TimedOut {
		res.State = StateTimeout
	}
	return finish()
}

// forward passes a signal on to the child's process group. A window-size
// change is first copied to the ptys, so the child reads the new size when
// SIGWINCH reaches it.
func forward(pgid int, sig os.Signal, ptys bool, streams [2]*stream) {
	if ptys && sig == syscall.SIGWINCH {
		ws := currentWinsize()
		for _, s := range streams {
			_ = setWinsize(s.r, ws)
		}
	}
	_ = syscall.Kill(-pgid, sig.(syscall.Signal))
}

// noteForwarded records a forwarded signal that asks the child to end.
func (r *Result) noteForwarded(sig os.Signal) {
	if s := sig.(syscall.Signal); s != syscall.SIGWINCH {
		r.Forwarded = s
	}
}

// waitChild reaps the child, reporting each stop and, last, its end. After
// a stop it waits for resume before it waits again.
func waitChild(pid int, waits chan<- syscall.WaitStatus, resume <-chan struct{}) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // not expected: capwrap's own child
			ws = syscall.WaitStatus(0xff << 8) // exit status 255
		}
		waits <- ws
		if err != nil || !ws.Stopped() {
			return
		}
		<-resume
	}
}

// suspend is job control through capwrap (POSIX shells' Ctrl-Z): the child,
// which held the terminal, was stopped. capwrap takes the terminal back and
// stops its own process group (itself and, in a pipeline, its neighbours),
// so the shell sees its job stopped. When the shell continues it, with fg
// capwrap hands the terminal to the child again; with bg it leaves the
// terminal to the shell. Either way the child is continued.
func suspend(pgid int) {
	// kill(2) does not stop a multi-threaded process before it returns,
	// so capwrap waits for its SIGCONT before going on. If the stop is
	// discarded (an orphaned process group), no SIGCONT comes: the stop,
	// when it happens, happens within the grace period.
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	reclaimForeground(pgid)
	_ = syscall.Kill(0, syscall.SIGTSTP)
	select {
	case <-cont:
	case <-time.After(stopGrace):
	}
	// Continued. A shell may give its job the terminal just after the
	// SIGCONT (fg): wait for that a moment; after bg it never comes.
	for i := 0; i < 200 && !InForeground(0); i++ {
		time.Sleep(time.Millisecond)
	}
	handForeground(pgid)
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
}

// handForeground gives the terminal to the child's group, only when capwrap's
// own group holds it (SPEC §3: "when capwrap is in the foreground"): never
// from the background, where it would take the terminal from the shell.
func handForeground(pgid int) {
	if InForeground(0) {
		_ = unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, pgid)
	}
}

// stopGrace is how long suspend waits for its own stop to take effect
// before it concludes the stop was discarded.
const stopGrace = 200 * time.Millisecond

// reapGroup makes sure no member of a timed-out process group survives
// capwrap: it waits for the group to empty until the kill-after timer fires,
// then sends SIGKILL (SPEC §3 --kill-after).
func reapGroup(pgid int, killC <-chan time.Time) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for GroupAlive(pgid) {
		select {
		case <-killC:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		case <-tick.C:
		}
	}
}

// GroupAlive reports whether the process group has a member that is not a
// zombie. kill(-pgid, 0) alone cannot tell: an orphaned zombie that init has
// not reaped yet still counts there, so /proc is read to see the states.
func GroupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	if stats == nil {
		return true // no /proc: trust kill
	}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// reclaimForeground makes capwrap's own process group the foreground group
// of the terminal on stdin again, only when the child's group holds it; a
// terminal the shell has taken (capwrap put in the background) stays with
// the shell. SIGTTOU is ignored by then, so the call from a background group
// succeeds. Calling it twice is harmless.
func reclaimForeground(childPgid int) {
	if pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil && pgrp == childPgid {
		_ = unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, unix.Getpgrp())
	}
}

// failStart records a spawn failure, classifying it as not found (127) or
// found but not executable (126) the way POSIX shells do.
func failStart(res Result, err error) Result {
	res.State = StateNotStarted
	res.StartErr = err
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		res.NotFound = true
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC),
		errors.Is(err, syscall.EISDIR):
		res.NotExecutable = true
	}
	res.Ended = time.Now()
	return res
}

// pump copies the stream into its writer until end-of-file (or EIO, which
// is how a pty master reports that the last slave closed) or until the drain
// deadline interrupts the read.
func (s *stream) pump() {
	buf := make([]byte, ReadBufferSize)
	for {
		n, err := s.r.Read(buf)
		if n > 0 {
			s.observed.Add(int64(n))
			_, _ = s.dst.Write(buf[:n])
		}
		if err != nil {
			s.eof = errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO)
			return
		}
	}
}

// openStreams creates the two channels the child writes to.
func openStreams(cfg Config) ([2]*stream, error) {
	var ss [2]*stream
	dsts := [2]io.Writer{cfg.Stdout, cfg.Stderr}
	for i := range ss {
		var r, w *os.File
		var err error
		if cfg.PTY && !(i == 1 && cfg.StderrPipe) {
			r, w, err = openPTY()
		} else {
			r, w, err = os.Pipe()
			if err == nil {
				// Through SyscallConn, not Fd: Fd would make the read
				// end blocking and so break the drain deadline.
				if rc, cerr := r.SyscallConn(); cerr == nil {
					_ = rc.Control(func(fd uintptr) {
						_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
					})
				}
			}
		}
		if err != nil {
			for _, s := range ss[:i] {
				s.r.Close()
				s.w.Close()
			}
			return ss, err
		}
		ss[i] = &stream{r: r, w: w, dst: dsts[i]}
	}
	return ss, nil
}
