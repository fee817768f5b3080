// Package receipt is the receipt of SPEC §7 as types: schema
// capwrap.receipt/v1, its typed process and capture states and reasons, the
// pretty form of receipt.json and the one-line footer. It knows nothing of
// processes, files or previews: the run that ended fills a Receipt in, the
// store writes it, the verbs read it back.
package receipt

import (
	"encoding/json"
	"fmt"
)

// Schema is the value of the receipt's "schema" key (SPEC §7).
const Schema = "capwrap.receipt/v1"

// Receipt is the capture receipt of SPEC §7, schema capwrap.receipt/v1. The
// same value is written pretty-printed to receipt.json (and receipt.live.json
// while the child runs) and compact on the "capwrap-receipt" footer line.
// Pointer fields are null when unknown: the spec forbids writing 0 for a value
// that is not known.
type Receipt struct {
	Schema     string    `json:"schema"`
	ID         *string   `json:"id"`
	Dir        *string   `json:"dir"`
	AbsDir     *string   `json:"abs_dir"`
	Command    []string  `json:"command,omitempty"`
	StartedAt  *string   `json:"started_at"`
	EndedAt    *string   `json:"ended_at"`
	DurationMS *int64    `json:"duration_ms"`
	Process    Process   `json:"process"`
	Capture    Capture   `json:"capture"`
	Redaction  Redaction `json:"redaction"`
	Streams    Streams   `json:"streams"`
	PTY        bool      `json:"pty"`
	// Descendants is set when the command left processes running after
	// it ended (README "Process"); the key is absent otherwise.
	Descendants *Descendants `json:"descendants,omitempty"`
	ExitStatus  *int         `json:"exit_status"`
}

// Descendants is the receipt's "descendants" object (SPEC §3, README
// "Process"): the processes the command started that were still alive
// after it ended on its own and its streams were drained. Count is how
// many there were; Action is "ended" (capwrap sent them SIGTERM, then
// SIGKILL --kill-after later) or "left" (--leave-descendants); Processes
// lists some of them (at most ten, and any that held a stream open).
type Descendants struct {
	Count     int          `json:"count"`
	Action    string       `json:"action"`
	Processes []Descendant `json:"processes"`
}

// The actions of Descendants.Action.
const (
	DescendantsEnded = "ended"
	DescendantsLeft  = "left"
)

// Descendant is one process of Descendants: its pid, its command line
// (at most 80 bytes, null where the system does not say: FreeBSD) and,
// when it held one of the command's output pipes open at the drain
// timeout, that stream ("stdout" or "stderr", else null).
type Descendant struct {
	PID     int     `json:"pid"`
	Command *string `json:"command"`
	Holds   *string `json:"holds"`
}

// Process is the receipt's "process" object: what became of the child.
// State is one of running, exited, signaled, timeout, cancelled, not_started.
// Signal is the signal's name ("SIGKILL") when the child was killed by one.
type Process struct {
	State    ProcessState `json:"state"`
	PID      *int         `json:"pid,omitempty"`
	ExitCode *int         `json:"exit_code"`
	Signal   *string      `json:"signal"`
	Reason   *string      `json:"reason"`
}

// Capture is the receipt's "capture" object. State is one of pending,
// complete, partial, failed, disabled; Reason names why a capture is partial
// (drain_timeout, capture_limit, directory_quota, writer_stalled, write_error,
// abandoned, killed_with_capwrap, exported_running); Error carries the text of a write error.
type Capture struct {
	State  CaptureState `json:"state"`
	Reason *Reason      `json:"reason"`
	Error  *string      `json:"error"`
}

// String is the capture's state as people read it: "complete", "partial
// (write_error)".
func (c Capture) String() string {
	if c.Reason == nil {
		return string(c.State)
	}
	return string(c.State) + " (" + string(*c.Reason) + ")"
}

// Redaction is the receipt's "redaction" object: whether sanitizing was on
// and how many replacements it made, in total and per stream.
type Redaction struct {
	Enabled   bool             `json:"enabled"`
	Replaced  int64            `json:"replaced"`
	PerStream map[string]int64 `json:"per_stream,omitempty"`
}

