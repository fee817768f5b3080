package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capwrap/capwrap/internal/guard"
	"github.com/capwrap/capwrap/preview"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// settled is the outcome of a run that exited 0, made and kept no capture,
// and whose preview showed everything: a compact success.
func settled() Outcome {
	t0 := time.Date(2026, 11, 30, 3, 6, 12, 0, time.UTC)
	complete := preview.Info{State: preview.StateComplete, ShownBytes: 6}
	return Outcome{
		Launched:  t0,
		Label:     []string{"echo", "hello"},
		Redacting: true,
		Process: wrap.Result{State: wrap.StateExited, ExitCode: 0, PID: 4242,
			Started: t0, Ended: t0.Add(1500 * time.Millisecond), ObservedStdout: 6},
		Store:    store.Result{State: receipt.CaptureComplete, Stdout: store.StreamResult{Committed: 6}},
		Streams:  [2]StreamFacts{{Lines: 1, Released: 6, ValidUTF8: true}, {ValidUTF8: true}},
		Previews: [2]*preview.Info{&complete, {State: preview.StateComplete}},
	}
}

// notStarted is o with nothing read nor written: the command did not run.
func notStarted(o Outcome) Outcome {
	o.Streams = [2]StreamFacts{{ValidUTF8: true}, {ValidUTF8: true}}
	o.Store.Stdout, o.Store.Stderr = store.StreamResult{}, store.StreamResult{}
	return o
}

// kept is a settled outcome whose capture was made and kept.
func kept(o Outcome) Outcome {
	o.Place = &Place{ID: "20261130T030612Z-k3j4h5g6x2", Dir: "tool-outputs/20261130T030612Z-k3j4h5g6x2", AbsDir: "/w/tool-outputs/20261130T030612Z-k3j4h5g6x2"}
	o.Kept = true
	o.Store.Stdout.File = o.Place.Dir + "/stdout.log"
	o.Store.Stdout.SHA256 = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
	o.Store.Stderr.File = o.Place.Dir + "/stderr.log"
	return o
}

