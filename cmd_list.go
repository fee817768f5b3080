//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
)

// listOptions are the flags of `capwrap list`.
type listOptions struct {
	json, running bool
	limit         int
}

func (o *listOptions) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.json, "json", false, "print a JSON array instead of a table")
	fs.BoolVar(&o.running, "running", false, "only the captures whose command still runs (background jobs among them)")
	fs.IntVar(&o.limit, "limit", 0, "at most this many captures, the newest (0: all)")
}

func newListCommand() command {
	var o listOptions
	return command{nargs: 0, addFlags: o.addFlags,
		run: func(e *env, args []string) error { return runList(e, o, args) }}
}

// runList is `capwrap list [--json] [--running] [--limit N]` (SPEC §8):
// the captures, newest first, with process state, capture state, sizes,
// age and command.
func runList(e *env, o listOptions, _ []string) error {
	if o.limit < 0 {
		return usageError{msg: fmt.Sprintf("list: invalid --limit %d: must not be negative", o.limit)}
	}
	dir, err := openCaptures(e)
	if err != nil {
		return err
	}
	defer dir.Close()
	entries, err := dir.List()
	if u, ok := errors.AsType[*store.UnsafeError](err); ok {
		return failure{u.Error(), u.Hint()}
	} else if err != nil {
		return failure{msg: fmt.Sprintf("cannot list %s: %v", dir.Path(), store.UnwrapPath(err))}
	}
	now := time.Now()
	items := make([]listItem, 0, len(entries))
	for _, c := range entries {
		if o.running && !(c.Running && !c.Final) {
			continue
		}
		items = append(items, listItemOf(dir, c, now))
	}
	if o.limit > 0 && len(items) > o.limit {
		items = items[:o.limit]
	}
	switch {
	case o.json:
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(items); err != nil {
			return failure{msg: fmt.Sprintf("cannot write the list: %v", err)}
		}
	case len(items) == 0 && o.running:
		e.d.Hintf("no capture in %s is running", dir.Path())
	case len(items) == 0:
		e.d.Hintf("no captures in %s", dir.Path())
	default:
		printList(e, items)
	}
	return nil
}

// printList prints the list's table.
func printList(e *env, items []listItem) {
	fmt.Fprintf(e.stdout, "%-27s  %-16s  %-29s  %10s  %10s  %5s  %s\n", "ID", "PROCESS", "CAPTURE", "STDOUT", "STDERR", "AGE", "COMMAND")
	size := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return text.Bytes(*p)
	}
	for _, it := range items {
		proc := string(receipt.ProcessUnknown)
		if it.Process.State != nil {
			proc = string(*it.Process.State)
		}
		switch {
		case it.Process.Signal != nil:
			proc += " " + *it.Process.Signal
		case it.Process.ExitCode != nil:
			proc += fmt.Sprintf(" %d", *it.Process.ExitCode)
		}
		capState := receipt.Capture{State: it.Capture.State, Reason: it.Capture.Reason}.String()
		fmt.Fprintf(e.stdout, "%-27s  %-16s  %-29s  %10s  %10s  %5s  %s\n", it.ID, proc, capState,
			size(it.StdoutBytes), size(it.StderrBytes), shortAge(time.Duration(it.AgeSeconds)*time.Second), displayCommand(it.Command, 60))
	}
}

// shortAge formats d as the list's AGE column: 45s, 12m, 3h, 2d.
func shortAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// displayCommand renders a sanitized argv on one line for a terminal:
// shell-quoted, control characters escaped, cut to max characters.
func displayCommand(argv []string, max int) string {
	if len(argv) == 0 {
		return "-"
	}
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = text.ShellQuote(a)
	}
	var b strings.Builder
	n := 0
	for _, r := range strings.Join(parts, " ") {
		s := string(r)
		if r == utf8.RuneError || unicode.IsControl(r) {
			s = strings.Trim(fmt.Sprintf("%q", r), "'")
		}
		if n+utf8.RuneCountInString(s) > max {
			b.WriteString("…")
			break
		}
		b.WriteString(s)
		n += utf8.RuneCountInString(s)
	}
	return b.String()
}

// listItem is one capture in `capwrap list --json`.
type listItem struct {
	ID          string      `json:"id"`
	Dir         string      `json:"dir"`
	Running     bool        `json:"running"`
	Process     listProcess `json:"process"`
	Capture     listCapture `json:"capture"`
	StdoutBytes *int64      `json:"stdout_bytes"`
	StderrBytes *int64      `json:"stderr_bytes"`
	StartedAt   string      `json:"started_at"`
	EndedAt     *string     `json:"ended_at"`
	AgeSeconds  int64       `json:"age_seconds"`
	Command     []string    `json:"command"`
	ReceiptErr  *string     `json:"receipt_error,omitempty"`
}

type listProcess struct {
	State    *receipt.ProcessState `json:"state"` // null when unknown (abandoned)
	ExitCode *int                  `json:"exit_code"`
	Signal   *string               `json:"signal"`
}

type listCapture struct {
	State  receipt.CaptureState `json:"state"`
	Reason *receipt.Reason      `json:"reason"`
}

// listItemOf is capture e of dir as `capwrap list` shows it at time now:
// its states, command and times as `capwrap show` prints them
// (store.Dir.Presented decides for both), its sizes as found on disk.
func listItemOf(dir *store.Dir, e store.Entry, now time.Time) listItem {
	running := e.Running && !e.Final
	it := listItem{ID: e.ID, Dir: dir.Path() + "/" + e.ID, Running: running, StartedAt: e.StartedAt().Format(time.RFC3339)}
	var state receipt.ProcessState
	state, it.Process.ExitCode, it.Process.Signal = e.ProcessStatus()
	if state != receipt.ProcessUnknown {
		it.Process.State = &state
	}
	c := e.CaptureStatus()
	it.Capture.State, it.Capture.Reason = c.State, c.Reason
	if e.Stdout.Name != "" {
		it.StdoutBytes = new(e.Stdout.Size)
	}
	if e.Stderr.Name != "" {
		it.StderrBytes = new(e.Stderr.Size)
	}
	if rc := dir.Presented(e, now); rc != nil {
		it.Command = rc.Command
		if rc.StartedAt != nil {
			it.StartedAt = *rc.StartedAt
		}
		if !running {
			it.EndedAt = rc.EndedAt
		}
	}
	if e.ReceiptErr != nil {
		it.ReceiptErr = new(e.ReceiptErr.Error())
	}
	if running {
		it.AgeSeconds = int64(now.Sub(e.StartedAt()).Seconds())
	} else {
		it.AgeSeconds = int64(now.Sub(dir.EndedAt(e, now)).Seconds())
	}
	return it
}