// Streams holds the per-stream objects of the receipt.
type Streams struct {
	Stdout Stream `json:"stdout"`
	Stderr Stream `json:"stderr"`
}

// Stream describes one captured stream. Byte counts are in bytes:
// ObservedBytes were read from the pipe (or pty), CommittedBytes reached the
// file: bytes of the representation, after redaction, which may be more or
// fewer than the raw bytes they stand for. Lines counts newline bytes of the
// committed (sanitized) stream. File is relative like Receipt.Dir, null when
// no file was kept. SHA256 is the hex digest of the committed file, set only
// when the capture is complete. Accounting settles the raw bytes (SPEC §7);
// Representation names what the file holds. Both are null while the child
// runs and for a capture whose writer died (unknown, not 0).
type Stream struct {
	ObservedBytes   *int64          `json:"observed_bytes"`
	CommittedBytes  *int64          `json:"committed_bytes"`
	Lines           *int64          `json:"lines"`
	LastLinePartial *bool           `json:"last_line_partial"`
	File            *string         `json:"file"`
	SHA256          *string         `json:"sha256"`
	Preview         *Preview        `json:"preview"`
	Accounting      *Accounting     `json:"accounting"`
	Representation  *Representation `json:"representation"`
}

// Accounting is a stream's "accounting" object (SPEC §7): where every raw
// byte read from the child went, in raw bytes (before redaction), so that
// Observed = Accepted + Pending + Discarded in every receipt (Check).
//
//   - Observed: read from the pipe or pty (the same count as observed_bytes).
//   - Accepted: taken for transformation into the file: the redactor (or,
//     with --no-redact, nothing) decided them and the file holds their
//     representation.
//   - Pending: accepted by nothing yet: held back by the redactor (a
//     possible partial secret) or read and not yet handed to it. 0 in a
//     final receipt: the end of the stream settles them (README "The
//     receipt").
//   - Discarded: never to be committed: the representation came after the
//     file stopped taking bytes (capture_limit, directory_quota, a write
//     error, writer_stalled, no capture could be made), or was queued for
//     the file when persistence stopped.
//
// committed_bytes counts the representation apart: it grows with markers
// longer than the secrets they replace and shrinks with shorter ones.
type Accounting struct {
	Observed  int64 `json:"observed"`
	Accepted  int64 `json:"accepted"`
	Pending   int64 `json:"pending"`
	Discarded int64 `json:"discarded"`
}

// Check reports a violation of the accounting identity: a negative count,
// or Observed != Accepted + Pending + Discarded.
func (a Accounting) Check() error {
	if a.Observed < 0 || a.Accepted < 0 || a.Pending < 0 || a.Discarded < 0 {
		return fmt.Errorf("accounting has a negative count: %+v", a)
	}
	if a.Observed != a.Accepted+a.Pending+a.Discarded {
		return fmt.Errorf("accounting: observed %d != accepted %d + pending %d + discarded %d",
			a.Observed, a.Accepted, a.Pending, a.Discarded)
	}
	return nil
}

// Representation is a stream's "representation" (SPEC §7): what the bytes
// of its file are, as a reader needs to know before decoding them.
type Representation string

// The representations of SPEC §7. capwrap writes RepresentationRedactedText,
// RepresentationBinary and RepresentationRaw; it never decodes a stream, so
// never RepresentationDecodedText (the preview replaces invalid UTF-8 for
// display, the file never does).
const (
	// RepresentationRedactedText: redaction on, and the file is valid
	// UTF-8 (an empty stream too): the child's text, secrets replaced by
	// markers, every other byte as read.
	RepresentationRedactedText Representation = "redacted-text"
	// RepresentationDecodedText: text decoded with invalid UTF-8 replaced
	// by U+FFFD. Not written by capwrap.
	RepresentationDecodedText Representation = "decoded-text"
	// RepresentationBinary: redaction on, and the stream is not valid
	// UTF-8 (a binary's output, text in another encoding): its bytes as
	// read, exactly, but for secrets replaced by markers (redaction is not
	// skipped for binary output).
	RepresentationBinary Representation = "binary"
	// RepresentationRaw: --no-redact: the bytes as read, exactly.
	RepresentationRaw Representation = "raw"
)

