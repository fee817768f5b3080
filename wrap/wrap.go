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
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
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

// pipeSize is the capacity in bytes requested for each pipe (growPipe);
// larger pipes mean fewer reads for a fast child. Failure is ignored.
const pipeSize = 1 << 20

// terminalPoll is how often, with job control, capwrap looks at its
// terminal: the window size (passed on to the ptys), the key relay
// (checkKeys) and a command stopped behind a shell (checkStoppedMember).
const terminalPoll = 100 * time.Millisecond

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
	// Stdin is the child's stdin, passed on untouched (SPEC §3); nil means
	// capwrap's own.
	Stdin *os.File
	// Stdout and Stderr receive the bytes read from the child's streams,
	// one Write per read (at most ReadBufferSize bytes). The slice is
	// reused after Write returns, so a writer must copy what it keeps.
	// Writes never overlap, for one stream or between the two (see
	// order.go: a writer that is a Stager gets a read in two steps, in
	// step with the other stream's). A writer's error is ignored: the
	// pipe keeps being drained whatever happens downstream, unless it is
	// ErrCloseStream.
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
	// TTY, when set, is capwrap's controlling terminal, open, on which
	// capwrap does job control for the child (SPEC §2, §3): the caller
	// sets it when a person may be at that terminal (stdin is it, or tee
	// mode) and closes it after Run. The child starts in the background
	// of the terminal, so the terminal's foreground stays with capwrap's
	// job (a pipeline's pager keeps it). capwrap hands the terminal over
	// on demand: when the child reads or sets it from the background and
	// is stopped for it (SIGTTIN, SIGTTOU) while capwrap's group holds
	// it; it takes it back when the child ends. Ctrl-Z stops the child
	// and capwrap with it (SIGTSTP is relayed), fg continues both; a
	// child that stops itself for the terminal while capwrap is in the
	// background stops capwrap's job too. capwrap ignores SIGTTOU and
	// SIGTTIN from the spawn on, and never takes the terminal from a
	// group that is not its own or the child's.
	TTY *os.File
	// Foreground, with TTY, also makes the child's group the terminal's
	// foreground group at the spawn when capwrap's group holds it: the
	// caller sets it when capwrap is alone at the keyboard (stdin and
	// stdout are the terminal, so no pipeline neighbour shares it), where
	// an interactive shell, which ignores SIGTTIN and would never ask,
	// needs it from the start.
	Foreground bool
	// PTY gives the child a pseudo-terminal of its own, instead of a
	// pipe, for each stream it names (SPEC §2 --pty).
	PTY PTYMode
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
	// Caught brings the signals capwrap itself received and is to forward
	// to the group (SPEC §3): the channel of package sigcatch, which
	// catches them from process start. A signal that asks to end (SIGINT,
	// SIGTERM, SIGHUP, SIGQUIT) found on it before the spawn cancels the
	// run: the command is not started (ErrCancelled). It is read until
	// Run returns; nil forwards nothing.
	Caught <-chan os.Signal
	// LeaveDescendants leaves running the processes the command started
	// that are still alive once it has ended and its streams are drained
	// (Result.Descendants lists them either way). By default they are
	// ended: SIGTERM, then SIGKILL KillAfter later (SPEC §3).
	LeaveDescendants bool
	// Signals, when set, brings signals from elsewhere (`capwrap stop`
	// through a job's supervisor, SPEC §10), handled as if capwrap had
	// received them: forwarded to the group, with the escalation of
	// SIGINT, SIGTERM, SIGHUP and SIGQUIT. It is read until Run returns.
	Signals <-chan os.Signal
}

// PTYMode says which of the child's output streams are pseudo-terminals
// rather than pipes (SPEC §2 --pty): a set of PTYStdout and PTYStderr.
type PTYMode uint8

// The streams a PTYMode may name.
const (
	PTYStdout PTYMode = 1 << iota
	PTYStderr
	PTYNone PTYMode = 0
	PTYBoth         = PTYStdout | PTYStderr
)

// has reports whether stream i (0 stdout, 1 stderr) is a pty.
func (m PTYMode) has(i int) bool { return m&(1<<i) != 0 }

// State is how the direct child ended (Result.State). A --timeout does
// not change it: Result.TimedOut says the timeout ended the child, which
// then exited or was signaled all the same.
type State string

// The states of Result.State.
const (
	StateExited     State = "exited"
	StateSignaled   State = "signaled"
	StateNotStarted State = "not_started"
)

