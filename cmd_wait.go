//go:build unix

package main

// The job verbs of SPEC §10, wait (here) and stop (cmd_stop.go): flags
// and usage errors here, the waiting, signalling and printing in
// internal/job, which says its own errors and returns the exit status.

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/job"
	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/store"
)

// waitOptions are the flags of `capwrap wait`.
type waitOptions struct {
	timeout time.Duration
	// notify and cursor are --notify and --cursor: report each job's end
	// once to consumer cursor instead of showing it (SPEC §8).
	notify bool
	cursor string
	raise  bool
	flags  *pflag.FlagSet
}

func (o *waitOptions) addFlags(fs *pflag.FlagSet) {
	o.flags = fs
	fs.Var(durationVar(&o.timeout, 0), "timeout", "hand a job back (exit 75) if it still runs after this long (0: wait for its end)")
	fs.BoolVar(&o.notify, "notify", false, "print one line per job whose end this consumer was not told yet, and record it")
	fs.StringVar(&o.cursor, "cursor", store.DefaultCursor, "with --notify: the consumer's name, 1 to 64 of A-Z a-z 0-9 . _ -")
	fs.BoolVar(&o.raise, "raise", false, "when a signal ended the (last) job, re-raise it on capwrap instead of exiting 128+N")
}

func newWaitCommand() command {
	var o waitOptions
	return command{nargs: -1, addFlags: o.addFlags,
		run: func(e *env, args []string) error { return runWait(e, o, args) }}
}

// runWait is `capwrap wait [--timeout D] [--raise] ID...` (SPEC §10): it
// exits with the (last) job's status (128+N when signal N ended it, the
// shell's convention; issue 26: not re-raised into the caller, unless
// --raise), or 75 when --timeout hands a running job back. With --notify
// it reports ends once per consumer instead (job.Notify).
func runWait(e *env, o waitOptions, args []string) error {
	dir, ids, err := openJobs(e, args)
	if err != nil {
		return err
	}
	defer dir.Close()
	usage := fmt.Sprintf("usage: %s (capwrap help wait)", synopsis("wait"))
	switch {
	case o.timeout < 0:
		return usageError{msg: fmt.Sprintf("wait: invalid --timeout %v: must not be negative", o.timeout)}
	case o.flags.Changed("cursor") && !o.notify:
		return usageError{"wait: --cursor needs --notify", usage}
	case !store.ValidCursorName(o.cursor):
		return usageError{fmt.Sprintf("wait: invalid --cursor %q: want 1 to 64 of A-Z a-z 0-9 . _ -", o.cursor), usage}
	case o.notify:
		return exitWith(job.Notify(jobView(e, dir), ids, o.cursor, o.timeout), 0)
	}
	if err := e.global.checkBounds(previewBounds...); err != nil {
		return usageError{msg: "wait: " + err.Error()}
	}
	status, raised := job.Wait(jobView(e, dir), ids, o.timeout)
	if !o.raise {
		raised = 0
	}
	return exitWith(status, raised)
}

// openJobs opens the tool-outputs directory and resolves the IDs of a job
// verb (each any unique prefix); the caller closes dir.
func openJobs(e *env, args []string) (*store.Dir, []string, error) {
	dir, err := openCaptures(e)
	if err != nil {
		return nil, nil, err
	}
	ids, err := resolveIDs(dir, args)
	if err != nil {
		dir.Close()
		return nil, nil, err
	}
	return dir, ids, nil
}

// jobView is how the job verbs show a job: the global flags' budgets.
func jobView(e *env, dir *store.Dir) job.View {
	o := e.global
	return job.View{Dir: dir, DirArg: dir.ReadArg(e.getenv), StdoutChars: o.stdoutChars, StderrChars: o.stderrChars,
		PreviewBytes: int(o.previewBytes), Mode: runner.ModePreview, Stdout: e.stdout, Stderr: e.stderr, Diag: e.d,
		Stall: o.stallTimeout}
}
