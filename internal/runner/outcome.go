package runner

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/capwrap/capwrap/internal/guard"
	"github.com/capwrap/capwrap/preview"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// Exit statuses capwrap chooses itself (SPEC §3 table).
const (
	ExitTimeout    = 124 // --timeout expired
	ExitUsage      = 125 // capwrap could not start: bad flags, unusable directory
	ExitNotExec    = 126 // the command was found but is not executable
	ExitNotFound   = 127 // the command was not found
	ExitSignalBase = 128 // 128+S when a re-raised signal S does not end capwrap
)

// Outcome is everything known about one run: the facts wrap, store, redact
// and preview reported, gathered in one value and then only read. The
// receipt (Receipt) and capwrap's exit status (ExitStatus) are pure
// functions of it, so every receipt capwrap emits (receipt.live.json, the
// footer, --receipt-file, receipt.json) is computed the same way, and the
// rules can be tested without starting a process.
type Outcome struct {
	// Refused is set when capwrap refused the run before starting the
	// command (SPEC §3: exit 125): bad redaction input, --pty always
	// without ptys, an unusable tool-outputs directory. Nothing else is.
	Refused error
	// Running marks the receipt of a child that has not ended yet
	// (receipt.live.json): process running, capture pending.
	Running bool
	// Named says the capture's ID was printed while the command ran (the
	// running notice): --keep auto keeps it, since its reader was told to
	// wait for it or read it.
	Named bool
	// Launched is when the run began, before the spawn.
	Launched time.Time
	// Label is the sanitized argv of the receipt's command; nil with
	// --no-label.
	Label []string
	// Redacting is false with --no-redact; PTY says the child got ptys.
	Redacting, PTY bool
	// Process is what became of the child (wrap.Run's result).
	Process wrap.Result
	// SignalFrom names who asked for Process.Forwarded when capwrap did not
	// receive it as a signal ("capwrap stop" for a job); "" otherwise.
	SignalFrom string
	// Place names the capture (id, dir, abs_dir) once it was made; nil
	// when none was (a silent command, or creating it failed).
	Place *Place
	// Store is the capture's result from the store: state, reason, error
	// and per-stream committed bytes, file and sha256.
	Store store.Result
	// Streams are per-stream facts the pipeline counted, stdout first.
	Streams [2]StreamFacts
	// Previews are the preview summaries, stdout first; nil entries when
	// no preview was rendered (tee and quiet modes).
	Previews [2]*preview.Info
	// Kept is true when the capture directory stays (--keep, SPEC §4).
	Kept bool
	// Strict is --strict: a failure of capwrap's own makes the status 125.
	Strict bool
	// ReaderGone says capwrap closed a stream of the command's because the
	// reader of its own output had gone and the capture kept nothing
	// more (issue 26; pipeEnd): the command met the end of its pipe.
	ReaderGone bool
	// OwnFailures are failures of capwrap's own after the child started
	// that the capture state does not show: --receipt-file, receipt.json
	// or the preview could not be written (SPEC §3).
	OwnFailures []error
}

// Place is where a capture lives: its ID, its directory as given to the
// user (relative when the tool-outputs directory was), and that directory's
// absolute path.
type Place struct {
	ID, Dir, AbsDir string
}

// StreamFacts are what the pipeline counted of one stream: complete lines
// (newline bytes) and whether the last line lacks its newline, both of the
// sanitized stream, and the number of redactions made in it; the raw
// bytes the redactor decided (Released: their representation was handed
// to the capture, the preview and the live copy), the map from the
// representation's bytes back to raw ones (Raw), and whether the
// representation is valid UTF-8 (ValidUTF8). See accounting.
type StreamFacts struct {
	Lines           int64
	LastLinePartial bool
	Replaced        int64
	Released        int64
	Raw             rawMap
	ValidUTF8       bool
}

// Failed reports whether the command failed (SPEC §5: non-zero exit,
// signal, timeout, or it did not start): a failed run's stderr gets the
// budget stdout leaves unused.
func (o *Outcome) Failed() bool {
	return o.Process.TimedOut || o.Process.State != wrap.StateExited || o.Process.ExitCode != 0
}

