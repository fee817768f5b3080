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
	"fmt"
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
// group (SPEC §3), but for those ignored when capwrap started
// (ignoredAtStart).
var ForwardedSignals = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH,
}

// SIGHUP and SIGINT as capwrap's process started with them: ignored (nohup,
// "capwrap ... &" in a script) or not. Read once, at package init, because
// signal.Ignored stops reporting an inherited ignore once a Notify has
// caught the signal, even after signal.Stop.
var (
	hupIgnored = signal.Ignored(syscall.SIGHUP)
	intIgnored = signal.Ignored(syscall.SIGINT)
)

// ignoredAtStart reports whether sig counts as ignored when capwrap started,
// so that it stays ignored in the child and is not forwarded (SPEC §3).
//
// The Go runtime keeps an inherited SIG_IGN of SIGHUP and SIGINT, which is
// what hupIgnored and intIgnored see; for every other signal, SIGQUIT
// included, it installs its own handler at start, so an inherited ignore
// of those cannot be observed from Go. The decision: SIGHUP and SIGINT
// ignored at start are neither caught nor forwarded, so they stay SIG_IGN
// and the child inherits that. SIGQUIT counts as ignored when SIGINT does:
// POSIX has a non-interactive shell start an asynchronous list with both
// ignored (nohup ignores SIGHUP only). catchForwarded then ignores SIGQUIT
// before the spawn, so the child inherits that too. An inherited ignore of
// SIGTERM, SIGUSR1 or SIGUSR2 cannot be seen: those are caught and
// forwarded as usual.
func ignoredAtStart(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGHUP:
		return hupIgnored
	case syscall.SIGINT, syscall.SIGQUIT:
		return intIgnored
	}
	return false
}

// CatchForwarded starts catching on ch the ForwardedSignals that were not
// ignored at start (ignoredAtStart), and ignores SIGQUIT when it counts as
// ignored at start. Called before the spawn: the child's dispositions are
// SIG_DFL for what capwrap catches and SIG_IGN for what it ignores.
func CatchForwarded(ch chan<- os.Signal) {
	var sigs []os.Signal
	for _, sig := range ForwardedSignals {
		if !ignoredAtStart(sig.(syscall.Signal)) {
			sigs = append(sigs, sig)
		}
	}
	if ignoredAtStart(syscall.SIGQUIT) {
		signal.Ignore(syscall.SIGQUIT)
	}
	signal.Notify(ch, sigs...)
}

