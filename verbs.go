//go:build unix

package main

// The secondary verbs of SPEC §8: list, show, read (read.go) and prune read
// captures back from the tool-outputs directory and, for prune, delete
// them. They open an existing directory (never create one) and reach every
// file through the store's os.Root. Their usage errors (bad flags, unknown
// or ambiguous ID, no tool-outputs directory) exit 2; a failure to read
// exits 1.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
)

// Exit statuses of the verbs (SPEC §8).
const (
	verbFailed = 1 // the verb could not do its job (I/O error, running capture)
	verbUsage  = 2 // bad flags or arguments, unknown or ambiguous ID, no directory
)

// runVerb runs a secondary verb (SPEC §8). Usage errors of verbs exit 2.
func runVerb(name string, args []string, o *options, stdout, stderr *os.File) int {
	d := diag{stderr}
	switch name {
	case "help":
		topic := ""
		if len(args) > 0 {
			topic = args[0]
		}
		if topic == "-h" || topic == "--help" {
			topic = "help"
		}
		if !printHelp(stdout, topic) {
			d.Errorf("no help on %q", topic)
			d.Hintf("capwrap help flags lists the flags; verbs are list, show, read, prune, wait, stop")
			return 2
		}
		return 0
	case "list":
		return verbList(args, o, stdout, d)
	case "show":
		return verbShow(args, o, stdout, d)
	case "read":
		return verbRead(args, o, stdout, d)
	case "prune":
		return verbPrune(args, o, stdout, d)
	case "wait":
		status, _ := verbWait(args, o, stdout, d)
		return status
	case "stop":
		return verbStop(args, o, stdout, d)
	}
	d.Errorf("unknown verb %s", name)
	return verbUsage
}

// verbGlobals are the global flags that a verb also takes after its name,
// as if they came before it (capwrap read ID --dir X is capwrap --dir X
// read ID): every verb reads a tool-outputs directory, and wait and stop
// print previews. The other global flags are about running a command.
var verbGlobals = map[string][]string{
	"list": {"dir"}, "show": {"dir"}, "read": {"dir"}, "prune": {"dir"},
	"wait": {"dir", "stdout-chars", "stderr-chars", "preview-bytes"},
	"stop": {"dir", "stdout-chars", "stderr-chars", "preview-bytes"},
}

// verbFlags is the flag set of one verb, with -h/--help: errors returned,
// not printed; flags and the ID in any order.
func verbFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	fs.BoolP("help", "h", false, "show this verb's help")
	return fs
}

// parseVerbFlags parses a verb's flags, its own and the global ones of
// verbGlobals (set in o, where a flag after the verb beats one before it
// and its variable). help says -h or --help was given.
func parseVerbFlags(fs *pflag.FlagSet, args []string, o *options) (help bool, err error) {
	for _, name := range verbGlobals[fs.Name()] {
		if o.flags == nil {
			break
		}
		if f := o.flags.Lookup(name); f != nil {
			fs.AddFlag(f)
		}
	}
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	for _, name := range verbGlobals[fs.Name()] {
		if fs.Changed(name) {
			delete(o.fromEnv, name) // errors name the flag, not its variable
		}
	}
	help, _ = fs.GetBool("help")
	return help, nil
}

// parseVerb parses a verb's flags (parseVerbFlags) and checks it got
// exactly nargs arguments (at least -nargs when negative). done says the
// verb is over, with status: its help printed (0), or a usage error said
// (verbUsage).
func parseVerb(fs *pflag.FlagSet, args []string, nargs int, usage string, o *options, stdout io.Writer, d diag) (status int, done bool) {
	help, err := parseVerbFlags(fs, args, o)
	switch {
	case err != nil:
		d.Errorf("%s: %s", fs.Name(), flagError(err))
	case help:
		printHelp(stdout, fs.Name())
		return 0, true
	case fs.NArg() < max(nargs, -nargs):
		d.Errorf("%s: missing capture ID", fs.Name())
	case fs.NArg() > nargs && nargs >= 0:
		d.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(nargs))
	default:
		return 0, false
	}
	d.Hintf("usage: %s (capwrap help %s)", usage, fs.Name())
	return verbUsage, true
}

