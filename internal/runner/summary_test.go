package runner

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/fatih/color"

	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/wrap"
)

// TestColorEnabled is the colour decision of issue 7: --color wins, auto
// colours a terminal stderr unless NO_COLOR is set or TERM is dumb.
func TestColorEnabled(t *testing.T) {
	for _, tc := range []struct {
		flag  When
		env   map[string]string
		tty   bool
		color bool
	}{
		{Auto, nil, true, true},
		{Auto, nil, false, false},
		{Auto, map[string]string{"NO_COLOR": "1"}, true, false},
		{Auto, map[string]string{"NO_COLOR": ""}, true, true}, // set but empty does not count (no-color.org)
		{Auto, map[string]string{"TERM": "dumb"}, true, false},
		{Auto, map[string]string{"TERM": "xterm-256color"}, true, true},
		{Always, map[string]string{"NO_COLOR": "1", "TERM": "dumb"}, false, true},
		{Never, nil, true, false},
	} {
		got := colorEnabled(tc.flag, func(k string) string { return tc.env[k] }, tc.tty)
		if got != tc.color {
			t.Errorf("colorEnabled(%v, %v, tty=%v) = %v, want %v", tc.flag, tc.env, tc.tty, got, tc.color)
		}
	}
}

// TestSetupColorPipe: a stderr that is not a terminal gets no colour under
// auto, whatever fatih/color decided from stdout.
func TestSetupColorPipe(t *testing.T) {
	saved := color.NoColor
	t.Cleanup(func() { color.NoColor = saved })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm")
	color.NoColor = false
	setupColor(Auto, os.Getenv, w)
	if !color.NoColor {
		t.Errorf("--color auto on a pipe: colour on")
	}
	setupColor(Always, os.Getenv, w)
	if color.NoColor {
		t.Errorf("--color always on a pipe: colour off")
	}
}

func TestPrintSummary(t *testing.T) {
	saved := color.NoColor
	t.Cleanup(func() { color.NoColor = saved })
	i64 := func(n int64) *int64 { return &n }
	dir := "tool-outputs/20261130T030612Z-k3j4h5g6x2"
	rcpt := func(capState receipt.CaptureState, reason *receipt.Reason) *receipt.Receipt {
		rc := &receipt.Receipt{Dir: &dir, DurationMS: i64(1500)}
		rc.Capture.State, rc.Capture.Reason = capState, reason
		rc.Streams.Stdout.CommittedBytes = i64(2048)
		rc.Streams.Stderr.CommittedBytes = i64(12)
		return rc
	}
	sigterm := "SIGTERM"
	timedOut := rcpt("complete", nil)
	timedOut.Process.Signal = &sigterm
	for _, tc := range []struct {
		name  string
		rc    *receipt.Receipt
		res   wrap.Result
		kept  bool
		want  string
		paint string // ANSI colour code with --color always
	}{
		{"success", rcpt("complete", nil), wrap.Result{State: wrap.StateExited}, true,
			"capwrap: exit 0 · 1.5s · stdout 2.0 KiB, stderr 12 B · complete · " + dir, "\x1b[32m"},
		{"failure", rcpt("complete", nil), wrap.Result{State: wrap.StateExited, ExitCode: 2}, true,
			"capwrap: exit 2 · ", "\x1b[31m"},
		{"signal", rcpt("complete", nil), wrap.Result{State: wrap.StateSignaled, ExitCode: -1, Signal: syscall.SIGINT}, true,
			"capwrap: killed by SIGINT · ", "\x1b[31m"},
		{"timeout", timedOut, wrap.Result{State: wrap.StateSignaled, TimedOut: true, Signal: syscall.SIGTERM}, true,
			"capwrap: timed out (SIGTERM) · ", "\x1b[31m"},
		{"partial success", rcpt("partial", new(receipt.ReasonCaptureLimit)), wrap.Result{State: wrap.StateExited}, true,
			"· partial (capture_limit) · ", "\x1b[33m"},
		{"not kept", rcpt("complete", nil), wrap.Result{State: wrap.StateExited}, false,
			"· complete · not kept", "\x1b[32m"},
		{"not started", rcpt("complete", nil), wrap.Result{State: wrap.StateNotStarted, ExitCode: -1}, false,
			"capwrap: not started · ", "\x1b[31m"},
		{"cancelled before the start", rcpt("complete", nil), wrap.Result{State: wrap.StateNotStarted, ExitCode: -1,
			Forwarded: syscall.SIGINT, StartErr: fmt.Errorf("x: %w", wrap.ErrCancelled)}, true,
			"capwrap: cancelled by SIGINT before the start · ", "\x1b[31m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			color.NoColor = true
			printSummary(&b, tc.rc, tc.res, tc.kept)
			plain := b.String()
			if !strings.Contains(plain, tc.want) || strings.Count(plain, "\n") != 1 || !strings.HasSuffix(plain, "\n") {
				t.Errorf("summary %q does not contain %q on one line", plain, tc.want)
			}
			if strings.Contains(plain, "\x1b") {
				t.Errorf("colour off, yet %q has an escape", plain)
			}
			b.Reset()
			color.NoColor = false
			printSummary(&b, tc.rc, tc.res, tc.kept)
			painted := b.String()
			if !strings.HasPrefix(painted, tc.paint) || !strings.HasSuffix(painted, "\x1b[0m\n") {
				t.Errorf("colour on: %q should start with %q and reset before the newline", painted, tc.paint)
			}
		})
	}
}