// ending reports whether a forwarded signal asks the child to end, so that
// a group still alive KillAfter later gets SIGKILL (SPEC §3, as timeout -k).
func ending(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT:
		return true
	}
	return false
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
	// KillAfter is also the grace period after a forwarded SIGINT,
	// SIGTERM, SIGHUP or SIGQUIT (as timeout -k).
	Timeout   time.Duration
	KillAfter time.Duration
	// DrainTimeout is how long to wait for end-of-file on both streams
	// after the direct child exits (SPEC §3, default 1s). It is about end
	// of file only: the time a stream's writer spends in Write after the
	// exit (a slow disk, back-pressure) does not count, and what a stream
	// already holds when it passes is still read, so every byte the
	// direct child wrote before it exited is delivered, even with 0.
	DrainTimeout time.Duration
	// Terminal says stdin is a terminal: job control applies (SPEC §3).
	// A child that stops (Ctrl-Z, or SIGTTIN reading the terminal from
	// the background) stops capwrap's job with it; when the shell
	// continues capwrap with the terminal (fg) the child gets it and is
	// continued; the terminal is taken back from the child's group at the
	// end. capwrap ignores SIGTTOU and SIGTTIN from the spawn on, and
	// never takes the terminal from a group that is not its own.
	Terminal bool
	// Foreground makes the child's process group the foreground group of
	// the terminal on stdin at the spawn; it implies Terminal. The caller
	// sets it only when stdin is a terminal and capwrap is in its
	// foreground group (see InForeground), so capwrap holds the terminal
	// at the start; capwrap started in the background (capwrap ... &)
	// has Terminal only.
	Foreground bool
	// PTY gives the child a pseudo-terminal of its own for stdout and one
	// for stderr instead of pipes (SPEC §2 --pty); with StderrPipe, stderr
	// stays a pipe and only stdout is a pty.
	PTY        bool
	StderrPipe bool
	// OnStart, when set, is called once the child runs, with its PID,
	// before any of its output is read.
	OnStart func(pid int)
	// StdoutMark, when set, names an environment variable the child gets,
	// set to the identity (device:inode) of the pipe or pty that is its
	// stdout: a program below can tell whether its own stdout is still
	// that one (a nested capwrap, SPEC §1). Unused with Inherit.
	StdoutMark string
	// Inherit gives the child capwrap's own stdout and stderr instead of
	// pipes (Stdout, Stderr and PTY unused, nothing to drain): for a
	// nested capwrap, which captures its command itself (SPEC §1), while
	// this one still enforces the timeout, forwards signals and keeps the
	// watchdog.
	Inherit bool
	// Watchdog, when set, is armed with the child's process group as soon
	// as it runs, and disarmed when Run returns (see Watchdog).
	Watchdog *Watchdog
	// Signals, when set, brings signals from elsewhere (`capwrap stop`
	// through a job's supervisor, SPEC §10), handled as if capwrap had
	// received them: forwarded to the group, with the escalation of
	// SIGINT, SIGTERM, SIGHUP and SIGQUIT. It is read until Run returns.
	Signals <-chan os.Signal
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
	// DrainTimeout after the child exited, time spent in its writer
	// aside (a descendant kept it open).
	DrainTimedOut bool
	// Forwarded is the last signal capwrap received and passed on to the
	// group (SIGWINCH aside), or 0: with Signal equal to it, the run was
	// cancelled through capwrap rather than killed by something else.
	Forwarded syscall.Signal
	// Escalated is true when, after a forwarded SIGINT, SIGTERM, SIGHUP or
	// SIGQUIT, the group was still alive KillAfter later and capwrap sent
	// it SIGKILL (SPEC §3); with Signal SIGKILL, that ended the child. Not
	// set for the SIGKILL of a --timeout (TimedOut says that).
	Escalated bool
	// KillAfter is Config.KillAfter: the grace period Escalated refers to.
	KillAfter time.Duration
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
	pty      bool     // r is a pty master
	dst      io.Writer
	observed atomic.Int64
	eof      bool // pump reached end-of-file
	cut      bool // pump stopped at the drain deadline, before end-of-file

	// The drain clock (SPEC §3: --drain-timeout is about end of file
	// only). mu guards these and the setting of r's read deadline, which
	// startDrain and the pump both do.
	mu        sync.Mutex
	exited    time.Time // the direct child's exit; zero while it runs
	deadline  time.Time // exit + DrainTimeout + time spent in Write since
	writeFrom time.Time // start of the Write in progress; zero outside one
}

// child is one run of a Config's command: what Run's steps share. Each step
// fills in the fields the later ones read; release undoes, once Run has its
// Result, what the steps set up.
type child struct {
	cfg     Config
	res     Result // being built; Run returns it
	cmd     *exec.Cmd
	pid     int            // the child's PID and process group ID; 0 until it runs
	streams []*stream      // stdout's, stderr's; none with Inherit
	sigs    chan os.Signal // ForwardedSignals, caught from before the spawn

	drained chan struct{}           // closed when both pumps have returned
	waits   chan syscall.WaitStatus // from waitChild: each stop, then the end
	resume  chan struct{}           // tells waitChild to wait again after a stop
	ws      syscall.WaitStatus      // how the direct child ended

	timeout  *time.Timer // Config.Timeout, when positive
	timeoutC <-chan time.Time
	kill     *time.Timer // KillAfter, from the timeout's expiry or the first forwarded ending signal
	killC    <-chan time.Time
	killFwd  bool         // kill was armed by a forwarded signal, not by the timeout
	winch    *time.Ticker // the window-size poll, with ptys and job control
	winchC   <-chan time.Time
	lastWS   *unix.Winsize  // the window size last passed on to the ptys
	contC    chan os.Signal // SIGCONT, with job control
}