// CaptureState is the receipt's capture object: the store's result, made
// partial (drain_timeout) when a descendant held a pipe past the drain
// timeout of a capture that was otherwise complete (SPEC §3); pending while
// the child runs.
func (o *Outcome) CaptureState() receipt.Capture {
	if o.Running {
		return receipt.Capture{State: receipt.CapturePending}
	}
	cs := receipt.Capture{State: o.Store.State, Reason: o.Store.Reason, Error: o.Store.Error}
	if o.Process.DrainTimedOut && cs.State == receipt.CaptureComplete {
		cs.State, cs.Reason = receipt.CapturePartial, new(receipt.ReasonDrainTimeout)
	}
	return cs
}

// captureFailed reports a failure of capwrap's own that the capture state
// shows: the capture failed, or persistence stopped on a write error or a
// stalled writer (SPEC §3: never changes the status, but --strict).
func (o *Outcome) captureFailed() bool {
	cs := o.CaptureState()
	return cs.State == receipt.CaptureFailed || (cs.Reason != nil &&
		(*cs.Reason == receipt.ReasonWriteError || *cs.Reason == receipt.ReasonDiskFull || *cs.Reason == receipt.ReasonWriterStalled))
}

// OwnFailure reports any failure of capwrap's own after the child started.
func (o *Outcome) OwnFailure() bool {
	return !o.Running && (o.captureFailed() || len(o.OwnFailures) > 0)
}

// childStatus is the status the child's end calls for (SPEC §3 table),
// before --strict.
func (o *Outcome) childStatus() int {
	p := o.Process
	switch {
	case o.Refused != nil:
		return ExitUsage
	case o.cancelledBeforeStart():
		return ExitSignalBase + int(p.Forwarded)
	case p.State == wrap.StateNotStarted && errors.Is(p.StartErr, wrap.ErrNotFound):
		return ExitNotFound
	case p.State == wrap.StateNotStarted && errors.Is(p.StartErr, wrap.ErrNotExecutable):
		return ExitNotExec
	case p.State == wrap.StateNotStarted:
		return ExitUsage
	case p.TimedOut:
		return ExitTimeout
	case p.State == wrap.StateSignaled:
		return ExitSignalBase + int(p.Signal)
	}
	return p.ExitCode
}

// ExitStatus is what capwrap exits with, in one place (SPEC §3 table):
// the child's code, 128+S for its signal S (which main re-raises first, see
// Reraise), 124 on a timeout, 126/127 when it could not be executed or
// found, 125 when capwrap refused to run, and 125 under --strict after a
// failure of capwrap's own.
func (o *Outcome) ExitStatus() int {
	if o.Strict && o.OwnFailure() {
		return ExitUsage
	}
	return o.childStatus()
}

// Reraise is the signal main re-raises on capwrap before exiting, so that
// its caller sees the child's own death (SPEC §3, as timeout(1) does): the
// signal that killed the child, when the status says so (not after a
// timeout, and not when --strict made it 125); else 0.
func (o *Outcome) Reraise() syscall.Signal {
	p := o.Process
	if o.cancelledBeforeStart() && o.ExitStatus() == ExitSignalBase+int(p.Forwarded) {
		return p.Forwarded
	}
	if p.State == wrap.StateSignaled && !p.TimedOut && o.ExitStatus() == ExitSignalBase+int(p.Signal) {
		return p.Signal
	}
	return 0
}

// Cancelled reports a child killed by the very signal capwrap received and
// forwarded, or by the SIGKILL that followed it --kill-after later (SPEC §7
// process.state "cancelled").
func (o *Outcome) Cancelled() bool {
	p := o.Process
	return o.cancelledBeforeStart() || p.State == wrap.StateSignaled && p.Forwarded != 0 &&
		(p.Signal == p.Forwarded || (p.Escalated && p.Signal == syscall.SIGKILL))
}

// cancelledBeforeStart reports a run that a signal capwrap received ended
// before the command started (wrap.ErrCancelled): the command did not run,
// and capwrap exits as the signal would have ended it (issue 23).
func (o *Outcome) cancelledBeforeStart() bool {
	return o.Process.State == wrap.StateNotStarted && errors.Is(o.Process.StartErr, wrap.ErrCancelled)
}

// Replaced is the number of redactions made in both streams.
func (o *Outcome) Replaced() int64 {
	return o.Streams[0].Replaced + o.Streams[1].Replaced
}

