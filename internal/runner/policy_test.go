package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capwrap/capwrap/internal/sigcatch"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/redact"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// TestMain lets this test binary serve as the watchdog's helper, as
// capwrap's main does (wrap.StartWatchdog execs it once a capture is
// made), and keeps the default actions of signals for the tests.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == wrap.WatchdogArg {
		os.Exit(wrap.WatchdogMain(os.Stdin, os.Args[2:]))
	}
	sigcatch.Release()
	os.Exit(m.Run())
}

// testDiag collects capwrap's messages.
type testDiag struct{ t *testing.T }

func (d testDiag) Errorf(f string, a ...any) { d.t.Logf("error: "+f, a...) }
func (d testDiag) Warnf(f string, a ...any)  { d.t.Logf("warning: "+f, a...) }
func (d testDiag) Hintf(f string, a ...any)  { d.t.Logf("hint: "+f, a...) }

// policySecret is a secret-looking variable's value in testRun's
// environment: the label masks it.
const policySecret = "tok-3f9a8c7d6e5b4a39"

// testRun runs argv as capwrap does in preview mode (a harness's), in a
// fresh tool-outputs directory under dir, with policySecret in the
// environment as MY_API_TOKEN, and returns the outcome, what capwrap
// printed on stdout, and the number of redaction policies compiled.
func testRun(t *testing.T, dir string, argv []string, edit func(*Config)) (o *Outcome, stdout string, compiled int64) {
	t.Helper()
	f := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, errs := f("out"), f("err")
	env := []string{"PATH=" + os.Getenv("PATH"), "MY_API_TOKEN=" + policySecret, "D=" + dir}
	cfg := Config{Argv: argv, Dir: filepath.Join(dir, "to"), Mode: ModePreview, Color: Never,
		KillAfter: 5 * time.Second, DrainTimeout: time.Second, Limits: store.DefaultLimits(),
		StdoutChars: 8000, StderrChars: 2000, PreviewBytes: 16 << 10,
		Stdin: stdin, Stdout: out, Stderr: errs, Diag: testDiag{t},
		Getenv: func(string) string { return "" }, Environ: env}
	if edit != nil {
		edit(&cfg)
	}
	before := policiesCompiled.Load()
	o = Run(cfg)
	compiled = policiesCompiled.Load() - before
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return o, string(b), compiled
}

