//go:build unix

package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/store"
)

// pruneOptions are the flags of `capwrap prune`.
type pruneOptions struct {
	olderThan time.Duration
	id        string
	keepLast  int
	dryRun    bool
	// flags is the flag set that filled the options: which of
	// --older-than, --keep-last and --id was given.
	flags *pflag.FlagSet
}

func (o *pruneOptions) addFlags(fs *pflag.FlagSet) {
	o.flags = fs
	fs.Var(durationVar(&o.olderThan, 0), "older-than", "delete the captures that ended longer ago than this (10m, 12h, 7d)")
	fs.StringVar(&o.id, "id", "", "delete this capture (any unique prefix of its ID)")
	fs.IntVar(&o.keepLast, "keep-last", 0, "keep the N newest captures that are not running, delete the other ones")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print what would be deleted, delete nothing")
}

func newPruneCommand() command {
	var o pruneOptions
	return command{nargs: 0, addFlags: o.addFlags,
		run: func(e *env, args []string) error { return runPrune(e, o, args) }}
}

// runPrune is `capwrap prune --older-than DURATION | --keep-last N | --id
// ID [--dry-run]` (SPEC §8), the only verb that deletes. A running capture
// is never touched. Age is the time since the capture ended (for an
// abandoned one, since its last write); --keep-last counts the captures
// that are not running, newest first by start time as list orders them
// (issue 26: the remedy a full quota names, store.Dir.AdvisePrune).
func runPrune(e *env, o pruneOptions, _ []string) error {
	given := 0
	for _, f := range []string{"older-than", "keep-last", "id"} {
		if o.flags.Changed(f) {
			given++
		}
	}
	switch {
	case given != 1:
		return usageError{"prune: give exactly one of --older-than, --keep-last and --id", "usage: " + synopsis("prune")}
	case o.flags.Changed("older-than") && o.olderThan < 0:
		return usageError{msg: fmt.Sprintf("prune: invalid --older-than %v: must not be negative", o.olderThan)}
	case o.flags.Changed("keep-last") && o.keepLast < 0:
		return usageError{msg: fmt.Sprintf("prune: invalid --keep-last %d: must not be negative", o.keepLast)}
	}
	dir, err := openCaptures(e)
	if err != nil {
		return err
	}
	defer dir.Close()
	targets, running, err := pruneTargets(dir, o)
	if err != nil {
		return err
	}
	return prune(e, dir, targets, running, o.dryRun)
}

// pruneTargets are the captures of dir that prune o removes, and the
// number of running captures it leaves alone.
func pruneTargets(dir *store.Dir, o pruneOptions) (targets []store.Entry, running int, err error) {
	if o.flags.Changed("id") {
		c, err := entryOf(dir, o.id)
		if err != nil {
			return nil, 0, err
		}
		if c.Running {
			return nil, 0, failure{msg: fmt.Sprintf("capture %s is running: prune never touches a running capture", c.ID)}
		}
		return []store.Entry{c}, 0, nil
	}
	entries, err := dir.List()
	if err != nil {
		return nil, 0, failure{msg: fmt.Sprintf("cannot list %s: %v", dir.Path(), store.UnwrapPath(err))}
	}
	now := time.Now()
	kept := 0
	for _, c := range entries { // newest first
		switch {
		case c.Running:
			running++
		case o.flags.Changed("keep-last"):
			if kept++; kept > o.keepLast {
				targets = append(targets, c)
			}
		case now.Sub(dir.EndedAt(c, now)) > o.olderThan:
			targets = append(targets, c)
		}
	}
	return targets, running, nil
}

// prune removes targets from dir (with dryRun, only says so), one line
// each, then a total that mentions the running captures left alone. A
// capture it cannot remove is a failure; it goes on with the others.
func prune(e *env, dir *store.Dir, targets []store.Entry, running int, dryRun bool) error {
	verb, what := "removed", "freed"
	if dryRun {
		verb, what = "would remove", "would free"
	}
	var freed int64
	var fails []error
	n := 0
	for _, c := range targets {
		size := c.Stdout.Size + c.Stderr.Size
		state := c.CaptureStatus().String()
		if !dryRun {
			if err := dir.Remove(c.ID); errors.Is(err, store.ErrRunning) {
				e.d.Warnf("capture %s started running again; not touched", c.ID)
				continue
			} else if err != nil {
				fails = append(fails, failure{msg: fmt.Sprintf("cannot remove %s/%s: %v", dir.Path(), c.ID, store.UnwrapPath(err))})
				continue
			}
		}
		n++
		freed += size
		fmt.Fprintf(e.stdout, "%s %s  %s  %s\n", verb, c.ID, text.Bytes(size), state)
	}
	fmt.Fprintf(e.stdout, "%d capture%s, %s %s", n, text.Plural(n), what, text.Bytes(freed))
	if running > 0 {
		fmt.Fprintf(e.stdout, "; %d running capture%s not touched", running, text.Plural(running))
	}
	fmt.Fprintln(e.stdout)
	return errors.Join(fails...)
}