// receiptJSON flattens a receipt to "path=value" facts, as the testscripts'
// rcpt command prints them, after holding it to the accounting identity
// (receipt.Receipt.Check), as rcpt does.
func receiptJSON(t *testing.T, rc *receipt.Receipt) map[string]any {
	t.Helper()
	if err := rc.Check(); err != nil {
		t.Fatalf("accounting (SPEC §7): %v", err)
	}
	b, err := json.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func at(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// TestOutcomeReceipt: the receipt and the exit status of each kind of end
// of a run (SPEC §3 table, §7), computed without starting a process.
func TestOutcomeReceipt(t *testing.T) {
	diskFull := errors.New("no space left on device")
	for _, tc := range []struct {
		name    string
		o       func() Outcome
		status  int
		reraise syscall.Signal
		compact bool
		keep    bool // WantKeep(Auto)
		want    map[string]any
	}{
		{"compact success", settled, 0, 0, true, false, map[string]any{
			"id": nil, "dir": nil, "process.state": "exited", "process.exit_code": 0.0, "process.pid": 4242.0,
			"capture.state": "complete", "exit_status": 0.0, "duration_ms": 1500.0, "command": []any{"echo", "hello"},
			"streams.stdout.file": nil, "streams.stdout.sha256": nil, "streams.stdout.preview.state": "complete",
			"started_at": "2026-11-30T03:06:12Z", "ended_at": "2026-11-30T03:06:13.5Z"}},
		{"kept success", func() Outcome { return kept(settled()) }, 0, 0, false, false, map[string]any{
			"id": "20261130T030612Z-k3j4h5g6x2", "abs_dir": "/w/tool-outputs/20261130T030612Z-k3j4h5g6x2",
			"streams.stdout.file":   "tool-outputs/20261130T030612Z-k3j4h5g6x2/stdout.log",
			"streams.stdout.sha256": "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"}},
		{"failure", func() Outcome {
			o := kept(settled())
			o.Process.ExitCode = 3
			return o
		}, 3, 0, false, true, map[string]any{"process.exit_code": 3.0, "exit_status": 3.0, "process.reason": nil}},
		{"truncated preview is kept", func() Outcome {
			o := settled()
			o.Previews[0] = &preview.Info{State: preview.StateTruncated, OmittedBytes: 100, OmittedLines: 9}
			return o
		}, 0, 0, true, true, map[string]any{"streams.stdout.preview.omitted_lines": 9.0}},
		{"secrets replaced: full footer", func() Outcome {
			o := settled()
			o.Streams[1].Replaced = 2
			return o
		}, 0, 0, false, false, map[string]any{"redaction.replaced": 2.0, "redaction.per_stream.stderr": 2.0}},
		{"no redaction: full footer", func() Outcome {
			o := settled()
			o.Redacting = false
			return o
		}, 0, 0, false, false, map[string]any{"redaction.enabled": false, "redaction.per_stream": nil}},
		{"cancelled", func() Outcome {
			o := settled()
			o.Process.State, o.Process.ExitCode, o.Process.Signal, o.Process.Forwarded = wrap.StateSignaled, -1, syscall.SIGINT, syscall.SIGINT
			return o
		}, 130, syscall.SIGINT, false, true, map[string]any{"process.state": "cancelled", "process.signal": "SIGINT",
			"process.exit_code": nil, "process.reason": "SIGINT received by capwrap and forwarded"}},
		{"a job cancelled by capwrap stop", func() Outcome {
			o := settled()
			o.Process.State, o.Process.ExitCode, o.Process.Signal, o.Process.Forwarded = wrap.StateSignaled, -1, syscall.SIGKILL, syscall.SIGKILL
			o.SignalFrom = "capwrap stop"
			return o
		}, 137, syscall.SIGKILL, false, true, map[string]any{"process.state": "cancelled", "process.signal": "SIGKILL",
			"process.exit_code": nil, "process.reason": "SIGKILL sent by capwrap stop"}},
		{"cancelled, then SIGKILL after --kill-after", func() Outcome {
			o := settled()
			o.Process.State, o.Process.ExitCode, o.Process.Signal = wrap.StateSignaled, -1, syscall.SIGKILL
			o.Process.Forwarded, o.Process.Escalated, o.Process.KillAfter = syscall.SIGTERM, true, 5*time.Second
			return o
		}, 137, syscall.SIGKILL, false, true, map[string]any{"process.state": "cancelled", "process.signal": "SIGKILL",
			"process.reason": "SIGTERM received by capwrap and forwarded; SIGKILL after --kill-after 5s", "exit_status": 137.0}},
		{"cancelled, a descendant killed after --kill-after", func() Outcome {
			o := settled()
			o.Process.State, o.Process.ExitCode, o.Process.Signal = wrap.StateSignaled, -1, syscall.SIGHUP
			o.Process.Forwarded, o.Process.Escalated, o.Process.KillAfter = syscall.SIGHUP, true, 1500*time.Millisecond
			return o
		}, 129, syscall.SIGHUP, false, true, map[string]any{"process.state": "cancelled", "process.signal": "SIGHUP",
			"process.reason": "SIGHUP received by capwrap and forwarded; SIGKILL after --kill-after 1.5s"}},
		{"exited after a forwarded signal, a descendant killed after --kill-after", func() Outcome {
			o := settled()
			o.Process.ExitCode, o.Process.Forwarded, o.Process.Escalated, o.Process.KillAfter = 0, syscall.SIGINT, true, 5*time.Second
			return o
		}, 0, 0, false, false, map[string]any{"process.state": "exited", "process.exit_code": 0.0,
			"process.reason": "SIGINT received by capwrap and forwarded; SIGKILL after --kill-after 5s"}},
		{"killed by another signal", func() Outcome {
			o := settled()
			o.Process.State, o.Process.ExitCode, o.Process.Signal, o.Process.Forwarded = wrap.StateSignaled, -1, syscall.SIGKILL, syscall.SIGTERM
			return o
		}, 137, syscall.SIGKILL, false, true, map[string]any{"process.state": "signaled", "process.signal": "SIGKILL", "process.reason": nil}},
		{"timeout", func() Outcome {
			o := settled()
			o.Process.State, o.Process.ExitCode, o.Process.Signal, o.Process.TimedOut = wrap.StateSignaled, -1, syscall.SIGTERM, true
			return o
		}, 124, 0, false, true, map[string]any{"process.state": "timeout", "process.signal": "SIGTERM", "process.reason": "timeout", "exit_status": 124.0}},
		{"drain timeout", func() Outcome {
			o := settled()
			o.Process.DrainTimedOut = true
			return o
		}, 0, 0, false, true, map[string]any{"capture.state": "partial", "capture.reason": "drain_timeout", "exit_status": 0.0}},
		{"capture could not be made", func() Outcome {
			o := settled()
			o.Store = notMade(errors.New("permission denied"))
			return o
		}, 0, 0, false, true, map[string]any{"capture.state": "failed", "capture.reason": "write_error",
			"capture.error": "cannot create the capture: permission denied", "exit_status": 0.0}},
		{"capture could not be made, --strict", func() Outcome {
			o := settled()
			o.Store, o.Strict = notMade(errors.New("permission denied")), true
			return o
		}, 125, 0, false, true, map[string]any{"capture.state": "failed", "exit_status": 125.0, "process.exit_code": 0.0}},
		{"write error, --strict, child killed: no re-raise", func() Outcome {
			o := kept(settled())
			o.Strict = true
			o.Store.State, o.Store.Reason, o.Store.Error = receipt.CapturePartial, new(receipt.ReasonWriteError), new(diskFull.Error())
			o.Process.State, o.Process.ExitCode, o.Process.Signal = wrap.StateSignaled, -1, syscall.SIGSEGV
			return o
		}, 125, 0, false, true, map[string]any{"capture.reason": "write_error", "process.signal": "SIGSEGV",
			"exit_status": 125.0, "streams.stdout.sha256": nil}},
		{"receipt file failed, --strict", func() Outcome {
			o := settled()
			o.Strict, o.OwnFailures = true, []error{diskFull}
			return o
		}, 125, 0, false, false, map[string]any{"capture.state": "complete", "exit_status": 125.0}},
		{"receipt file failed, not strict", func() Outcome {
			o := settled()
			o.OwnFailures = []error{diskFull}
			return o
		}, 0, 0, true, false, map[string]any{"exit_status": 0.0}},
		{"capture limit is not capwrap's failure", func() Outcome {
			o := kept(settled())
			o.Strict = true
			o.Store.State, o.Store.Reason = receipt.CapturePartial, new(receipt.ReasonCaptureLimit)
			return o
		}, 0, 0, false, true, map[string]any{"capture.reason": "capture_limit", "exit_status": 0.0}},
		{"cancelled before the start", func() Outcome {
			o := notStarted(settled())
			o.Process = wrap.Result{State: wrap.StateNotStarted, ExitCode: -1, Forwarded: syscall.SIGINT,
				StartErr: fmt.Errorf("SIGINT received before the command started: %w", wrap.ErrCancelled)}
			o.Previews = [2]*preview.Info{{State: preview.StateComplete}, {State: preview.StateComplete}}
			return o
		}, 130, syscall.SIGINT, false, true, map[string]any{"process.state": "cancelled", "process.exit_code": nil,
			"process.signal": nil, "exit_status": 130.0,
			"process.reason": "SIGINT received by capwrap before the command started; it was not run"}},
		{"not found", func() Outcome {
			o := notStarted(settled())
			o.Process = wrap.Result{State: wrap.StateNotStarted, ExitCode: -1, StartErr: &wrap.StartError{Kind: wrap.ErrNotFound, Err: errors.New("exec: not found")}}
			o.Previews = [2]*preview.Info{{State: preview.StateComplete}, {State: preview.StateComplete}}
			return o
		}, 127, 0, false, false, map[string]any{"process.state": "not_started", "process.exit_code": nil,
			"process.signal": nil, "process.pid": nil, "process.reason": "exec: not found", "exit_status": 127.0}},
		{"not executable", func() Outcome {
			o := notStarted(settled())
			o.Process = wrap.Result{State: wrap.StateNotStarted, ExitCode: -1, StartErr: &wrap.StartError{Kind: wrap.ErrNotExecutable, Err: errors.New("permission denied")}}
			return o
		}, 126, 0, false, false, map[string]any{"exit_status": 126.0}},
		{"not started otherwise", func() Outcome {
			o := notStarted(settled())
			o.Process = wrap.Result{State: wrap.StateNotStarted, ExitCode: -1, StartErr: errors.New("fork: resource temporarily unavailable")}
			return o
		}, 125, 0, false, false, map[string]any{"exit_status": 125.0}},
		{"refused", func() Outcome { return Outcome{Refused: errors.New("bad pattern")} }, 125, 0, false, true, nil},
		{"no label", func() Outcome {
			o := settled()
			o.Label = nil
			return o
		}, 0, 0, true, false, map[string]any{"command": nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o()
			if got := o.ExitStatus(); got != tc.status {
				t.Errorf("ExitStatus = %d, want %d", got, tc.status)
			}
			if got := o.Reraise(); got != tc.reraise {
				t.Errorf("Reraise = %v, want %v", got, tc.reraise)
			}
			if got := o.CompactFooter(); got != tc.compact {
				t.Errorf("CompactFooter = %v, want %v", got, tc.compact)
			}
			if got := o.WantKeep(Auto); got != tc.keep {
				t.Errorf("WantKeep(auto) = %v, want %v", got, tc.keep)
			}
			if !o.WantKeep(Always) || o.WantKeep(Never) {
				t.Errorf("--keep always/never not obeyed")
			}
			m := receiptJSON(t, o.Receipt())
			if m["schema"] != receipt.Schema {
				t.Errorf("schema %v", m["schema"])
			}
			for path, want := range tc.want {
				got, _ := json.Marshal(at(m, path))
				exp, _ := json.Marshal(want)
				if string(got) != string(exp) {
					t.Errorf("%s = %s, want %s", path, got, exp)
				}
			}
		})
	}
}

// TestLiveReceipt: while the child runs the receipt says running and
// pending, names the capture and the pid, and knows nothing else yet.
func TestLiveReceipt(t *testing.T) {
	o := Outcome{Running: true, Launched: time.Date(2026, 11, 30, 3, 6, 12, 0, time.UTC), Redacting: true,
		Label: []string{"make"}, Process: wrap.Result{PID: 77}, Place: &Place{ID: "X", Dir: "tool-outputs/X", AbsDir: "/t/X"},
		Store: store.Result{State: receipt.CapturePartial, Reason: new(receipt.ReasonWriteError)}}
	m := receiptJSON(t, o.Receipt())
	for path, want := range map[string]any{
		"process.state": "running", "process.pid": 77.0, "process.exit_code": nil, "capture.state": "pending",
		"capture.reason": nil, "id": "X", "dir": "tool-outputs/X", "exit_status": nil, "ended_at": nil,
		"duration_ms": nil, "started_at": "2026-11-30T03:06:12Z", "streams.stdout.committed_bytes": nil,
		"streams.stderr.observed_bytes": nil, "redaction.enabled": true,
	} {
		got, _ := json.Marshal(at(m, path))
		exp, _ := json.Marshal(want)
		if string(got) != string(exp) {
			t.Errorf("%s = %s, want %s", path, got, exp)
		}
	}
	if o.OwnFailure() {
		t.Errorf("a running capture reports an own failure")
	}
}

// TestFooterForms: a compact success's footer is under 100 bytes; a kept
// capture's is the short form of SPEC §7 (store's TestShortFooter).
func TestFooterForms(t *testing.T) {
	o := settled()
	short, err := o.Receipt().Footer(o.CompactFooter())
	if err != nil {
		t.Fatal(err)
	}
	if len(short) >= 100 || !strings.HasPrefix(string(short), receipt.FooterPrefix) || strings.Count(string(short), "\n") != 1 {
		t.Errorf("compact footer %q", short)
	}
	f := kept(settled())
	short, _ = f.Receipt().Footer(f.CompactFooter())
	if !strings.Contains(string(short), `"id":"20261130T030612Z-k3j4h5g6x2"`) || strings.Contains(string(short), `"abs_dir"`) ||
		strings.Count(string(short), "\n") != 1 {
		t.Errorf("short footer of a kept capture %q", short)
	}
}

// TestNotMadeHung: a capture given up on a hung file system is
// writer_stalled, one that failed otherwise write_error.
func TestNotMadeHung(t *testing.T) {
	if r := notMade(guard.ErrHung{What: "creating the capture", After: time.Second}); *r.Reason != "writer_stalled" || r.State != "failed" {
		t.Errorf("hung: %v %v", r.State, *r.Reason)
	}
	if r := notMade(errors.New("no space left on device")); *r.Reason != "write_error" {
		t.Errorf("write error: %v", *r.Reason)
	}
}
