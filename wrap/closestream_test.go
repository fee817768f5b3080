package wrap

import (
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// closeAfter is a stream's writer that takes n bytes, then returns err.
type closeAfter struct {
	n    int64
	err  error
	seen atomic.Int64
}

func (w *closeAfter) Write(p []byte) (int, error) {
	if w.seen.Add(int64(len(p))) > w.n {
		return len(p), w.err
	}
	return len(p), nil
}

// TestCloseStream: a writer that returns ErrCloseStream has capwrap's end
// of the stream closed, and a command that goes on writing there ends as
// it would in a pipeline whose reader has gone (issue 26: `yes | head
// -1`); any other writer error leaves the stream drained to its end.
func TestCloseStream(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		err        error
		wantSignal syscall.Signal
		wantExit   int
	}{
		{"endless writer meets the end of its pipe", []string{"yes"}, ErrCloseStream, syscall.SIGPIPE, -1},
		{"one that ignores SIGPIPE gets EPIPE", []string{"sh", "-c", `trap "" PIPE; yes; echo "status $?" >&2; exit 7`}, ErrCloseStream, 0, 7},
		{"another error is ignored", []string{"head", "-c", "3000000", "/dev/zero"}, errors.New("disk on fire"), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &closeAfter{n: 1 << 20, err: tc.err}
			done := make(chan Result, 1)
			go func() {
				done <- Run(Config{Args: tc.args, Stdout: w, Stderr: &buffer{}, DrainTimeout: time.Second, KillAfter: time.Second})
			}()
			var res Result
			select {
			case res = <-done:
			case <-time.After(patience): // a failure guard: yes never ends on its own
				t.Fatalf("%q did not end within %v", tc.args, patience)
			}
			switch {
			case tc.wantSignal != 0 && (res.State != StateSignaled || res.Signal != tc.wantSignal):
				t.Errorf("state %s signal %v exit %d, want death by %v", res.State, res.Signal, res.ExitCode, tc.wantSignal)
			case tc.wantSignal == 0 && (res.State != StateExited || res.ExitCode != tc.wantExit):
				t.Errorf("state %s signal %v exit %d, want exit %d", res.State, res.Signal, res.ExitCode, tc.wantExit)
			}
			if res.DrainTimedOut {
				t.Error("DrainTimedOut: a stream closed at the writer's request counts as cut")
			}
			if tc.err != ErrCloseStream && res.ObservedStdout != 3000000 {
				t.Errorf("observed %d bytes, want the whole 3000000", res.ObservedStdout)
			}
		})
	}
}