// CompactSuccess is the --keep auto rule of SPEC §4: the child exited 0,
// the capture is complete and the preview showed every byte as it is, so
// the files would add nothing. Only a rendered preview shows every byte.
func (o *Outcome) CompactSuccess() bool {
	if o.Failed() || o.CaptureState().State != receipt.CaptureComplete {
		return false
	}
	for _, p := range o.Previews {
		// An altered preview (frames collapsed, escapes removed...)
		// did not show the bytes as they are: the file is worth keeping.
		if p == nil || p.State != preview.StateComplete || p.Altered {
			return false
		}
	}
	return true
}

// WantKeep applies --keep (SPEC §4) to a settled run: always keeps, never
// does not, auto keeps unless the command did not start (but for a run
// cancelled before the start, whose receipt says so on disk) or the run was
// a compact success.
func (o *Outcome) WantKeep(keep When) bool {
	switch keep {
	case Always:
		return true
	case Never:
		return false
	}
	if o.cancelledBeforeStart() || o.Named {
		return true
	}
	return !(o.Process.State == wrap.StateNotStarted || o.CompactSuccess())
}

// CompactFooter reports whether the footer may be the short form of a
// compact success (SPEC §7): it may leave out only null, empty and default
// values, so redaction off, secrets replaced, a kept capture, one that is
// not complete or a process.reason (a SIGKILL after --kill-after) all need
// the full footer.
func (o *Outcome) CompactFooter() bool {
	return !o.Kept && o.ExitStatus() == 0 && o.Redacting && o.Replaced() == 0 && o.Process.DescendantCount == 0 &&
		o.CaptureState().State == receipt.CaptureComplete && o.processReceipt().Reason == nil
}

// Receipt is the receipt of SPEC §7 for this outcome: the live receipt
// while Running, else the final one. Unknown values are null.
func (o *Outcome) Receipt() *receipt.Receipt {
	rc := &receipt.Receipt{
		Schema:    receipt.Schema,
		Command:   o.Label,
		Redaction: receipt.Redaction{Enabled: o.Redacting},
		PTY:       o.PTY,
		Capture:   o.CaptureState(),
	}
	if o.Place != nil && (o.Running || o.Kept) {
		rc.ID, rc.Dir, rc.AbsDir = &o.Place.ID, &o.Place.Dir, &o.Place.AbsDir
	}
	if o.Running {
		rc.StartedAt = new(o.Launched.UTC().Format(time.RFC3339Nano))
		rc.Process = receipt.Process{State: receipt.ProcessRunning}
		if o.Process.PID > 0 {
			rc.Process.PID = new(o.Process.PID)
		}
		return rc
	}
	p := o.Process
	rc.StartedAt = new(p.Started.UTC().Format(time.RFC3339Nano))
	rc.EndedAt = new(p.Ended.UTC().Format(time.RFC3339Nano))
	rc.DurationMS = new(p.Ended.Sub(p.Started).Milliseconds())
	rc.Process = o.processReceipt()
	rc.Redaction.Replaced = o.Replaced()
	if o.Redacting {
		rc.Redaction.PerStream = map[string]int64{store.Stdout: o.Streams[0].Replaced, store.Stderr: o.Streams[1].Replaced}
	}
	observed := [2]int64{p.ObservedStdout, p.ObservedStderr}
	results := [2]store.StreamResult{o.Store.Stdout, o.Store.Stderr}
	for i, s := range []*receipt.Stream{&rc.Streams.Stdout, &rc.Streams.Stderr} {
		f, r := o.Streams[i], results[i]
		s.ObservedBytes, s.CommittedBytes = new(observed[i]), new(r.Committed)
		s.Accounting = new(accounting(observed[i], f.Released, r.Committed, f.Raw))
		s.Representation = new(representation(o.Redacting, f.ValidUTF8))
		s.Lines, s.LastLinePartial = new(f.Lines), new(f.LastLinePartial)
		if o.Kept && r.File != "" {
			s.File = new(r.File)
		}
		if o.Kept && rc.Capture.State == receipt.CaptureComplete && r.SHA256 != "" {
			s.SHA256 = new(r.SHA256)
		}
		if pi := o.Previews[i]; pi != nil {
			s.Preview = &receipt.Preview{State: pi.State, ShownBytes: pi.ShownBytes, OmittedBytes: pi.OmittedBytes, OmittedLines: pi.OmittedLines}
		}
	}
	rc.Descendants = descendantsReceipt(p)
	rc.ExitStatus = new(o.ExitStatus())
	return rc
}

