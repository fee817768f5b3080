// Package runner composes one run of a command under capwrap: it is the
// only package that imports wrap, preview, store and redact together.
// A run is prepare (everything that can refuse it, before the command
// starts) → spawn (wrap runs the child; each stream passes the redactor and
// reaches the capture, the preview keeper and, in tee mode, the terminal) →
// settle (end of stream, the outcome gathered) → publish (SPEC §4's order:
// files finalized, --receipt-file, receipt.json, then what the presenter
// prints). The facts of a run are one Outcome value; the receipt and the
// exit status are computed from it.
//
// runner holds no CLI policy: flags are parsed, validated and turned into a
// Config by package main, which also re-raises a child's signal after Run
// returns (Outcome.Reraise).
package runner

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/capwrap/capwrap/store"
)

// When is a three-way choice, auto|always|never, of --keep, --pty and
// --color.
type When int

// Values of When; the zero value is Auto.
const (
	Auto When = iota
	Always
	Never
)

// ParseWhen parses "auto", "always" or "never"; any other string is an
// error naming the allowed values.
func ParseWhen(s string) (When, error) {
	switch s {
	case "auto":
		return Auto, nil
	case "always":
		return Always, nil
	case "never":
		return Never, nil
	}
	return Auto, fmt.Errorf("want auto, always, never")
}

// Mode is how a run is presented (SPEC §2).
type Mode int

// Values of Mode; the zero value, ModeAuto, chooses preview or tee from
// the terminal (SPEC §2 table).
const (
	ModeAuto Mode = iota
	ModePreview
	ModeTee
	ModeQuiet
)

// Diag is capwrap's one voice on stderr (package main's diag.go): one-line
// "capwrap: error|warning|hint: ..." messages, lowercase, no final period.
type Diag interface {
	Errorf(format string, args ...any)
	Warnf(format string, args ...any)
	Hintf(format string, args ...any)
}

// Redaction is the sanitizer's configuration (SPEC §6).
type Redaction struct {
	// Off is --no-redact: the output is written unsanitized.
	Off bool
	// EnvNames are --redact-env names; AllowEnv the --redact-allow-env
	// names (exempt from the name test); Files the --redact-file paths,
	// read one value per line; Patterns the --redact-pattern regexps.
	EnvNames, AllowEnv, Files, Patterns []string
}

// Config is one run as package main decided it from the flags and their
// CAPWRAP_* variables. Durations are Go durations; budgets are characters;
// PreviewBytes is bytes.
type Config struct {
	// Argv is the command and its arguments (non-empty).
	Argv []string
	// Dir is --dir or CAPWRAP_DIR ("" for neither); DirFromFlag says it
	// came from the command line (for the hint when it is unusable).
	Dir         string
	DirFromFlag bool
	Mode        Mode
	Keep, PTY   When
	Color       When
	// Timeout (0: none), KillAfter and DrainTimeout of SPEC §3.
	Timeout, KillAfter, DrainTimeout time.Duration
	// NoticeAfter is how long a run goes before preview mode names its
	// capture ahead of the end (--notice-after; SPEC §5: "after a few
	// seconds"); 0: never. A job's run (Hooks) prints it only while
	// attached (Hooks.Attached).
	NoticeAfter time.Duration
	// Limits are the store's limits (SPEC §4 "Limits").
	Limits store.Limits
	// StdoutChars and StderrChars are the preview budgets in characters;
	// 0 shows no text of the stream, only its marker. PreviewBytes caps
	// the whole preview in bytes (SPEC §5).
	StdoutChars, StderrChars, PreviewBytes int
	Redaction                              Redaction
	// NoLabel leaves the command out of the receipt.
	NoLabel bool
	// ReceiptFile, when set, also receives the receipt as JSON.
	ReceiptFile string
	// Events, when not nil, opens the sink of the live updates (--events,
	// SPEC §12; see package events).
	Events func() (io.WriteCloser, error)
	// Strict is --strict (SPEC §3).
	Strict bool
	// LeaveDescendants is --leave-descendants: the processes the command
	// started that are still alive after it ended are left running
	// instead of ended (wrap.Config.LeaveDescendants; README "Process").
	LeaveDescendants bool

	// PassThrough runs Argv, a nested capwrap, without capturing it
	// (SPEC §1): see passThrough.
	PassThrough bool
	// Hooks, when set, make this run a background job's (SPEC §10; package
	// job implements them for a job's supervisor).
	Hooks Hooks

	Stdin, Stdout, Stderr *os.File
	Diag                  Diag
	// Getenv and Environ are the process environment (os.Getenv and
	// os.Environ unless a test says otherwise).
	Getenv  func(string) string
	Environ []string
}