// Check reports a receipt whose per-stream accounting breaks the identity
// of SPEC §7 (Accounting.Check), or whose accounting disagrees with its
// observed_bytes. A stream without accounting (a live or abandoned
// capture's receipt, a footer) passes.
func (r *Receipt) Check() error {
	for _, st := range []struct {
		name string
		s    *Stream
	}{{"stdout", &r.Streams.Stdout}, {"stderr", &r.Streams.Stderr}} {
		a := st.s.Accounting
		if a == nil {
			continue
		}
		if err := a.Check(); err != nil {
			return fmt.Errorf("streams.%s: %w", st.name, err)
		}
		if o := st.s.ObservedBytes; o != nil && *o != a.Observed {
			return fmt.Errorf("streams.%s: observed_bytes %d, accounting.observed %d", st.name, *o, a.Observed)
		}
		// Without a marker the representation is the raw bytes: the
		// file holds exactly the accepted ones.
		rep, n, counted := st.s.Representation, r.Redaction.PerStream[st.name], r.Redaction.PerStream != nil
		identity := rep != nil && *rep == RepresentationRaw || rep != nil && *rep != RepresentationDecodedText && counted && n == 0
		if c := st.s.CommittedBytes; identity && c != nil && *c != a.Accepted {
			return fmt.Errorf("streams.%s: nothing replaced, yet committed_bytes %d != accounting.accepted %d", st.name, *c, a.Accepted)
		}
	}
	return nil
}

// Preview is a stream's preview summary (SPEC §5, §7). State is complete or
// truncated; ShownBytes counts UTF-8 bytes of display text printed for the
// stream; OmittedBytes and OmittedLines count stream bytes and lines left out.
type Preview struct {
	State        string `json:"state"`
	ShownBytes   int64  `json:"shown_bytes"`
	OmittedBytes int64  `json:"omitted_bytes"`
	OmittedLines int64  `json:"omitted_lines"`
}

// MarshalJSON writes an empty State as null: a process whose end nobody
// saw (an abandoned capture's) has no state to tell, and SPEC §7 has
// unknown values null.
func (p Process) MarshalJSON() ([]byte, error) {
	type plain Process
	v := struct {
		State *ProcessState `json:"state"`
		plain
	}{plain: plain(p)}
	if p.State != "" {
		v.State = &p.State
	}
	return json.Marshal(v)
}

// MarshalPretty returns the receipt as indented JSON with a final newline,
// the form of receipt.json.
func (r *Receipt) MarshalPretty() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// FooterPrefix starts the last line capwrap prints in preview and quiet modes.
const FooterPrefix = "capwrap-receipt "

// compactFooter is the footer of a compact success (SPEC §7): exit
// status, exit code and capture state, which a reader completes with the
// schema's defaults; under 100 bytes.
type compactFooter struct {
	ExitStatus *int `json:"exit_status"`
	Process    struct {
		ExitCode *int `json:"exit_code"`
	} `json:"process"`
	Capture struct {
		State CaptureState `json:"state"`
	} `json:"capture"`
}

// shortFooter is the short form of every other footer (SPEC §7): what a
// caller acts on, the rest left to receipt.json. A key left out means "see
// receipt.json"; the key names and nesting are the schema's.
type shortFooter struct {
	ID         *string       `json:"id,omitempty"`
	Dir        *string       `json:"dir,omitempty"`
	ExitStatus *int          `json:"exit_status"`
	Process    shortProcess  `json:"process"`
	Capture    shortCapture  `json:"capture"`
	Redaction  *shortRedact  `json:"redaction,omitempty"`
	Streams    *shortStreams `json:"streams,omitempty"`
	// Descendants, only when the footer stays under FooterBound with it.
	Descendants *shortDescendants `json:"descendants,omitempty"`
}

// shortDescendants is the footer's part of Descendants: how many, and
// what capwrap did with them; the list is receipt.json's.
type shortDescendants struct {
	Count  int    `json:"count"`
	Action string `json:"action"`
}