// readReceipt reads the receipt file at path.
func readReceipt(t *testing.T, path string) *receipt.Receipt {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rc receipt.Receipt
	if err := json.Unmarshal(b, &rc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &rc
}

// checkLabel fails unless label is argv's, its secret masked.
func checkLabel(t *testing.T, what string, label []string, argv []string) {
	t.Helper()
	got := strings.Join(label, " ")
	if len(label) != len(argv) || strings.Contains(got, policySecret) || !strings.Contains(got, "[REDACTED:env:MY_API_TOKEN]") || label[0] != argv[0] {
		t.Fatalf("%s: label %q, want %q with the secret masked", what, label, argv)
	}
}

// TestPolicyCompiledWhenNeeded: the redaction policy is compiled only when
// the run needs it (lazyPolicy). A silent command that succeeds, whose
// compact footer and capture not kept carry no label, compiles none; a
// command that prints, one that fails (its receipt.json has the label), a
// --receipt-file and a live receipt each compile it once, and their
// labels are sanitized.
func TestPolicyCompiledWhenNeeded(t *testing.T) {
	t.Run("silent success", func(t *testing.T) {
		// However slow the start on a busy machine, the live receipt
		// (which has a label) does not come before the end.
		defer func(d time.Duration) { liveReceiptDelay = d }(liveReceiptDelay)
		liveReceiptDelay = time.Hour
		dir := t.TempDir()
		o, stdout, n := testRun(t, dir, []string{"sh", "-c", ":", policySecret}, nil)
		if o.ExitStatus() != 0 || o.Kept || n != 0 {
			t.Fatalf("exit %d, kept %v, %d policies compiled; want 0, false, 0", o.ExitStatus(), o.Kept, n)
		}
		if !strings.Contains(stdout, `capwrap-receipt {"exit_status":0`) {
			t.Fatalf("printed %q, want the compact footer", stdout)
		}
	})
	t.Run("output", func(t *testing.T) {
		dir := t.TempDir()
		rf := filepath.Join(dir, "receipt")
		argv := []string{"sh", "-c", `echo "pw $MY_API_TOKEN"`, policySecret}
		o, stdout, n := testRun(t, dir, argv, func(c *Config) { c.ReceiptFile = rf })
		if o.ExitStatus() != 0 || n != 1 {
			t.Fatalf("exit %d, %d policies compiled; want 0, 1", o.ExitStatus(), n)
		}
		if strings.Contains(stdout, policySecret) || !strings.Contains(stdout, "pw [REDACTED:env:MY_API_TOKEN]") {
			t.Fatalf("printed %q: the output not redacted", stdout)
		}
		checkLabel(t, "--receipt-file", readReceipt(t, rf).Command, argv)
	})
	t.Run("output, no label needed", func(t *testing.T) {
		dir := t.TempDir()
		o, _, n := testRun(t, dir, []string{"sh", "-c", "echo hi", policySecret}, nil)
		if o.ExitStatus() != 0 || o.Kept || n != 1 || o.Label != nil {
			t.Fatalf("exit %d, kept %v, %d policies compiled, label %q; want 0, false, 1 (the output's), none", o.ExitStatus(), o.Kept, n, o.Label)
		}
	})
	t.Run("silent failure", func(t *testing.T) {
		dir := t.TempDir()
		argv := []string{"sh", "-c", "exit 3", policySecret}
		o, _, n := testRun(t, dir, argv, nil)
		if o.ExitStatus() != 3 || !o.Kept || n != 1 {
			t.Fatalf("exit %d, kept %v, %d policies compiled; want 3, true, 1", o.ExitStatus(), o.Kept, n)
		}
		checkLabel(t, "receipt.json", readReceipt(t, filepath.Join(o.Place.AbsDir, "receipt.json")).Command, argv)
	})
	t.Run("silent success kept", func(t *testing.T) {
		dir := t.TempDir()
		argv := []string{"true", policySecret}
		o, _, n := testRun(t, dir, argv, func(c *Config) { c.Keep = Always })
		if o.ExitStatus() != 0 || !o.Kept || n != 1 {
			t.Fatalf("exit %d, kept %v, %d policies compiled; want 0, true, 1", o.ExitStatus(), o.Kept, n)
		}
		checkLabel(t, "receipt.json", readReceipt(t, filepath.Join(o.Place.AbsDir, "receipt.json")).Command, argv)
	})
	t.Run("live receipt", func(t *testing.T) {
		// The command copies its live receipt, once there is one, and
		// prints nothing: only the live receipt needs the policy.
		dir := t.TempDir()
		argv := []string{"sh", "-c", `until [ -e "$D"/to/*/receipt.live.json ]; do sleep 0.01; done; cp "$D"/to/*/receipt.live.json "$D/live"`, policySecret}
		o, _, n := testRun(t, dir, argv, nil)
		if o.ExitStatus() != 0 || o.Kept || n != 1 {
			t.Fatalf("exit %d, kept %v, %d policies compiled; want 0, false, 1", o.ExitStatus(), o.Kept, n)
		}
		checkLabel(t, "receipt.live.json", readReceipt(t, filepath.Join(dir, "live")).Command, argv)
	})
	t.Run("not found", func(t *testing.T) {
		// The start error names the command: sanitized.
		dir := t.TempDir()
		o, stdout, n := testRun(t, dir, []string{filepath.Join(dir, policySecret)}, nil)
		if o.ExitStatus() != ExitNotFound || n != 1 || strings.Contains(fmt.Sprint(o.Process.StartErr), policySecret) || strings.Contains(stdout, policySecret) {
			t.Fatalf("exit %d, %d policies compiled, error %v, printed %q: want 127, 1, the secret masked", o.ExitStatus(), n, o.Process.StartErr, stdout)
		}
	})
}

// TestSinkWithoutBytes: a stream that gets no byte never asks for the
// policy, not even at its end (Close), and counts nothing.
func TestSinkWithoutBytes(t *testing.T) {
	asked := 0
	var out strings.Builder
	s := &sink{dst: &out, ready: func() (*redact.Policy, error) {
		asked++
		return redact.NewPolicy(redact.Options{})
	}}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	released, raw, valid := s.ledger.facts()
	if asked != 0 || s.started() || out.Len() != 0 || released != 0 || s.replaced() != 0 || s.seen() != nil {
		t.Fatalf("policy asked %d times, started %v, wrote %q, released %d (raw %v, valid %v)", asked, s.started(), out.String(), released, raw, valid)
	}
	s = &sink{dst: &out, ready: func() (*redact.Policy, error) {
		asked++
		return redact.NewPolicy(redact.Options{Values: []string{"hunter2hunter2"}})
	}}
	s.Write([]byte("pw hunter2hunter2"))
	s.Close()
	if asked != 1 || !s.started() || out.String() != "pw [REDACTED:value]" {
		t.Fatalf("policy asked %d times, started %v, wrote %q", asked, s.started(), out.String())
	}
}
