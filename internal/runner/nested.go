package runner

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/capwrap/capwrap/internal/sigcatch"
	"github.com/capwrap/capwrap/wrap"
)

// passThrough runs a nested capwrap (SPEC §1: not captured twice) with
// capwrap's own stdout and stderr: the inner capwrap captures, previews and
// prints its receipt; this one only enforces --timeout, forwards signals,
// keeps the watchdog and exits with the inner one's status.
func passThrough(cfg Config) *Outcome {
	wd, err := wrap.StartWatchdog(cfg.KillAfter)
	if err != nil {
		cfg.Diag.Warnf("cannot start the watchdog (%v): should capwrap be killed, the command would outlive it", err)
	}
	waitForWatchdog(wd, cfg.Getenv)
	tty := openJobTTY(ChooseMode(cfg.Mode, cfg.Stdin, cfg.Stdout, cfg.Stderr), cfg.Stdin, cfg.Stderr)
	if tty != nil {
		defer tty.Close()
	}
	o := &Outcome{Launched: time.Now()}
	// The environment as it is: the inner capwrap of `capwrap -- capwrap --
	// CMD` is the one that captures, and an inner one under EnvNested
	// finds it set already. Without it, EnvNested is set to a value that
	// is no pipe's (passThroughMark): the inner capwrap captures, and
	// knows that a capwrap above it will look for what it leaves behind.
	env := cfg.Environ
	if cfg.Getenv == nil || cfg.Getenv(EnvNested) == "" {
		env = append(env[:len(env):len(env)], EnvNested+"="+passThroughMark)
	}
	o.Process = wrap.Run(wrap.Config{Args: cfg.Argv, Env: env, Stdin: cfg.Stdin, Inherit: true, Watchdog: wd, Timeout: cfg.Timeout,
		KillAfter: cfg.KillAfter, DrainTimeout: cfg.DrainTimeout, TTY: tty, Foreground: aloneAtKeyboard(cfg),
		Caught: sigcatch.C(), LeaveDescendants: cfg.LeaveDescendants})
	// No policy here to sanitize their command lines: pids only.
	for i := range o.Process.Descendants {
		o.Process.Descendants[i].Command = ""
	}
	if line := descendantsLine(o.Process); line != "" {
		cfg.Diag.Warnf("%s", line)
	}
	if err := o.Process.StartErr; err != nil && !errors.Is(err, wrap.ErrCancelled) {
		cfg.Diag.Errorf("%s", startErrorText(cfg.Argv[0], o.Process))
	}
	return o
}

// aloneAtKeyboard reports whether capwrap's stdin and stdout are both
// terminals: a person runs capwrap at a prompt, in a job of its own (in a
// pipeline one of the two would be a pipe), so its command may have the
// terminal from the start (wrap.Config.Foreground).
func aloneAtKeyboard(cfg Config) bool {
	return isatty.IsTerminal(cfg.Stdin.Fd()) && isatty.IsTerminal(cfg.Stdout.Fd())
}

// openJobTTY opens the controlling terminal for job control (wrap.Config.TTY)
// when capwrap runs as part of a person's shell job: stdin or stderr is a
// terminal, the mode is tee, or capwrap's parent is in another process
// group than capwrap (a shell started capwrap's job: `echo x | capwrap --
// sudo sh 2>&1 | cat`). SPEC §2: a command that reads /dev/tty gets it
// whatever capwrap's stdin is. Not when capwrap shares its caller's process
// group with none of those (an agent's harness that runs it, perhaps
// itself a full-screen program at that terminal): giving its command the
// terminal would take it from the harness, whose next read of it would
// stop the harness. nil when there is no controlling terminal.
func openJobTTY(mode Mode, stdin, stderr *os.File) *os.File {
	if mode != ModeTee && !isatty.IsTerminal(stdin.Fd()) && !isatty.IsTerminal(stderr.Fd()) && !shellJob() {
		return nil
	}
	return wrap.OpenTTY()
}

// shellJob reports whether capwrap's parent is in another process group
// than capwrap: a shell made capwrap's job a group of its own.
func shellJob() bool {
	pg, err := syscall.Getpgid(os.Getppid())
	return err == nil && pg != syscall.Getpgrp()
}

// EnvNested is set in the environment of every command capwrap runs to
// the identity of the pipe (or pty) that is the command's stdout (see
// wrap.Config.StdoutMark). A capwrap started somewhere below whose own
// stdout is still that pipe (a script or shell capwrap runs: `bash -c
// "capwrap -- make"`) knows its output is captured already and passes its
// command through instead of capturing it a second time (SPEC §1); one
// whose stdout is another (a program that captures it: a tmux, an agent's
// subprocess) captures as usual.
const EnvNested = "CAPWRAP_NESTED"

// passThroughMark is EnvNested's value for the command of a capwrap that
// passes it through (passThrough): no pipe's identity (wrap.FileID), so the
// capwrap it runs captures.
const passThroughMark = "-"

// waitForWatchdog makes wd's Disarm wait for the watchdog's helper to exit
// (wrap.Watchdog.WaitOnDisarm) when a capwrap runs this one (EnvNested is
// set): that capwrap is a subreaper, and would otherwise find the helper
// re-parented to it as this one exits and report it as a process its
// command left running.
func waitForWatchdog(wd *wrap.Watchdog, getenv func(string) string) {
	if getenv != nil && getenv(EnvNested) != "" {
		wd.WaitOnDisarm()
	}
}

// UnderCapwrap reports whether stdout is the pipe an enclosing capwrap
// captures, by EnvNested (read with getenv).
func UnderCapwrap(getenv func(string) string, stdout *os.File) bool {
	id := getenv(EnvNested)
	return id != "" && id == wrap.FileID(stdout)
}

// pendingWatchdog is a watchdog whose helper is being started
// (wrap.StartWatchdog) on a goroutine of its own.
type pendingWatchdog struct {
	done chan struct{} // closed once wd and err are set
	wd   *wrap.Watchdog
	err  error
}

// startWatchdog starts the run's watchdog (cfg.KillAfter) on a goroutine,
// so that prepare's own work (opening the tool-outputs directory above
// all) goes on meanwhile: the helper's spawn is a vfork, which holds the
// thread that makes it until the helper's exec, about 1.5 ms on a 2-core
// machine, a run's largest single wait before its command starts (issue
// 28). The guarantee is unchanged: spawn waits for the helper (get)
// before the command starts (SPEC §3, a command never outlives a capwrap
// that was killed).
func startWatchdog(cfg Config) *pendingWatchdog {
	p := &pendingWatchdog{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.wd, p.err = wrap.StartWatchdog(cfg.KillAfter)
	}()
	return p
}

// get waits until the helper has started, or failed to, and returns the
// watchdog (nil without one) and why it could not be started.
func (p *pendingWatchdog) get() (*wrap.Watchdog, error) {
	<-p.done
	return p.wd, p.err
}

// discard disarms the watchdog of a run that prepare refused, whose
// command never starts: its helper exits as after any run (and, under a
// capwrap, is waited for: waitForWatchdog).
func (p *pendingWatchdog) discard(cfg Config) {
	wd, _ := p.get()
	waitForWatchdog(wd, cfg.Getenv)
	wd.Disarm()
}