type shortProcess struct {
	State    ProcessState `json:"state"`
	PID      *int         `json:"pid,omitempty"` // while running
	ExitCode *int         `json:"exit_code,omitempty"`
	Signal   *string      `json:"signal,omitempty"`
	Reason   *string      `json:"reason,omitempty"`
}

type shortCapture struct {
	State  CaptureState `json:"state"`
	Reason *Reason      `json:"reason,omitempty"`
	Error  *string      `json:"error,omitempty"`
}

type shortRedact struct {
	Enabled  *bool `json:"enabled,omitempty"` // only when false
	Replaced int64 `json:"replaced,omitempty"`
}

type shortStreams struct {
	Stdout *shortStream `json:"stdout,omitempty"`
	Stderr *shortStream `json:"stderr,omitempty"`
}

type shortStream struct {
	ObservedBytes  *int64           `json:"observed_bytes,omitempty"`
	CommittedBytes *int64           `json:"committed_bytes,omitempty"` // only when not all observed were committed
	Lines          *int64           `json:"lines,omitempty"`
	Preview        *shortPreview    `json:"preview,omitempty"`    // only when cut
	Accounting     *shortAccounting `json:"accounting,omitempty"` // only when bytes are lost or unsettled
}

// shortAccounting is the part of a stream's accounting a caller acts on:
// raw bytes that will never be in the file, or are not settled yet (SPEC
// §7). The rest, and the whole object when both are 0, is receipt.json's.
type shortAccounting struct {
	Pending   int64 `json:"pending,omitempty"`
	Discarded int64 `json:"discarded,omitempty"`
}

// shortPreview says the preview cut the stream, and how many of its bytes
// and lines it left out (SPEC §7: the footer carries what the preview
// omitted) when there is room for that under the footer's bound.
type shortPreview struct {
	State        string `json:"state"`
	OmittedBytes *int64 `json:"omitted_bytes,omitempty"`
	OmittedLines *int64 `json:"omitted_lines,omitempty"`
}

// FooterBound is the size in bytes a failing run's footer stays under
// (SPEC §7), newline included, when its dir is no longer than a relative
// tool-outputs/ID: the preview's omitted counts are left out (to
// receipt.json) where they would push it past this.
const FooterBound = 400

// Footer returns the one-line footer "capwrap-receipt {JSON}\n" (SPEC §7),
// with no newline inside the JSON. With compact (a compact success:
// everything shown, exit 0, nothing kept) only exit_status,
// process.exit_code and capture.state are written, under 100 bytes. Else
// it is the short form: id, dir, exit_status, the process's state, pid
// while running, exit code, signal and reason, the capture's state, reason
// and error, redaction when it is off or replaced something, and per stream
// that is not empty its observed bytes (committed bytes too when they
// differ), lines, accounting.pending and accounting.discarded when not 0
// and, when the preview cut it, preview.state
// truncated with the bytes and lines it left out, unless these would make
// the footer FooterBound bytes or more (two streams cut, large counts, a
// long dir): then receipt.json alone has them (with a relative dir, one
// stream's counts fit; both streams' do not), and the accounting counts
// after them if still needed, then the committed sizes if that makes it
// fit. The command label, abs_dir, file paths,
// sha256, timestamps and per-stream redaction counts are left to
// receipt.json. A failing run's footer with both streams cut is under 400
// bytes when dir is (the tool-outputs directory's path is the one part of
// it whose length capwrap does not choose). The JSON is written by hand
// (footerjson.go), so the error is always nil.
func (r *Receipt) Footer(compact bool) ([]byte, error) {
	var s *shortFooter
	b := r.fit(compact, &s)
	if compact || s == nil || r.Descendants == nil {
		return b, nil
	}
	s.Descendants = &shortDescendants{Count: r.Descendants.Count, Action: r.Descendants.Action}
	if with := encodeFooter(s); len(with) < FooterBound {
		return with, nil
	}
	return b, nil
}