// Run starts the child, drains both streams into cfg.Stdout and cfg.Stderr,
// forwards signals and enforces the timeout, and returns when the child has
// exited and its streams have reached end-of-file or the drain timeout has
// passed. It does not return an error: a start failure is reported in
// Result.StartErr with State not_started.
//
// The steps, in order: start spawns the child, watch starts reading its
// streams and reaping it, supervise runs until the direct child exits,
// drain waits for the streams' end, complete settles the Result.
func Run(cfg Config) Result {
	c := &child{cfg: cfg, res: Result{ExitCode: -1, KillAfter: cfg.KillAfter, Started: time.Now()}}
	defer c.release()
	if err := c.start(); err != nil {
		return failStart(c.res, err)
	}
	c.watch()
	c.supervise()
	c.drain()
	return c.complete()
}

// command is the exec.Cmd for cfg: stdin inherited, a process group of its
// own and, with Foreground, the terminal on stdin handed to that group at
// the spawn. Its Err is set when Args[0] cannot be resolved.
func command(cfg Config) *exec.Cmd {
	cmd := exec.Command(cfg.Args[0], cfg.Args[1:]...)
	cmd.Env = cfg.Env
	cmd.Stdin = os.Stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
	if cfg.Foreground {
		cmd.SysProcAttr.Foreground = true
		cmd.SysProcAttr.Ctty = 0 // the child's fd 0 is capwrap's stdin
	}
	return cmd
}

// start opens the two streams, catches ForwardedSignals (catchForwarded)
// and spawns the child, then calls OnStart. It returns why the child could
// not be started; the streams are closed again then (c.sigs is left to
// release).
func (c *child) start() error {
	cmd := command(c.cfg)
	if cmd.Err != nil {
		return cmd.Err
	}
	var streams []*stream
	if c.cfg.Inherit {
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	} else {
		ss, err := openStreams(c.cfg)
		if err != nil {
			return err
		}
		streams = ss[:]
		cmd.Stdout, cmd.Stderr = ss[0].w, ss[1].w
		if c.cfg.StdoutMark != "" {
			if cmd.Env == nil {
				cmd.Env = os.Environ()
			}
			cmd.Env = append(withoutVar(cmd.Env, c.cfg.StdoutMark), c.cfg.StdoutMark+"="+FileID(ss[0].w))
		}
	}

	// Signals are caught before the spawn so none is lost in between;
	// handled signals revert to their default in the child at exec,
	// ignored ones stay ignored.
	c.sigs = make(chan os.Signal, 16)
	CatchForwarded(c.sigs)

	err := cmd.Start()
	for _, s := range streams {
		s.w.Close()
	}
	if err != nil {
		for _, s := range streams {
			s.r.Close()
		}
		return err
	}
	c.cmd, c.streams, c.pid = cmd, streams, cmd.Process.Pid
	c.res.PID = c.pid
	if wd := c.cfg.Watchdog; wd != nil {
		_ = wd.arm(c.pid) // a helper gone already can do nothing either way
	}
	if c.jobControl() {
		// From here capwrap is, or may become, a background process of the
		// terminal: its writes there (TOSTOP) and the hand-overs must not
		// stop it. The child has already exec'd, so it does not inherit
		// the ignore. release reclaims the terminal whatever happens from
		// here on.
		signal.Ignore(syscall.SIGTTOU, syscall.SIGTTIN)
	}
	if c.cfg.OnStart != nil {
		c.cfg.OnStart(c.pid)
	}
	return nil
}