// openCaptures opens the tool-outputs directory chosen by --dir or
// CAPWRAP_DIR (SPEC §4) for reading back. A missing directory is an error,
// not created; when the location was not chosen and ./tool-outputs is
// missing, the fallback location of SPEC §4 is used if it exists.
func openCaptures(o *options, d diag) (*store.Dir, int) {
	path, chosen := store.Locate(o.dir, os.Getenv)
	dir, err := store.OpenExisting(path)
	if errors.Is(err, store.ErrNoDir) && !chosen {
		if fb := store.FallbackPath(os.Getenv); fb != "" {
			if fdir, ferr := store.OpenExisting(fb); ferr == nil {
				d.Warnf("%s does not exist; reading the captures in %s", path, fb)
				return fdir, 0
			}
		}
	}
	switch {
	case errors.Is(err, store.ErrNoDir):
		d.Errorf("no captures in %s: it does not exist", path)
		d.Hintf("pass --dir or set CAPWRAP_DIR to the tool-outputs directory of the captures")
		return nil, verbUsage
	case err != nil:
		d.Errorf("cannot read tool-outputs directory %s: %v", path, store.UnwrapPath(err))
		return nil, verbUsage
	}
	return dir, 0
}

// openCapture opens the tool-outputs directory and the capture named by
// idArg (any unique prefix of an ID). On failure it has said why and returns
// a nil *store.Dir with the exit status; otherwise the caller closes dir.
func openCapture(o *options, idArg string, d diag) (*store.Dir, store.Entry, int) {
	dir, st := openCaptures(o, d)
	if dir == nil {
		return nil, store.Entry{}, st
	}
	e, st := entryOf(dir, idArg, d)
	if st != 0 {
		dir.Close()
		return nil, store.Entry{}, st
	}
	return dir, e, 0
}

// entryOf resolves idArg in dir and reads that capture's entry.
func entryOf(dir *store.Dir, idArg string, d diag) (store.Entry, int) {
	id, st := resolveID(dir, idArg, d)
	if st != 0 {
		return store.Entry{}, st
	}
	e, err := dir.Entry(id)
	if err != nil {
		d.Errorf("cannot read capture %s: %v", id, store.UnwrapPath(err))
		return store.Entry{}, verbFailed
	}
	return e, 0
}