// fit is Footer's algorithm without descendants; *out is set to the
// short footer it encoded.
func (r *Receipt) fit(compact bool, out **shortFooter) []byte {
	if compact {
		var f compactFooter
		f.ExitStatus = r.ExitStatus
		f.Process.ExitCode = r.Process.ExitCode
		f.Capture.State = r.Capture.State
		return encodeFooter(&f)
	}
	s := r.short()
	*out = s
	b := encodeFooter(s)
	if len(b) < FooterBound || s.Streams == nil {
		return b
	}
	for _, ss := range []*shortStream{s.Streams.Stdout, s.Streams.Stderr} {
		if ss != nil && ss.Preview != nil {
			ss.Preview.OmittedBytes, ss.Preview.OmittedLines = nil, nil
		}
	}
	if b = encodeFooter(s); len(b) < FooterBound {
		return b
	}
	// Still too long: the capture's state and reason say bytes were
	// lost; how many is receipt.json's.
	for _, ss := range []*shortStream{s.Streams.Stdout, s.Streams.Stderr} {
		if ss != nil {
			ss.Accounting = nil
		}
	}
	if b = encodeFooter(s); len(b) < FooterBound {
		return b
	}
	// The redaction count too (the preview's markers show what was
	// masked); then, for a partial capture of two cut streams, the
	// committed sizes (observed_bytes and lines stay: a reader's next read
	// is planned on them), if that makes it fit; a footer that cannot fit
	// (a long process reason) keeps them.
	if s.Redaction != nil && s.Redaction.Enabled == nil {
		s.Redaction = nil
		if b = encodeFooter(s); len(b) < FooterBound {
			return b
		}
	}
	long := b
	for _, ss := range []*shortStream{s.Streams.Stdout, s.Streams.Stderr} {
		if ss != nil {
			ss.CommittedBytes = nil
		}
	}
	if b = encodeFooter(s); len(b) < FooterBound {
		return b
	}
	return long
}

// encodeFooter is "capwrap-receipt " and v's JSON on one line, line end
// included (see footerjson.go).
func encodeFooter(v interface{ appendJSON([]byte) []byte }) []byte {
	b := append(make([]byte, 0, 256), FooterPrefix...)
	return append(v.appendJSON(b), '\n')
}

// short is the receipt's short footer.
func (r *Receipt) short() *shortFooter {
	f := &shortFooter{ID: r.ID, Dir: r.Dir, ExitStatus: r.ExitStatus}
	p := r.Process
	f.Process = shortProcess{State: p.State, ExitCode: p.ExitCode, Signal: p.Signal, Reason: p.Reason}
	if p.Reason != nil && *p.Reason == string(p.State) {
		f.Process.Reason = nil // "timeout" twice: a key at its default
	}
	if p.State == ProcessRunning {
		f.Process.PID = p.PID
	}
	f.Capture = shortCapture{State: r.Capture.State, Reason: r.Capture.Reason, Error: r.Capture.Error}
	if !r.Redaction.Enabled || r.Redaction.Replaced > 0 {
		f.Redaction = &shortRedact{Replaced: r.Redaction.Replaced}
		if !r.Redaction.Enabled {
			f.Redaction.Enabled = new(bool)
		}
	}
	out, errs := r.Streams.Stdout.short(), r.Streams.Stderr.short()
	if out != nil || errs != nil {
		f.Streams = &shortStreams{Stdout: out, Stderr: errs}
	}
	return f
}

// short is a stream's part of the short footer, nil when there is nothing
// to say (empty, nothing lost, nothing cut).
func (s *Stream) short() *shortStream {
	var ss shortStream
	if s.ObservedBytes != nil && *s.ObservedBytes > 0 {
		ss.ObservedBytes, ss.Lines = s.ObservedBytes, s.Lines
	}
	if s.CommittedBytes != nil && (s.ObservedBytes == nil || *s.ObservedBytes != *s.CommittedBytes) {
		ss.CommittedBytes, ss.Lines = s.CommittedBytes, s.Lines
	}
	if pv := s.Preview; pv != nil && pv.State != "complete" {
		ss.Preview = &shortPreview{State: pv.State, OmittedBytes: new(pv.OmittedBytes), OmittedLines: new(pv.OmittedLines)}
	}
	if a := s.Accounting; a != nil && (a.Pending > 0 || a.Discarded > 0) {
		ss.Accounting = &shortAccounting{Pending: a.Pending, Discarded: a.Discarded}
	}
	if ss == (shortStream{}) {
		return nil
	}
	return &ss
}
