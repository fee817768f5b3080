package runner

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLiveReceiptSilent: a command that has printed nothing when the live
// receipt is due (liveReceiptDelay) has it put off (issue 28), and no
// capture is created for it meanwhile; it comes at the command's first
// byte or at liveReceiptSilentDelay, whichever is first. Each command
// waits for its condition, not for a time.
func TestLiveReceiptSilent(t *testing.T) {
	defer func(d, s time.Duration) { liveReceiptDelay, liveReceiptSilentDelay = d, s }(liveReceiptDelay, liveReceiptSilentDelay)
	// wait is a shell loop until the file "$D/go" exists.
	const wait = `until [ -e "$D/go" ]; do sleep 0.01; done`
	release := func(t *testing.T, dir string) {
		if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
			t.Error(err)
		}
	}
	// waitFor polls cond until it holds (the command is still waiting).
	waitFor := func(t *testing.T, what string, cond func() bool) {
		for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("%s: not after a minute", what)
				return
			}
		}
	}
	liveFiles := func(dir string) []string {
		m, _ := filepath.Glob(filepath.Join(dir, "to", "*", "receipt.live.json"))
		return m
	}
	t.Run("silent, put off", func(t *testing.T) {
		liveReceiptDelay, liveReceiptSilentDelay = 0, time.Hour
		dir := t.TempDir()
		before := liveReceiptsDeferred.Load()
		go func() {
			waitFor(t, "the live receipt put off", func() bool { return liveReceiptsDeferred.Load() > before })
			release(t, dir)
		}()
		o, _, _ := testRun(t, dir, []string{"sh", "-c", wait}, nil)
		if o.ExitStatus() != 0 || o.Kept {
			t.Fatalf("exit %d, kept %v; want 0, false", o.ExitStatus(), o.Kept)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "to", "2*")); len(m) != 0 { // IDs start with the year
			t.Errorf("a silent run made %v", m)
		}
	})
	t.Run("silent, at the second delay", func(t *testing.T) {
		liveReceiptDelay, liveReceiptSilentDelay = 0, 0
		dir := t.TempDir()
		go func() {
			waitFor(t, "receipt.live.json", func() bool { return len(liveFiles(dir)) > 0 })
			release(t, dir)
		}()
		if o, _, _ := testRun(t, dir, []string{"sh", "-c", wait}, nil); o.ExitStatus() != 0 {
			t.Fatalf("exit %d", o.ExitStatus())
		}
	})
	t.Run("printed", func(t *testing.T) {
		liveReceiptDelay, liveReceiptSilentDelay = 0, time.Hour
		dir := t.TempDir()
		go func() {
			waitFor(t, "receipt.live.json", func() bool { return len(liveFiles(dir)) > 0 })
			release(t, dir)
		}()
		// The command prints at once: its live receipt comes at the
		// first delay, or at the byte if the timer came first.
		argv := []string{"sh", "-c", "echo hi; " + wait}
		if o, _, _ := testRun(t, dir, argv, nil); o.ExitStatus() != 0 {
			t.Fatalf("exit %d", o.ExitStatus())
		}
	})
}

// TestPassThroughMark: a capwrap that passes a nested capwrap through
// gives it EnvNested set to passThroughMark when it had none itself, so
// that the inner one captures (no pipe is "-") and waits for its
// watchdog's exit (waitForWatchdog); one that had it passes it on as it
// is (SPEC §1: a capwrap under a capture passes through again).
func TestPassThroughMark(t *testing.T) {
	for _, tc := range []struct{ had, want string }{{"", passThroughMark}, {"12:34", "12:34"}} {
		dir := t.TempDir()
		// Passed through, the command has capwrap's own streams: it
		// writes to a file.
		o, _, _ := testRun(t, dir, []string{"sh", "-c", `echo "nested=$` + EnvNested + `" >"$D/nested"`}, func(c *Config) {
			c.PassThrough = true
			if tc.had != "" {
				c.Environ = append(c.Environ, EnvNested+"="+tc.had)
			}
			c.Getenv = func(k string) string {
				if k == EnvNested {
					return tc.had
				}
				return ""
			}
		})
		got, err := os.ReadFile(filepath.Join(dir, "nested"))
		if o.ExitStatus() != 0 || err != nil || string(got) != "nested="+tc.want+"\n" {
			t.Errorf("had %q: exit %d, wrote %q (%v); want nested=%s", tc.had, o.ExitStatus(), got, err, tc.want)
		}
	}
}