// Result is what became of the child.
type Result struct {
	// State is exited, signaled or not_started.
	State State
	// ExitCode is the child's exit code, or -1 when it did not exit
	// normally (signaled, not started).
	ExitCode int
	// Signal is the signal that killed the child, or 0.
	Signal syscall.Signal
	// TimedOut is true when --timeout expired; ExitCode or Signal still
	// say how the child ended.
	TimedOut bool
	// StartErr is why the child could not be started: errors.Is with
	// ErrNotFound or ErrNotExecutable tells those two reasons (a shell's
	// 127 and 126), with ErrCancelled a start cancelled by a signal.
	StartErr error
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
	// KillAfter is the grace period Escalated refers to: Config.KillAfter,
	// or the KillAfter of the Request that armed the timer last.
	KillAfter time.Duration
	// WaitedForTerminal is true when the child was stopped for reading or
	// setting a terminal (SIGTTIN, SIGTTOU) that capwrap, without
	// Config.TTY, could not give it: it waited there until a signal or
	// the timeout ended it.
	WaitedForTerminal bool
	// ObservedStdout and ObservedStderr count bytes read from each stream.
	ObservedStdout, ObservedStderr int64
	// Descendants are the processes the command started that were still
	// alive after it ended on its own and its streams were drained, at
	// most DescendantsListed of them, first found first, and every one
	// that held a stream at the drain timeout (SPEC §3); nil when none. DescendantsLeft says
	// they were left running (Config.LeaveDescendants); else capwrap
	// ended them.
	Descendants     []Descendant
	DescendantsLeft bool
	// DescendantCount is how many descendants there were (Descendants
	// lists at most DescendantsListed, and those that held a stream).
	DescendantCount int
}

// stream is one of the child's two output channels as capwrap reads it.
type stream struct {
	r        *os.File // capwrap's end: the pipe's read end or the pty master
	w        *os.File // the child's end, closed in capwrap after the spawn
	pty      bool     // r is a pty master
	slave    string   // the pty slave's path, when pty
	id       string   // the pipe's FileID, when not pty (pipeHolders)
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

	closed atomic.Bool // closed at its writer's request (ErrCloseStream)

	// The two streams' order (order.go): buf, peer and done are used
	// under ord's lock; a stream without a peer has none.
	buf      []byte      // ReadBufferSize bytes: every read of r goes here
	ord      *order      // shared with peer
	peer     *stream     // the run's other stream
	done     bool        // the pump has returned: peer reads it no more
	closeReq atomic.Bool // the writer returned ErrCloseStream
	closing  atomic.Bool // closeEarly is called once
}

// child is one run of a Config's command: what Run's steps share. Each step
// fills in the fields the later ones read; release undoes, once Run has its
// Result, what the steps set up.
type child struct {
	cfg   Config
	res   Result           // being built; Run returns it
	pid   int              // the child's PID and process group ID; 0 until it runs
	mark  string           // NAME=VALUE of Config.StdoutMark in the child's environment; "" without
	reap  *time.Ticker     // orphanReap, where capwrap is a subreaper
	chldC <-chan time.Time // reap's ticks: time to reap orphans; nil without

	endSig    syscall.Signal   // the last ending signal (or SIGKILL) signalTree sent; 0 before
	signalled map[int]bool     // the descendants that got endSig (treeAlive sends it to the others)
	streams   []*stream        // stdout's, stderr's; none with Inherit
	sigs      <-chan os.Signal // Config.Caught

	drained chan struct{}           // closed when both pumps have returned
	waits   chan syscall.WaitStatus // from waitChild: each stop, then the end
	resume  chan struct{}           // tells waitChild to wait again after a stop
	ws      syscall.WaitStatus      // how the direct child ended

	timeout  *time.Timer // Config.Timeout, when positive
	timeoutC <-chan time.Time
	kill     *time.Timer // KillAfter, from the timeout's expiry or the first forwarded ending signal
	killC    <-chan time.Time
	killFwd  bool         // kill was armed by a forwarded signal, not by the timeout
	winch    *time.Ticker // terminalPoll, with job control
	winchC   <-chan time.Time
	lastWS   *unix.Winsize  // the window size last passed on to the ptys
	contC    chan os.Signal // SIGCONT, with job control
	tstpC    chan os.Signal // SIGTSTP, with job control, from the spawn on
	keys     keyRelay       // the keyboard for a command that reads it from its stderr pty
}

