package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
	"golang.org/x/sys/unix"

	"github.com/capwrap/capwrap/preview"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// newReceipt is the receipt as known at launch (receipt.live.json, SPEC §4):
// process running, capture pending, everything not yet known null.
func newReceipt(label []string, redacting, pty bool) *store.Receipt {
	started := time.Now().UTC()
	at := started.Format(time.RFC3339Nano)
	return &store.Receipt{
		Schema:    store.Schema,
		Command:   label,
		StartedAt: &at,
		Process:   store.Process{State: "running"},
		Capture:   store.CaptureState{State: "pending"},
		Redaction: store.Redaction{Enabled: redacting},
		PTY:       pty,
	}
}

// placeReceipt names capture c in the receipt (id, dir, abs_dir).
func placeReceipt(rc *store.Receipt, c *store.Capture) {
	id, dir, abs := c.ID(), c.Path(), c.AbsPath()
	rc.ID, rc.Dir, rc.AbsDir = &id, &dir, &abs
}

// fillReceipt completes the receipt from what wrap and store report.
func fillReceipt(rc *store.Receipt, res wrap.Result, fin store.Result, sinks [2]*sink, keepers [2]*preview.Keeper) {
	started := res.Started.UTC().Format(time.RFC3339Nano)
	ended := res.Ended.UTC().Format(time.RFC3339Nano)
	ms := res.Ended.Sub(res.Started).Milliseconds()
	rc.StartedAt, rc.EndedAt, rc.DurationMS = &started, &ended, &ms

	p := store.Process{State: res.State}
	if res.State == wrap.StateSignaled && res.Signal == res.Forwarded {
		// Killed by a signal capwrap itself received and passed on: the
		// run was cancelled (SPEC §7 process.state "cancelled").
		p.State = "cancelled"
	}
	if res.PID > 0 {
		p.PID = &res.PID
	}
	if res.State != wrap.StateNotStarted {
		if res.Signal != 0 {
			name := signalName(res.Signal)
			p.Signal = &name
		} else {
			code := res.ExitCode
			p.ExitCode = &code
		}
	}
	switch {
	case p.State == "cancelled":
		p.Reason = ptr(signalName(res.Signal) + " received by capwrap and forwarded")
	case res.TimedOut:
		p.Reason = ptr("timeout")
	case res.StartErr != nil:
		p.Reason = ptr(res.StartErr.Error())
	}
	rc.Process = p

	rc.Capture = store.CaptureState{State: fin.State, Reason: fin.Reason, Error: fin.Error}
	if res.DrainTimedOut && fin.State == "complete" {
		rc.Capture.State, rc.Capture.Reason = "partial", ptr("drain_timeout")
	}

	var total int64
	perStream := map[string]int64{}
	observed := [2]int64{res.ObservedStdout, res.ObservedStderr}
	results := [2]store.StreamResult{fin.Stdout, fin.Stderr}
	streams := [2]*store.Stream{&rc.Streams.Stdout, &rc.Streams.Stderr}
	for i, name := range []string{"stdout", "stderr"} {
		n := sinks[i].replaced()
		total += n
		perStream[name] = n
		obs, committed := observed[i], results[i].Committed
		lines, partial := keepers[i].Lines(), keepers[i].LastLinePartial()
		s := streams[i]
		s.ObservedBytes, s.CommittedBytes = &obs, &committed
		s.Lines, s.LastLinePartial = &lines, &partial
		if results[i].File != "" {
			f := results[i].File
			s.File = &f
		}
		if rc.Capture.State == "complete" && results[i].SHA256 != "" {
			h := results[i].SHA256
			s.SHA256 = &h
		}
	}
	rc.Redaction.Replaced = total
	if rc.Redaction.Enabled {
		rc.Redaction.PerStream = perStream
	}
}

// forget clears what a receipt says of files once the capture was
// discarded (--keep never, or auto on a compact success).
func forget(rc *store.Receipt) {
	rc.ID, rc.Dir, rc.AbsDir = nil, nil, nil
	for _, s := range []*store.Stream{&rc.Streams.Stdout, &rc.Streams.Stderr} {
		s.File, s.SHA256 = nil, nil
	}
}

func ptr[T any](v T) *T { return &v }

