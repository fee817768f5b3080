//go:build unix

package main

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/capwrap/capwrap/internal/job"
)

// stopOptions are the flags of `capwrap stop`.
type stopOptions struct {
	signal    string
	killAfter time.Duration
	raise     bool
	flags     *pflag.FlagSet
}

func (o *stopOptions) addFlags(fs *pflag.FlagSet) {
	o.flags = fs
	fs.StringVar(&o.signal, "signal", "TERM", "the signal to send first: a name (TERM, SIGINT) or a number")
	fs.Var(durationVar(&o.killAfter, 5*time.Second), "kill-after", "then SIGKILL after this long (default: the job's own --kill-after)")
	fs.BoolVar(&o.raise, "raise", false, "when a signal ended the (last) job, re-raise it on capwrap instead of exiting 0")
}

func newStopCommand() command {
	var o stopOptions
	return command{nargs: -1, addFlags: o.addFlags,
		run: func(e *env, args []string) error { return runStop(e, o, args) }}
}

// runStop is `capwrap stop [--signal SIG] [--kill-after D] [--raise] ID...`
// (SPEC §10): it exits 0 once the jobs have ended; with --raise, a signal
// that ended the last job is re-raised (issue 26: by default a stop's
// caller is not killed by its job's signal). Without --kill-after, the
// job's launch-time --kill-after governs the escalation.
func runStop(e *env, o stopOptions, args []string) error {
	dir, ids, err := openJobs(e, args)
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := e.global.checkBounds(previewBounds...); err != nil {
		return usageError{msg: "stop: " + err.Error()}
	}
	sig := parseSignal(o.signal)
	switch {
	case sig == 0:
		return usageError{msg: fmt.Sprintf("stop: invalid --signal %q: want a signal name such as TERM, INT, HUP, KILL, or its number", o.signal)}
	case o.killAfter < 0:
		return usageError{msg: fmt.Sprintf("stop: invalid --kill-after %v: must not be negative", o.killAfter)}
	}
	killAfter := o.killAfter
	if !o.flags.Changed("kill-after") {
		killAfter = -1
	}
	status, raised := job.Stop(jobView(e, dir), ids, sig, killAfter)
	if !o.raise {
		raised = 0
	}
	return exitWith(status, raised)
}

// parseSignal reads "TERM", "SIGTERM", "term" or "15"; 0 when it is none.
func parseSignal(s string) syscall.Signal {
	s = strings.ToUpper(strings.TrimSpace(s))
	if n, err := strconv.Atoi(s); err == nil {
		if n > 0 && n < 65 {
			return syscall.Signal(n)
		}
		return 0
	}
	if !strings.HasPrefix(s, "SIG") {
		s = "SIG" + s
	}
	return unix.SignalNum(s)
}