// orphanReap is how often a subreaper capwrap reaps the orphans
// re-parented to it while the command runs (a zombie holds only a slot in
// the process table; one read of a children file a second costs ~50 µs).
const orphanReap = time.Second

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
	spawnMu.Lock()
	runs++
	spawnMu.Unlock()
	defer c.release()
	if err := c.start(); err != nil {
		return failStart(c.res, err)
	}
	c.watch()
	c.supervise()
	c.drain()
	return c.complete()
}

// command is the exec.Cmd for cfg: stdin inherited and a process group of
// its own, in the background of the terminal if there is one (Config.TTY),
// or its foreground group with Config.Foreground when capwrap's group holds
// the terminal. Its Err is set when Args[0] cannot be resolved.
func command(cfg Config) *exec.Cmd {
	cmd := exec.Command(cfg.Args[0], cfg.Args[1:]...)
	if err := dirCommand(cfg.Args[0]); err != nil {
		cmd.Err = err
	}
	cmd.Env = cfg.Env
	cmd.Stdin = os.Stdin
	if cfg.Stdin != nil {
		cmd.Stdin = cfg.Stdin
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
	if cfg.TTY != nil && cfg.Foreground {
		// tcgetpgrp answers only for the controlling terminal (POSIX):
		// stdin is it, and capwrap's group holds it.
		if pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil && pgrp == unix.Getpgrp() {
			cmd.SysProcAttr.Foreground = true
			cmd.SysProcAttr.Ctty = 0 // the child's fd 0 is capwrap's stdin, the terminal
		}
	}
	return cmd
}

// start opens the two streams, catches ForwardedSignals (catchForwarded)
// and spawns the child, then calls OnStart. It returns why the child could
// not be started; the streams are closed again then (c.sigs is left to
// release).
func (c *child) start() error {
	c.sigs = c.cfg.Caught
	if len(c.sigs) > 0 {
		// What arrived while capwrap was starting: a signal that asks to
		// end cancels the run before the command starts (the caller
		// reports it with a receipt); any other has no one to go to.
		if err := cancelledBeforeStart(c.sigs); err != nil {
			return err
		}
	}
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
			c.mark = c.cfg.StdoutMark + "=" + FileID(ss[0].w)
			cmd.Env = append(withoutVar(cmd.Env, c.cfg.StdoutMark), c.mark)
		}
		for _, s := range streams {
			if !s.pty {
				s.id = FileID(s.w)
			}
		}
	}
	if wd := c.cfg.Watchdog; wd != nil && c.mark != "" {
		// Before the spawn: should capwrap die before it arms the
		// watchdog with the group, the helper finds the command by it.
		_ = wd.markWith(c.mark)
	}
	if becomeSubreaper() {
		// Orphans re-parented to capwrap are reaped on a slow tick (and
		// at every walk of the tree), not on SIGCHLD: a SIGCHLD handler
		// made a Ctrl-Z in a terminal miss capwrap's stop now and then
		// (TestTerminalCtrlZBgKillPipeline failed 2 of 12 runs with
		// it, 0 of 9 without).
		c.reap = time.NewTicker(orphanReap)
		c.chldC = c.reap.C
	}

	// Signals have been caught since capwrap started (sigcatch), so
	// none is lost around the spawn; caught signals revert to their
	// default in the child at exec, ignored ones stay ignored.
	spawnMu.Lock()
	pid, err := startCmd(cmd)
	if err == nil {
		own(pid)
	}
	spawnMu.Unlock()
	for _, s := range streams {
		s.w.Close()
	}
	if err != nil {
		for _, s := range streams {
			s.r.Close()
		}
		return err
	}
	c.streams, c.pid = streams, pid
	c.res.PID = c.pid
	if wd := c.cfg.Watchdog; wd != nil {
		_ = wd.arm(c.pid) // a helper gone already can do nothing either way
	}
	if c.jobControl() {
		// From here capwrap is, or may become, a background process of the
		// terminal: its writes there (TOSTOP) and the hand-overs must not
		// stop it. The child has already exec'd, so it inherits neither
		// the ignore nor the catch of SIGTSTP, which capwrap relays to it
		// (see stopped). release reclaims the terminal whatever happens
		// from here on.
		signal.Ignore(syscall.SIGTTOU, syscall.SIGTTIN)
		c.tstpC = make(chan os.Signal, 1)
		signal.Notify(c.tstpC, syscall.SIGTSTP)
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
	// With the terminal handed to the child, SIGWINCH from the terminal
	// goes to the child's group, not to capwrap: capwrap watches the window
	// size itself and passes changes on to the ptys (terminalPoll).
	if c.jobControl() {
		c.winch = time.NewTicker(terminalPoll)
		c.winchC = c.winch.C
	}
	c.lastWS = currentWinsize()
	// A capwrap stopped from outside (kill -STOP) and continued: the
	// child, in a group of its own, is continued with it.
	if c.jobControl() {
		c.contC = make(chan os.Signal, 1)
		signal.Notify(c.contC, syscall.SIGCONT)
	}
}