// resolveID turns a unique prefix into a full capture ID (SPEC §8), or
// says why not: usage errors, exit 2.
func resolveID(dir *store.Dir, prefix string, d diag) (string, int) {
	id, err := dir.Lookup(prefix)
	switch {
	case err == nil:
		return id, 0
	case errors.Is(err, store.ErrBadID):
		d.Errorf("%q is not a capture id", prefix)
		d.Hintf("IDs look like 20261130T030612Z-k3j4h5g6x2, or any unique prefix of one; capwrap list shows them")
	case errors.Is(err, store.ErrUnknownID):
		d.Errorf("no capture %s in %s", prefix, dir.Path())
		d.Hintf("capwrap list shows the captures")
	case errors.Is(err, store.ErrAmbiguousID):
		d.Errorf("capture id %s is ambiguous: %v", prefix, strings.TrimSuffix(err.Error(), ": "+store.ErrAmbiguousID.Error()))
		d.Hintf("give more characters of the ID; capwrap list shows them")
	default:
		d.Errorf("cannot read %s: %v", dir.Path(), store.UnwrapPath(err))
		return "", verbFailed
	}
	return "", verbUsage
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

// listItemOf is capture e of dir as `capwrap list` shows it at time now.
func listItemOf(dir *store.Dir, e store.Entry, now time.Time) listItem {
	it := listItem{ID: e.ID, Dir: dir.Path() + "/" + e.ID, Running: e.Running, StartedAt: e.StartedAt().Format(time.RFC3339)}
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
	if e.Receipt != nil {
		it.Command = e.Receipt.Command
		if e.Receipt.StartedAt != nil {
			it.StartedAt = *e.Receipt.StartedAt
		}
	}
	if e.ReceiptErr != nil {
		it.ReceiptErr = new(e.ReceiptErr.Error())
	}
	end := dir.EndedAt(e, now)
	if !e.Running {
		it.EndedAt = new(end.UTC().Format(time.RFC3339Nano))
		if e.Final && e.Receipt != nil && e.Receipt.EndedAt != nil {
			it.EndedAt = e.Receipt.EndedAt
		}
		it.AgeSeconds = int64(now.Sub(end).Seconds())
	} else {
		it.AgeSeconds = int64(now.Sub(e.StartedAt()).Seconds())
	}
	return it
}

// verbList is `capwrap list [--json]` (SPEC §8): the captures, newest
// first, with process state, capture state, sizes, age and command.
func verbList(args []string, o *options, stdout io.Writer, d diag) int {
	fs := verbFlags("list")
	asJSON := fs.Bool("json", false, "print a JSON array instead of a table")
	running := fs.Bool("running", false, "only the captures whose command still runs (background jobs among them)")
	limit := fs.Int("limit", 0, "at most this many captures, the newest (0: all)")
	if st, done := parseVerb(fs, args, 0, "capwrap list [--json] [--running] [--limit N]", o, stdout, d); done {
		return st
	}
	if *limit < 0 {
		d.Errorf("list: invalid --limit %d: must not be negative", *limit)
		return verbUsage
	}
	dir, st := openCaptures(o, d)
	if dir == nil {
		return st
	}
	defer dir.Close()
	entries, err := dir.List()
	if err != nil {
		d.Errorf("cannot list %s: %v", dir.Path(), store.UnwrapPath(err))
		return verbFailed
	}
	now := time.Now()
	items := make([]listItem, 0, len(entries))
	for _, e := range entries {
		if *running && !(e.Running && !e.Final) {
			continue
		}
		items = append(items, listItemOf(dir, e, now))
	}
	if *limit > 0 && len(items) > *limit {
		items = items[:*limit]
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(items); err != nil {
			d.Errorf("cannot write the list: %v", err)
			return verbFailed
		}
		return 0
	}
	if len(items) == 0 {
		if *running {
			d.Hintf("no capture in %s is running", dir.Path())
		} else {
			d.Hintf("no captures in %s", dir.Path())
		}
		return 0
	}
	fmt.Fprintf(stdout, "%-27s  %-16s  %-22s  %10s  %10s  %5s  %s\n", "ID", "PROCESS", "CAPTURE", "STDOUT", "STDERR", "AGE", "COMMAND")
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
		size := func(p *int64) string {
			if p == nil {
				return "-"
			}
			return text.Bytes(*p)
		}
		fmt.Fprintf(stdout, "%-27s  %-16s  %-22s  %10s  %10s  %5s  %s\n", it.ID, proc, capState,
			size(it.StdoutBytes), size(it.StderrBytes), shortAge(time.Duration(it.AgeSeconds)*time.Second), displayCommand(it.Command, 60))
	}
	return 0
}