// watch starts what supervise and drain wait on: a pump per stream, the
// reaper, the --timeout timer, the window-size poll (ptys with job
// control) and the SIGCONT watch (job control).
func (c *child) watch() {
	var pumps sync.WaitGroup
	for _, s := range c.streams {
		pumps.Add(1)
		go func() { defer pumps.Done(); s.pump() }()
	}
	drained := make(chan struct{})
	go func() { pumps.Wait(); close(drained) }()
	c.drained = drained

	// capwrap reaps the child itself, with WUNTRACED, to see it stop
	// (Ctrl-Z) as well as end; os/exec's Wait reports only the end.
	c.waits = make(chan syscall.WaitStatus, 1)
	c.resume = make(chan struct{})
	go waitChild(c.pid, c.waits, c.resume)

	if c.cfg.Timeout > 0 {
		c.timeout = time.NewTimer(c.cfg.Timeout)
		c.timeoutC = c.timeout.C
	}
	// With ptys and the terminal handed to the child, SIGWINCH from the
	// terminal goes to the child's group, not to capwrap: capwrap watches
	// the window size itself and passes changes on to the ptys.
	if c.cfg.PTY && c.jobControl() {
		c.winch = time.NewTicker(winsizePoll)
		c.winchC = c.winch.C
	}
	c.lastWS = currentWinsize()
	// fg of a capwrap job put in the background (bg, or & at the start)
	// while it ran: the shell gives capwrap's group the terminal, which
	// passes it on, and continues the job, of which the child is part.
	if c.jobControl() {
		c.contC = make(chan os.Signal, 1)
		signal.Notify(c.contC, syscall.SIGCONT)
	}
}

// supervise runs until the direct child exits, forwarding signals (and,
// KillAfter after one that asks the child to end, SIGKILL), handing the
// terminal back to the child on SIGCONT, passing window-size changes on to
// the ptys, enforcing the timeout (SIGTERM, then SIGKILL KillAfter later)
// and taking a stopped child's job through capwrap (stopped). When the
// child has exited it records how in c.ws and takes the terminal back.
func (c *child) supervise() {
	for {
		select {
		case sig := <-c.sigs:
			c.relay(sig)
		case sig := <-c.cfg.Signals:
			c.relay(sig)
		case <-c.contC:
			handForeground(c.pid)
			_ = syscall.Kill(-c.pid, syscall.SIGCONT)
		case <-c.winchC:
			if ws := currentWinsize(); *ws != *c.lastWS {
				c.lastWS = ws
				forward(c.pid, syscall.SIGWINCH, true, c.streams)
			}
		case <-c.timeoutC:
			c.expire()
		case <-c.killC:
			c.escalate()
		case ws := <-c.waits:
			if !ws.Stopped() {
				c.ws = ws
				c.cmd.Process.Release()
				if c.jobControl() {
					reclaimForeground(c.pid)
				}
				return
			}
			if c.jobControl() {
				c.stopped(ws.StopSignal())
			}
			c.resume <- struct{}{}
		}
	}
}

// drain waits, the direct child gone, for end-of-file on both streams, but
// no longer than DrainTimeout, still forwarding signals and keeping the
// kill-after of a timeout or a forwarded signal. It starts each stream's
// drain clock; a pump that reaches its deadline reads what its stream
// already holds and returns (see startDrain). drain returns when both
// pumps have.
func (c *child) drain() {
	exit := time.Now()
	for _, s := range c.streams {
		s.startDrain(exit, c.cfg.DrainTimeout)
	}
	for {
		select {
		case <-c.drained:
			return
		case sig := <-c.sigs:
			c.relay(sig)
		case sig := <-c.cfg.Signals:
			c.relay(sig)
		case <-c.killC:
			c.escalate()
		}
	}
}