// supervise runs until the direct child exits, forwarding signals (and,
// KillAfter after one that asks the child to end, SIGKILL), relaying
// SIGTSTP and SIGCONT to the child's group, passing window-size changes on
// to the ptys, enforcing the timeout (SIGTERM, then SIGKILL KillAfter
// later) and doing job control for a stopped child (stopped). When the
// child has exited it records how in c.ws and takes the terminal back.
func (c *child) supervise() {
	for {
		select {
		case sig := <-c.sigs:
			c.relay(sig)
		case sig := <-c.cfg.Signals:
			c.relay(sig)
		case <-c.tstpC:
			// Ctrl-Z while capwrap's group holds the terminal (or a kill
			// -TSTP of capwrap): the child stops, and stopped then stops
			// capwrap's job, so the shell sees it stopped.
			_ = syscall.Kill(-c.pid, syscall.SIGTSTP)
		case <-c.contC:
			_ = syscall.Kill(-c.pid, syscall.SIGCONT)
		case <-c.winchC:
			if ws := currentWinsize(); c.cfg.PTY != PTYNone && *ws != *c.lastWS {
				c.lastWS = ws
				forward(c.pid, syscall.SIGWINCH, c.streams)
			}
			c.checkKeys()
			c.checkStoppedMember()
		case <-c.timeoutC:
			c.expire()
		case <-c.killC:
			c.escalate()
		case <-c.chldC:
			reapOrphans(ownChildren(othersOwn(c.pid)))
		case ws := <-c.waits:
			if !ws.Stopped() {
				c.cfg.Watchdog.exited(c.cfg.LeaveDescendants) // should capwrap die while draining, the command did not end with it
				c.ws = ws
				if c.jobControl() {
					c.keys.stop(c.cfg.TTY)
					c.reclaimForeground()
				}
				return
			}
			if c.jobControl() {
				c.stopped(ws.StopSignal())
			} else if sig := ws.StopSignal(); sig == syscall.SIGTTIN || sig == syscall.SIGTTOU {
				// Stopped for a terminal capwrap does not hand over: it
				// waits for a signal or --timeout. The receipt says why.
				c.res.WaitedForTerminal = true
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
	if c.kill != nil {
		c.awaitTree()
	}
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
		case <-c.chldC:
			reapOrphans(ownChildren(othersOwn(c.pid)))
		}
	}
}

// awaitTree is the drain after --timeout or a forwarded ending signal
// (capwrap stop): the streams are read on, with no drain clock, until
// they reach end-of-file or the command's group and the run's
// descendants have all ended, escalating at kill-after, so that their
// last words are captured and a clean stop is complete (SPEC §3). It is
// bounded by kill-after plus a second for the SIGKILL to take; drain's
// own clock starts after it.
func (c *child) awaitTree() {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var killed time.Time
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
		case <-c.chldC:
		case <-tick.C:
			if !c.treeAlive() {
				return
			}
			if c.killC == nil {
				if killed.IsZero() {
					killed = time.Now()
				} else if time.Since(killed) > time.Second {
					return
				}
			}
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
	if c.kill == nil {
		c.leftBehind()
	}
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
// in OnStart): the watchdog disarmed, the timers, the SIGCONT and SIGTSTP
// watches, the terminal taken back from the child's group. The forwarded
// signals stay caught (Config.Caught): one that arrives while capwrap
// publishes the receipt does not cut it short.
func (c *child) release() {
	c.cfg.Watchdog.Disarm()
	if c.reap != nil {
		c.reap.Stop()
	}
	if c.pid != 0 {
		disown(c.pid)
	}
	spawnMu.Lock()
	runs--
	spawnMu.Unlock()
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
	if c.tstpC != nil {
		signal.Stop(c.tstpC)
	}
	if c.pid != 0 && c.jobControl() {
		c.keys.stop(c.cfg.TTY)
		c.reclaimForeground()
	}
}

// relay passes a signal capwrap received on to the child's group and notes
// it in Result.Forwarded. The first one that asks the child to end arms
// the kill-after timer (SPEC §3, as timeout -k); later ones do not move it.
func (c *child) relay(sig os.Signal) {
	killAfter := time.Duration(-1)
	if r, ok := sig.(Request); ok {
		sig, killAfter = r.Sig, r.KillAfter
	}
	s := sig.(syscall.Signal)
	c.res.noteForwarded(sig)
	switch {
	case ending(s):
		// To the group and to the descendants that left it (setsid),
		// those first (signalTree); as a stopped group would only act on
		// it once continued (as timeout(1) does), SIGCONT follows.
		c.signalTree(s, syscall.SIGCONT)
	case s == syscall.SIGKILL:
		// A SIGKILL asked for ends the whole tree, as escalate does.
		c.signalTree(syscall.SIGKILL)
	default:
		forward(c.pid, sig, c.streams)
	}
	switch {
	case s == syscall.SIGKILL:
	case killAfter >= 0:
		// A stop's own --kill-after governs its escalation, whatever
		// armed the timer before (issue 26).
		if c.kill != nil {
			c.kill.Stop()
		}
		c.armKillAfter(killAfter, true)
	case ending(s) && c.kill == nil:
		c.armKill(true)
	}
}

// Request is a signal from elsewhere (Config.Signals: `capwrap stop`,
// SPEC §10) with the kill-after that governs its escalation. Sent on
// Config.Signals, it is handled as a bare syscall.Signal is, except that
// the kill-after timer is armed anew with KillAfter, whatever the signal
// (SIGKILL aside), replacing Config.KillAfter and any timer armed before:
// SIGKILL to the tree KillAfter later if it still runs. A negative
// KillAfter keeps the bare signal's rule (only a signal that asks the
// command to end arms the timer, with Config.KillAfter, once).
type Request struct {
	Sig       syscall.Signal
	KillAfter time.Duration
}

// String names the signal, as syscall.Signal does.
func (r Request) String() string { return r.Sig.String() }

// Signal makes Request an os.Signal.
func (r Request) Signal() {}

// expire is --timeout: SIGTERM to the group now, and the kill-after timer
// for SIGKILL KillAfter later, unless a forwarded signal armed it first.
func (c *child) expire() {
	c.res.TimedOut = true
	// The group and every descendant, in whatever group; SIGCONT so that
	// a stopped process receives it too.
	c.signalTree(syscall.SIGTERM, syscall.SIGCONT)
	if c.kill == nil {
		c.armKill(false)
	}
}

// armKill starts the kill-after timer; forwarded says a forwarded signal,
// not the timeout, armed it.
func (c *child) armKill(forwarded bool) {
	c.armKillAfter(c.cfg.KillAfter, forwarded)
}

// armKillAfter is armKill with kill-after d (a Request's).
func (c *child) armKillAfter(d time.Duration, forwarded bool) {
	c.res.KillAfter = d // the grace Escalated refers to
	c.kill = time.NewTimer(d)
	c.killC = c.kill.C
	c.killFwd = forwarded
}

// escalate is the kill-after timer firing: SIGKILL to the group, once, if
// it still has a live member. After a forwarded signal, Escalated says so.
func (c *child) escalate() {
	c.killC = nil
	if !c.treeAlive() {
		return
	}
	c.signalTree(syscall.SIGKILL)
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
	for c.treeAlive() {
		select {
		case <-c.killC:
			c.escalate()
			return
		case <-tick.C:
		}
	}
}

// setState sets State, and ExitCode or Signal, from the direct child's end:
// signaled or exited (TimedOut, when set, says the timeout caused it).
func (r *Result) setState(ws syscall.WaitStatus) {
	switch {
	case ws.Signaled():
		r.State, r.Signal = StateSignaled, ws.Signal()
	default:
		r.State, r.ExitCode = StateExited, ws.ExitStatus()
	}
}

// forward passes a signal on to the child's process group. A window-size
// change is first copied to the ptys, so the child reads the new size when
// SIGWINCH reaches it.
func forward(pgid int, sig os.Signal, streams []*stream) {
	if sig == syscall.SIGWINCH {
		ws := currentWinsize()
		for _, s := range streams {
			if s.pty {
				_ = setWinsize(s.r, ws)
			}
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

// groupAlive reports whether the process group has a member that is not a
// zombie. kill(-pgid, 0) alone cannot tell: an orphaned zombie that init has
// not reaped yet still counts there, so the members' states are looked at
// (liveMember, per system).
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	return liveMember(pgid)
}

// ErrCancelled is the StartErr of a run that a signal ended before the
// command started (SIGINT, SIGTERM, SIGHUP or SIGQUIT caught while capwrap
// was starting, issue 23): Result.Forwarded names the signal, and the
// command was not run.
var ErrCancelled = errors.New("cancelled before the command started")

// cancelledBeforeStart looks at the signals that arrived before the spawn:
// the first that asks to end (ending) makes the run's start error, an
// ErrCancelled naming it; SIGUSR1, SIGUSR2 and SIGWINCH have no one to go
// to yet and are dropped.
func cancelledBeforeStart(sigs <-chan os.Signal) error {
	for {
		select {
		case sig := <-sigs:
			if s := sig.(syscall.Signal); ending(s) {
				return &cancelError{s}
			}
		default:
			return nil
		}
	}
}

// cancelError is ErrCancelled with the signal that caused it.
type cancelError struct{ sig syscall.Signal }

func (e *cancelError) Error() string {
	return unix.SignalName(e.sig) + " received before the command started"
}
func (e *cancelError) Unwrap() error { return ErrCancelled }

// The reasons a command could not be started that a shell tells apart
// (POSIX: exit 127 and 126), found in Result.StartErr with errors.Is.
var (
	ErrNotFound      = errors.New("command not found")
	ErrNotExecutable = errors.New("command not executable")
)

// StartError is Result.StartErr for a command not found or not
// executable: Kind is ErrNotFound or ErrNotExecutable, Err what the system
// said. Its text is Err's; errors.Is finds both.
type StartError struct {
	Kind, Err error
}

func (e *StartError) Error() string   { return e.Err.Error() }
func (e *StartError) Unwrap() []error { return []error{e.Kind, e.Err} }

// failStart records a spawn failure, classifying it as not found (127) or
// found but not executable (126) the way POSIX shells do. An empty command
// name is not found, as sh and env say; os/exec reports it only by the
// text of an unexported error.
func failStart(res Result, err error) Result {
	res.State = StateNotStarted
	res.StartErr = err
	var cancel *cancelError
	switch {
	case errors.As(err, &cancel):
		res.Forwarded = cancel.sig
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist), err.Error() == "exec: no command":
		res.StartErr = &StartError{ErrNotFound, err}
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC),
		errors.Is(err, syscall.EISDIR):
		res.StartErr = &StartError{ErrNotExecutable, err}
	}
	res.Ended = time.Now()
	return res
}

// pump copies the stream into its writer until end-of-file (or EIO, which
// is how a pty master reports that the last slave closed) or until the
// drain deadline interrupts the wait; then it reads what the stream
// already holds (readBuffered) and stops, cut unless that reached the end.
// Each read, and the hand-over of its bytes, is under the streams' order
// lock (see take).
func (s *stream) pump() {
	defer s.finish()
	rc, err := s.r.SyscallConn()
	if err != nil {
		return
	}
	for {
		var n int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, rerr = s.take(int(fd))
			return rerr != unix.EAGAIN
		})
		s.closeAsked()
		if p := s.peer; p != nil {
			p.closeAsked()
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			s.eof = s.readBuffered()
			s.cut = !s.eof && !s.closed.Load()
			return
		case err != nil:
			return // closed (ErrCloseStream)
		case n == 0 && rerr == nil, rerr == unix.EIO: // EIO: a pty's last slave closed
			s.eof = true
			return
		case rerr != nil:
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
func (s *stream) readBuffered() (eof bool) {
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
			n, err = s.take(int(fd))
		}); cerr != nil {
			return 0, cerr
		}
		s.closeAsked()
		if p := s.peer; p != nil {
			p.closeAsked()
		}
		return n, err
	}
	for {
		last := left <= 0
		n, err := read()
		if n > 0 {
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
		pty := cfg.PTY.has(i)
		if pty {
			r, w, err = openPTY()
		} else {
			r, w, err = os.Pipe()
			if err == nil {
				// Through SyscallConn, not Fd: Fd would make the read
				// end blocking and so break the drain deadline.
				if rc, cerr := r.SyscallConn(); cerr == nil {
					_ = rc.Control(func(fd uintptr) {
						growPipe(fd, pipeSize)
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
		ss[i] = &stream{r: r, w: w, dst: dsts[i], pty: pty, buf: make([]byte, ReadBufferSize)}
		if pty {
			ss[i].slave = w.Name() // /dev/pts/N: the key relay asks it what is unread
		}
	}
	pair(ss[0], ss[1])
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