// verbShow is `capwrap show ID` (SPEC §8): receipt.json as written; for a
// running capture the live receipt with the sizes committed so far; for an
// abandoned one the live receipt marked partial (abandoned), its process
// state unknown.
func verbShow(args []string, o *options, stdout io.Writer, d diag) int {
	fs := verbFlags("show")
	if st, done := parseVerb(fs, args, 1, "capwrap show ID", o, stdout, d); done {
		return st
	}
	dir, e, st := openCapture(o, fs.Arg(0), d)
	if dir == nil {
		return st
	}
	defer dir.Close()
	id := e.ID
	if e.Final {
		b, err := dir.ReadReceipt(id, false)
		if err != nil {
			d.Errorf("cannot read %s/%s/receipt.json: %v", dir.Path(), id, store.UnwrapPath(err))
			return verbFailed
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
		stdout.Write(b)
		return 0
	}
	if e.Receipt == nil && e.ReceiptErr != nil && !errors.Is(e.ReceiptErr, os.ErrNotExist) {
		d.Warnf("cannot read %s/%s/receipt.live.json: %v", dir.Path(), id, store.UnwrapPath(e.ReceiptErr))
	}
	rc := e.LiveReceipt(dir.Path() + "/" + id) // none yet: the child is being started
	if e.Abandoned {
		// The live receipt said running when capwrap wrote it; nobody
		// is left to know what became of the process since.
		rc.Capture = receipt.Capture{State: receipt.CapturePartial, Reason: new(receipt.ReasonAbandoned)}
		rc.Process.State, rc.Process.ExitCode, rc.Process.Signal = "", nil, nil // null: unknown
		if rc.Process.Reason == nil {
			rc.Process.Reason = new("unknown: capwrap ended without writing the receipt")
		}
		d.Warnf("capture %s was abandoned: capwrap ended without a receipt; its files hold the bytes committed", id)
	} else {
		d.Hintf("capture %s is still running: the live receipt, with the bytes committed so far", id)
	}
	b, err := rc.MarshalPretty()
	if err != nil {
		d.Errorf("%v", err)
		return verbFailed
	}
	stdout.Write(b)
	return 0
}

// verbPrune is `capwrap prune --older-than DURATION | --id ID [--dry-run]`
// (SPEC §8), the only verb that deletes. A running capture is never
// touched. Age is the time since the capture ended (for an abandoned one,
// since its last write).
func verbPrune(args []string, o *options, stdout io.Writer, d diag) int {
	const usage = "capwrap prune --older-than DURATION | --id ID [--dry-run]"
	fs := verbFlags("prune")
	var olderThan time.Duration
	fs.Var(durationVar(&olderThan, 0), "older-than", "delete the captures that ended longer ago than this (10m, 12h, 7d)")
	idFlag := fs.String("id", "", "delete this capture (any unique prefix of its ID)")
	dryRun := fs.Bool("dry-run", false, "print what would be deleted, delete nothing")
	if st, done := parseVerb(fs, args, 0, usage, o, stdout, d); done {
		return st
	}
	byAge, byID := fs.Changed("older-than"), fs.Changed("id")
	switch {
	case byAge == byID:
		d.Errorf("prune: give exactly one of --older-than and --id")
		d.Hintf("usage: %s", usage)
		return verbUsage
	case byAge && olderThan < 0:
		d.Errorf("prune: invalid --older-than %v: must not be negative", olderThan)
		return verbUsage
	}
	dir, st := openCaptures(o, d)
	if dir == nil {
		return st
	}
	defer dir.Close()

	var targets []store.Entry
	running := 0
	if byID {
		e, st := entryOf(dir, *idFlag, d)
		if st != 0 {
			return st
		}
		if e.Running {
			d.Errorf("capture %s is running: prune never touches a running capture", e.ID)
			return verbFailed
		}
		targets = append(targets, e)
	} else {
		entries, err := dir.List()
		if err != nil {
			d.Errorf("cannot list %s: %v", dir.Path(), store.UnwrapPath(err))
			return verbFailed
		}
		now := time.Now()
		for _, e := range entries {
			switch {
			case e.Running:
				running++
			case now.Sub(dir.EndedAt(e, now)) > olderThan:
				targets = append(targets, e)
			}
		}
	}

	verb := "removed"
	if *dryRun {
		verb = "would remove"
	}
	var freed int64
	n, status := 0, 0
	for _, e := range targets {
		size := e.Stdout.Size + e.Stderr.Size
		state := e.CaptureStatus().String()
		if !*dryRun {
			if err := dir.Remove(e.ID); err != nil {
				if errors.Is(err, store.ErrRunning) {
					d.Warnf("capture %s started running again; not touched", e.ID)
				} else {
					d.Errorf("cannot remove %s/%s: %v", dir.Path(), e.ID, store.UnwrapPath(err))
					status = verbFailed
				}
				continue
			}
		}
		n++
		freed += size
		fmt.Fprintf(stdout, "%s %s  %s  %s\n", verb, e.ID, text.Bytes(size), state)
	}
	what := "freed"
	if *dryRun {
		what = "would free"
	}
	fmt.Fprintf(stdout, "%d capture%s, %s %s", n, text.Plural(n), what, text.Bytes(freed))
	if running > 0 {
		fmt.Fprintf(stdout, "; %d running capture%s not touched", running, text.Plural(running))
	}
	fmt.Fprintln(stdout)
	return status
}