// descendantsReceipt is the receipt's descendants object for the
// processes the command left running (wrap.Result.Descendants, their
// command lines sanitized by settle); nil when there were none.
func descendantsReceipt(p wrap.Result) *receipt.Descendants {
	if p.DescendantCount == 0 {
		return nil
	}
	d := &receipt.Descendants{Count: p.DescendantCount, Action: receipt.DescendantsEnded, Processes: []receipt.Descendant{}}
	if p.DescendantsLeft {
		d.Action = receipt.DescendantsLeft
	}
	for _, x := range p.Descendants {
		e := receipt.Descendant{PID: x.PID}
		if x.Command != "" {
			e.Command = new(x.Command)
		}
		if x.Holds != "" {
			e.Holds = new(x.Holds)
		}
		d.Processes = append(d.Processes, e)
	}
	return d
}

// processState is the one mapping from wrap's facts to the receipt's
// process.state (SPEC §7): cancelled when the signal capwrap received and
// forwarded (or its --kill-after SIGKILL) ended the child, or arrived
// before it started; timeout when --timeout did; else how it ended.
func (o *Outcome) processState() receipt.ProcessState {
	switch res := o.Process; {
	case o.Cancelled():
		return receipt.ProcessCancelled
	case res.TimedOut:
		return receipt.ProcessTimeout
	case res.State == wrap.StateSignaled:
		return receipt.ProcessSignaled
	case res.State == wrap.StateExited:
		return receipt.ProcessExited
	}
	return receipt.ProcessNotStarted
}

// processReceipt is the receipt's process object of an ended run.
func (o *Outcome) processReceipt() receipt.Process {
	res := o.Process
	p := receipt.Process{State: o.processState()}
	if res.PID > 0 {
		p.PID = new(res.PID)
	}
	if res.State != wrap.StateNotStarted {
		if res.Signal != 0 {
			p.Signal = new(SignalName(res.Signal))
		} else {
			p.ExitCode = new(res.ExitCode)
		}
	}
	switch {
	case o.Cancelled():
		p.Reason = new(o.forwardedText())
	case res.TimedOut:
		p.Reason = new("timeout")
	case res.Escalated: // the child ended otherwise; a descendant got the SIGKILL
		p.Reason = new(o.forwardedText())
	case res.StartErr != nil:
		p.Reason = new(res.StartErr.Error())
	case o.ReaderGone:
		p.Reason = new(readerGoneReason)
	}
	return p
}

// forwardedText is process.reason after a forwarded signal: "SIGTERM
// received by capwrap and forwarded" (or "SIGKILL sent by capwrap stop"
// for a job), and when the group outlived it, "; SIGKILL after
// --kill-after 5s".
func (o *Outcome) forwardedText() string {
	p := o.Process
	s := SignalName(p.Forwarded) + " received by capwrap and forwarded"
	switch {
	case o.cancelledBeforeStart():
		s = SignalName(p.Forwarded) + " received by capwrap before the command started; it was not run"
	case o.SignalFrom != "":
		s = SignalName(p.Forwarded) + " sent by " + o.SignalFrom
	}
	if p.Escalated {
		s += "; SIGKILL after --kill-after " + p.KillAfter.String()
	}
	return s
}

// notMade is the store result of a capture that could not be made:
// failed, reason write_error (SPEC §7), or writer_stalled when the file
// system hung, with the cause.
func notMade(err error) store.Result {
	reason := receipt.ReasonWriteError
	if errors.As(err, new(guard.ErrHung)) {
		reason = receipt.ReasonWriterStalled
	}
	return store.Result{State: receipt.CaptureFailed, Reason: new(reason),
		Error: new("cannot create the capture: " + store.UnwrapPath(err).Error())}
}

// ownFailureText describes the capture's failure for the warning of SPEC §3:
// "partial (write_error: no space left on device)".
func (o *Outcome) ownFailureText() string {
	cs := o.CaptureState()
	msg := string(cs.State)
	if cs.Reason != nil {
		msg = string(*cs.Reason)
	}
	if cs.Error != nil {
		msg += ": " + *cs.Error
	}
	return fmt.Sprintf("%s (%s)", cs.State, msg)
}

// SignalName is the receipt's form of a signal: "SIGKILL" (SIG17 for one
// without a name).
func SignalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return fmt.Sprintf("SIG%d", int(s))
}

// errPreview wraps a failure to print the preview, an own failure.
var errPreview = errors.New("cannot write the preview")