// previewStream names a stream's file and read-back command for the
// preview's omission marker, and how much of the stream the file holds
// (committed bytes, after redaction, like the keeper's).
func previewStream(o *options, c *store.Capture, name string, k *preview.Keeper, committed *int64) preview.Stream {
	if c == nil { // no capture: nothing to name or read back
		st := preview.Stream{Keeper: k, Name: name}
		if committed != nil && *committed < k.Total() {
			st.FileShort, st.FileBytes = true, *committed
		}
		return st
	}
	cmd := "capwrap"
	if o.dir != "" {
		cmd += " --dir " + shellQuote(o.dir)
	}
	cmd += " read " + c.ID()
	if name == "stderr" {
		cmd += " --stream stderr"
	}
	st := preview.Stream{Keeper: k, Name: name, File: c.FilePath(name), ReadCmd: cmd}
	if committed != nil && *committed < k.Total() {
		st.FileShort, st.FileBytes = true, *committed
	}
	return st
}

func previewInfo(i preview.Info) *store.Preview {
	return &store.Preview{State: i.State, ShownBytes: i.ShownBytes, OmittedBytes: i.OmittedBytes, OmittedLines: i.OmittedLines}
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeReceiptFile writes the receipt, pretty JSON, to --receipt-file.
func writeReceiptFile(path string, rc *store.Receipt) error {
	b, err := rc.MarshalPretty()
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// signalName is the receipt's form of a signal: "SIGKILL".
func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return fmt.Sprintf("SIG%d", int(s))
}

// setupColor decides colour for capwrap's stderr summary. fatih/color looks
// at stdout, which carries the child's data here, so the decision is made
// from stderr: --color, NO_COLOR, TERM=dumb (issue 7, STYLE.md pitfalls).
func setupColor(flag string, stderr *os.File) {
	color.NoColor = !colorEnabled(flag, os.Getenv, isatty.IsTerminal(stderr.Fd()))
}

// colorEnabled is the colour decision: --color always or never wins;
// auto colours only a terminal stderr, and not when NO_COLOR is set to
// anything non-empty (no-color.org) or TERM is dumb.
func colorEnabled(flag string, getenv func(string) string, stderrTerminal bool) bool {
	switch flag {
	case "always":
		return true
	case "never":
		return false
	}
	return stderrTerminal && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// printSummary is tee mode's one line after the child's output (SPEC §2):
// status, duration, sizes, capture state and where the files are. Green
// for success, red for failure, yellow for a success whose capture is not
// complete; no colour unless setupColor allowed it.
func printSummary(w io.Writer, rc *store.Receipt, res wrap.Result, kept bool) {
	fmt.Fprintln(w, summaryLine(rc, res, kept))
}

// summaryLine is printSummary's line, painted, without the newline (so the
// colour reset comes before it).
func summaryLine(rc *store.Receipt, res wrap.Result, kept bool) string {
	var status string
	paint := color.New(color.FgGreen)
	switch {
	case res.State == wrap.StateNotStarted:
		status, paint = "not started", color.New(color.FgRed)
	case res.TimedOut:
		status, paint = "timed out", color.New(color.FgRed)
		if rc.Process.Signal != nil {
			status += " (" + *rc.Process.Signal + ")"
		}
	case res.Signal != 0:
		status, paint = "killed by "+signalName(res.Signal), color.New(color.FgRed)
	case res.ExitCode != 0:
		status, paint = fmt.Sprintf("exit %d", res.ExitCode), color.New(color.FgRed)
	default:
		status = "exit 0"
	}
	capState := rc.Capture.State
	if rc.Capture.Reason != nil {
		capState += " (" + *rc.Capture.Reason + ")"
		if status == "exit 0" {
			paint = color.New(color.FgYellow)
		}
	}
	where := "not kept"
	if kept && rc.Dir != nil {
		where = *rc.Dir
	}
	dur := time.Duration(0)
	if rc.DurationMS != nil {
		dur = time.Duration(*rc.DurationMS) * time.Millisecond
	}
	line := fmt.Sprintf("capwrap: %s · %s · stdout %s, stderr %s · %s · %s",
		status, dur.Round(time.Millisecond), humanBytes(deref(rc.Streams.Stdout.CommittedBytes)),
		humanBytes(deref(rc.Streams.Stderr.CommittedBytes)), capState, where)
	if color.NoColor {
		return line
	}
	// color.New consults NO_COLOR itself; setupColor has already decided
	// (--color always beats NO_COLOR), so override it here.
	paint.EnableColor()
	return paint.Sprint(line)
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// humanBytes formats a byte count with binary units: 0 B, 1.2 KiB, 3.4 MiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