// complete settles the Result: after a timeout or a forwarded ending
// signal it waits, until kill-after, for the group to empty (reapGroup);
// it closes capwrap's ends of the streams, sets DrainTimedOut when a
// stream was cut at its drain deadline, counts the bytes read and sets
// the state.
func (c *child) complete() Result {
	c.reapGroup()
	var observed [2]int64
	for i, s := range c.streams {
		s.r.Close()
		c.res.DrainTimedOut = c.res.DrainTimedOut || s.cut
		observed[i] = s.observed.Load()
	}
	c.res.ObservedStdout, c.res.ObservedStderr = observed[0], observed[1]
	c.res.setState(c.ws)
	c.res.Ended = time.Now()
	return c.res
}

// release stops what start and watch set up, in the reverse order, once
// Run's Result is made (deferred, so also after a failed start or a panic
// in OnStart): the watchdog disarmed, the timers and the SIGCONT watch, the
// terminal taken back from the child's group, the forwarded signals no
// longer caught.
func (c *child) release() {
	c.cfg.Watchdog.Disarm()
	if c.kill != nil {
		c.kill.Stop()
	}
	if c.contC != nil {
		signal.Stop(c.contC)
	}
	if c.winch != nil {
		c.winch.Stop()
	}
	if c.timeout != nil {
		c.timeout.Stop()
	}
	if c.pid != 0 && c.jobControl() {
		reclaimForeground(c.pid)
	}
	if c.sigs != nil {
		signal.Stop(c.sigs)
	}
}

// relay passes a signal capwrap received on to the child's group and notes
// it in Result.Forwarded. The first one that asks the child to end arms
// the kill-after timer (SPEC §3, as timeout -k); later ones do not move it.
func (c *child) relay(sig os.Signal) {
	forward(c.pid, sig, c.cfg.PTY, c.streams)
	c.res.noteForwarded(sig)
	if ending(sig.(syscall.Signal)) {
		// A stopped group would only act on it once continued (as
		// timeout(1) does, SIGCONT follows).
		_ = syscall.Kill(-c.pid, syscall.SIGCONT)
		if c.kill == nil {
			c.armKill(true)
		}
	}
}

// expire is --timeout: SIGTERM to the group now, and the kill-after timer
// for SIGKILL KillAfter later, unless a forwarded signal armed it first.
func (c *child) expire() {
	c.res.TimedOut = true
	_ = syscall.Kill(-c.pid, syscall.SIGTERM)
	_ = syscall.Kill(-c.pid, syscall.SIGCONT) // a stopped group receives it too
	if c.kill == nil {
		c.armKill(false)
	}
}

// armKill starts the kill-after timer; forwarded says a forwarded signal,
// not the timeout, armed it.
func (c *child) armKill(forwarded bool) {
	c.kill = time.NewTimer(c.cfg.KillAfter)
	c.killC = c.kill.C
	c.killFwd = forwarded
}

// escalate is the kill-after timer firing: SIGKILL to the group, once, if
// it still has a live member. After a forwarded signal, Escalated says so.
func (c *child) escalate() {
	c.killC = nil
	if !GroupAlive(c.pid) {
		return
	}
	_ = syscall.Kill(-c.pid, syscall.SIGKILL)
	c.res.Escalated = c.res.Escalated || c.killFwd
}

