//go:build unix

package main

// The job verbs of SPEC §10, wait and stop: flags and usage errors here,
// the waiting, signalling and printing in internal/runner.

import (
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/capwrap/capwrap/internal/job"
	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/store"
)

const (
	waitUsage = "capwrap wait [--timeout D] ID..."
	stopUsage = "capwrap stop [--signal SIG] [--kill-after D] ID..."
)

// parseIDs parses a job verb's flags (parseVerb) and resolves its IDs (at
// least one, each any unique prefix). A nil *store.Dir says the verb is
// over, with the status: its help printed (0), or a failure said.
func parseIDs(fs *pflag.FlagSet, args []string, usage string, o *options, stdout io.Writer, d diag) (*store.Dir, []string, int) {
	if st, done := parseVerb(fs, args, -1, usage, o, stdout, d); done {
		return nil, nil, st
	}
	dir, st := openCaptures(o, d)
	if dir == nil {
		return nil, nil, st
	}
	var ids []string
	for _, a := range fs.Args() {
		id, st := resolveID(dir, a, d)
		if st != 0 {
			dir.Close()
			return nil, nil, st
		}
		ids = append(ids, id)
	}
	return dir, ids, 0
}

// view is how the job verbs show a job: the global flags' budgets.
func view(o *options, dir *store.Dir, stdout io.Writer, d diag) job.View {
	return job.View{Dir: dir, DirArg: dir.ReadArg(os.Getenv), StdoutChars: o.stdoutChars, StderrChars: o.stderrChars,
		PreviewBytes: int(o.previewBytes), Mode: runner.ModePreview, Stdout: stdout, Stderr: d.w, Diag: d,
		Stall: o.stallTimeout}
}

// verbWait is `capwrap wait [--timeout D] ID...` (SPEC §10): it exits with
// the (last) job's status, or 75 when --timeout hands a running job back.
func verbWait(args []string, o *options, stdout io.Writer, d diag) (int, syscall.Signal) {
	fs := verbFlags("wait")
	var timeout time.Duration
	fs.Var(durationVar(&timeout, 0), "timeout", "hand a job back (exit 75) if it still runs after this long (0: wait for its end)")
	dir, ids, st := parseIDs(fs, args, waitUsage, o, stdout, d)
	if dir == nil {
		return st, 0
	}
	defer dir.Close()
	if timeout < 0 {
		d.Errorf("wait: invalid --timeout %v: must not be negative", timeout)
		return verbUsage, 0
	}
	if err := o.checkBounds(previewBounds...); err != nil {
		d.Errorf("wait: %v", err)
		return verbUsage, 0
	}
	return job.Wait(view(o, dir, stdout, d), ids, timeout)
}

// verbStop is `capwrap stop [--signal SIG] [--kill-after D] ID...`.
func verbStop(args []string, o *options, stdout io.Writer, d diag) int {
	fs := verbFlags("stop")
	sigName := fs.String("signal", "TERM", "the signal to send first: a name (TERM, SIGINT) or a number")
	var killAfter time.Duration
	fs.Var(durationVar(&killAfter, 5*time.Second), "kill-after", "then SIGKILL after this long")
	dir, ids, st := parseIDs(fs, args, stopUsage, o, stdout, d)
	if dir == nil {
		return st
	}
	defer dir.Close()
	if err := o.checkBounds(previewBounds...); err != nil {
		d.Errorf("stop: %v", err)
		return verbUsage
	}
	sig := parseSignal(*sigName)
	switch {
	case sig == 0:
		d.Errorf("stop: invalid --signal %q: want a signal name such as TERM, INT, HUP, KILL, or its number", *sigName)
		return verbUsage
	case killAfter < 0:
		d.Errorf("stop: invalid --kill-after %v: must not be negative", killAfter)
		return verbUsage
	}
	return job.Stop(view(o, dir, stdout, d), ids, sig, killAfter)
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
