package store

import (
	"bytes"
	"encoding/json"
)

// Schema is the value of the receipt's "schema" key (SPEC §7).
const Schema = "capwrap.receipt/v1"

// Receipt is the capture receipt of SPEC §7, schema capwrap.receipt/v1. The
// same value is written pretty-printed to receipt.json (and receipt.live.json
// while the child runs) and compact on the "capwrap-receipt" footer line.
// Pointer fields are null when unknown: the spec forbids writing 0 for a value
// that is not known.
type Receipt struct {
	Schema     string       `json:"schema"`
	ID         *string      `json:"id"`
	Dir        *string      `json:"dir"`
	AbsDir     *string      `json:"abs_dir"`
	Command    []string     `json:"command,omitempty"`
	StartedAt  *string      `json:"started_at"`
	EndedAt    *string      `json:"ended_at"`
	DurationMS *int64       `json:"duration_ms"`
	Process    Process      `json:"process"`
	Capture    CaptureState `json:"capture"`
	Redaction  Redaction    `json:"redaction"`
	Streams    Streams      `json:"streams"`
	PTY        bool         `json:"pty"`
	ExitStatus *int         `json:"exit_status"`
}

// Process states written to the receipt's "process" object (SPEC §7).
const (
	ProcessRunning    = "running"
	ProcessExited     = "exited"
	ProcessSignaled   = "signaled"
	ProcessTimeout    = "timeout"
	ProcessCancelled  = "cancelled"
	ProcessNotStarted = "not_started"
)

// Process is the receipt's "process" object: what became of the child.
// State is one of running, exited, signaled, timeout, cancelled, not_started.
// Signal is the signal's name ("SIGKILL") when the child was killed by one.
type Process struct {
	State    string  `json:"state"`
	PID      *int    `json:"pid,omitempty"`
	ExitCode *int    `json:"exit_code"`
	Signal   *string `json:"signal"`
	Reason   *string `json:"reason"`
}

// CaptureState is the receipt's "capture" object. State is one of pending,
// complete, partial, failed, disabled; Reason names why a capture is partial
// (drain_timeout, capture_limit, directory_quota, writer_stalled, write_error,
// abandoned); Error carries the text of a write error.
type CaptureState struct {
	State  string  `json:"state"`
	Reason *string `json:"reason"`
	Error  *string `json:"error"`
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
// ObservedBytes were read from the pipe, CommittedBytes reached the file
// (after redaction). Lines counts newline bytes of the committed (sanitized)
// stream. File is relative like Receipt.Dir, null when no file was kept.
// SHA256 is the hex digest of the committed file, set only when the capture
// is complete.
type Stream struct {
	ObservedBytes   *int64   `json:"observed_bytes"`
	CommittedBytes  *int64   `json:"committed_bytes"`
	Lines           *int64   `json:"lines"`
	LastLinePartial *bool    `json:"last_line_partial"`
	File            *string  `json:"file"`
	SHA256          *string  `json:"sha256"`
	Preview         *Preview `json:"preview"`
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
		State *string `json:"state"`
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

// compactFooter is the short footer of a compact success (SPEC §7): keys
// that are null, empty or the default are left out.
type compactFooter struct {
	ExitStatus *int `json:"exit_status"`
	Process    struct {
		ExitCode *int `json:"exit_code"`
	} `json:"process"`
	Capture struct {
		State string `json:"state"`
	} `json:"capture"`
}

// Footer returns the one-line footer "capwrap-receipt {JSON}\n" (SPEC §7),
// with no newline inside the JSON. When compact is true (a compact success:
// everything shown, exit 0, nothing kept) only exit_status,
// process.exit_code and capture.state are written, which a reader completes
// with the schema's defaults; that line is under 100 bytes.
func (r *Receipt) Footer(compact bool) ([]byte, error) {
	var v any = r
	if compact {
		var f compactFooter
		f.ExitStatus = r.ExitStatus
		f.Process.ExitCode = r.Process.ExitCode
		f.Capture.State = r.Capture.State
		v = &f
	}
	var buf bytes.Buffer
	buf.WriteString(FooterPrefix)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