// reapGroup makes sure no member of a process group asked to end (by a
// timeout or a forwarded signal) survives capwrap, the direct child gone:
// while the kill-after timer runs it waits for the group to empty, and
// when the timer fires it escalates (SPEC §3 --kill-after).
func (c *child) reapGroup() {
	if c.killC == nil {
		return
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for GroupAlive(c.pid) {
		select {
		case <-c.killC:
			c.escalate()
			return
		case <-tick.C:
		}
	}
}

// setState sets State, and ExitCode or Signal, from the direct child's end:
// signaled or exited, or timeout when TimedOut is already set (ExitCode or
// Signal still say how the child ended).
func (r *Result) setState(ws syscall.WaitStatus) {
	switch {
	case ws.Signaled():
		r.State, r.Signal = StateSignaled, ws.Signal()
	default:
		r.State, r.ExitCode = StateExited, ws.ExitStatus()
	}
	if r.TimedOut {
		r.State = StateTimeout
	}
}

// forward passes a signal on to the child's process group. A window-size
// change is first copied to the ptys, so the child reads the new size when
// SIGWINCH reaches it.
func forward(pgid int, sig os.Signal, ptys bool, streams []*stream) {
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

// jobControl reports whether capwrap does job control for the child: stdin
// is a terminal (Config.Terminal, implied by Foreground).
func (c *child) jobControl() bool {
	return c.cfg.Terminal || c.cfg.Foreground
}

// stopped is job control for a child that stopped on sig, so that a command
// stops and resumes as it would without capwrap. When capwrap's own group
// holds the terminal and the child stopped for want of it (SIGTTIN or
// SIGTTOU: it touched the terminal from its background group, say just
// before an fg of capwrap reached it), capwrap hands the terminal over and
// continues the child. Otherwise (Ctrl-Z while the child held the
// terminal; a read while the shell holds it, after "capwrap ... &" or bg)
// the job stops through capwrap (suspend).
func (c *child) stopped(sig syscall.Signal) {
	if (sig == syscall.SIGTTIN || sig == syscall.SIGTTOU) && InForeground(0) {
		handForeground(c.pid)
		_ = syscall.Kill(-c.pid, syscall.SIGCONT)
		return
	}
	suspend(c.pid)
	// suspend has handled the SIGCONT that ended it; the SIGCONT watch
	// need not hand over and continue a second time.
	select {
	case <-c.contC:
	default:
	}
}

// suspend is job control through capwrap (POSIX shells' Ctrl-Z): the child
// was stopped, holding the terminal (Ctrl-Z) or not (it read the terminal
// from the background). capwrap takes the terminal back if the child has
// it and stops its own process group (itself and, in a pipeline, its
// neighbours), so the shell sees its job stopped. When the shell continues
// it, with fg capwrap hands the terminal to the child; with bg it leaves
// the terminal to the shell. Either way the child is continued.
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
// found but not executable (126) the way POSIX shells do. An empty command
// name is not found, as sh and env say; os/exec reports it only by the
// text of an unexported error.
func failStart(res Result, err error) Result {
	res.State = StateNotStarted
	res.StartErr = err
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist), err.Error() == "exec: no command":
		res.NotFound = true
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC),
		errors.Is(err, syscall.EISDIR):
		res.NotExecutable = true
	}
	res.Ended = time.Now()
	return res
}

// pump copies the stream into its writer until end-of-file (or EIO, which
// is how a pty master reports that the last slave closed) or until the
// drain deadline interrupts the read; then it reads what the stream
// already holds (readBuffered) and stops, cut unless that reached the end.
func (s *stream) pump() {
	buf := make([]byte, ReadBufferSize)
	for {
		n, err := s.r.Read(buf)
		if n > 0 {
			s.deliver(buf[:n])
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			s.eof = s.readBuffered(buf)
			s.cut = !s.eof
			return
		case err != nil:
			s.eof = errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO)
			return
		}
	}
}

// startDrain starts the stream's drain clock, the direct child having
// exited at exit: end-of-file is due by exit + timeout, plus the time the
// pump spends in Write from the exit on (deliver moves the deadline on by
// that much before the next Read). A pump blocked in Read gets its read
// deadline here; one inside Write sets it when the Write returns.
func (s *stream) startDrain(exit time.Time, timeout time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exited, s.deadline = exit, exit.Add(timeout)
	if s.writeFrom.IsZero() {
		_ = s.r.SetReadDeadline(s.deadline)
	}
}

// deliver counts p as observed and hands it to the stream's writer. Once
// the drain clock runs, the time spent in Write is added to the deadline,
// which is set again for the next Read: a slow or stalled disk behind the
// writer is the store's business (--stall-timeout), not the drain's.
func (s *stream) deliver(p []byte) {
	s.observed.Add(int64(len(p)))
	s.mu.Lock()
	s.writeFrom = time.Now()
	s.mu.Unlock()
	_, _ = s.dst.Write(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.deadline.IsZero() {
		from := s.writeFrom
		if from.Before(s.exited) {
			from = s.exited
		}
		s.deadline = s.deadline.Add(time.Since(from))
		_ = s.r.SetReadDeadline(s.deadline)
	}
	s.writeFrom = time.Time{}
}

// readBuffered reads what the stream holds once its drain deadline has
// passed, and reports whether that reached end-of-file. Go's poller answers
// a Read past the deadline without reading, but what the direct child
// wrote before it exited is in the pipe (or pty) by now and must be
// captured, whatever the drain timeout. The descriptor is non-blocking
// under the poller, so raw reads return EAGAIN when it is empty. At most
// what inq counts at the start is read, so a descendant still writing
// cannot keep it going; one more read then tells end-of-file from a stream
// a descendant still holds.
//
// A pty passes what the child wrote on to the master's read buffer from a
// kernel worker, a little at a time (its buffers hold about 64 KiB beyond
// what inq counts): for a pty, an empty read waits up to ptyFlush for more,
// and up to ptyBuffered bytes more are read.
func (s *stream) readBuffered(buf []byte) (eof bool) {
	rc, err := s.r.SyscallConn()
	if err != nil {
		return false
	}
	left := pipeSize // if inq fails: a full pipe's worth
	_ = rc.Control(func(fd uintptr) {
		if n, err := inq(int(fd)); err == nil {
			left = n
		}
	})
	if s.pty {
		left += ptyBuffered
	}
	read := func() (n int, err error) {
		if cerr := rc.Control(func(fd uintptr) {
			for n, err = unix.Read(int(fd), buf); err == unix.EINTR; {
				n, err = unix.Read(int(fd), buf)
			}
		}); cerr != nil {
			return 0, cerr
		}
		return n, err
	}
	for {
		last := left <= 0
		n, err := read()
		if n > 0 {
			s.deliver(buf[:n])
			left -= n
		}
		switch {
		case n == 0 && err == nil, err == unix.EIO: // EIO: a pty's last slave closed
			return true
		case err == unix.EAGAIN && s.pty && !last && readable(rc, ptyFlush):
		case err != nil, last: // EAGAIN: empty, a descendant holds it
			return false
		}
	}
}

// ptyFlush and ptyBuffered bound what readBuffered waits for from a pty:
// how long an empty read waits for the kernel to pass more on, and how
// many bytes beyond inq's count (the pty's buffers: 64 KiB, and the
// master's 4 KiB line buffer) it reads.
const (
	ptyFlush    = 50 * time.Millisecond
	ptyBuffered = 68 << 10
)

// readable waits up to d for the descriptor behind rc to be readable (or
// at its end: EOF, EIO and hang-up count).
func readable(rc syscall.RawConn, d time.Duration) bool {
	ok := false
	_ = rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, int(d.Milliseconds()))
			if err == unix.EINTR {
				continue
			}
			ok = err == nil && n > 0
			return
		}
	})
	return ok
}

// openStreams creates the two channels the child writes to.
func openStreams(cfg Config) ([2]*stream, error) {
	var ss [2]*stream
	dsts := [2]io.Writer{cfg.Stdout, cfg.Stderr}
	for i := range ss {
		var r, w *os.File
		var err error
		pty := cfg.PTY && !(i == 1 && cfg.StderrPipe)
		if pty {
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
		ss[i] = &stream{r: r, w: w, dst: dsts[i], pty: pty}
	}
	return ss, nil
}

// FileID is the identity of an open file as "device:inode", "" when it
// cannot be had: two descriptors with the same FileID are the same pipe,
// pty or file.
func FileID(f *os.File) string {
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

// withoutVar is env without NAME= entries.
func withoutVar(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
