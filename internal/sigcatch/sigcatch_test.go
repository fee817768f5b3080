package sigcatch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// The cases run in a child process (this test binary again, with
// SIGCATCH_CASE set), since what is under test is how a process ends.
func TestMain(m *testing.M) {
	if c := os.Getenv("SIGCATCH_CASE"); c != "" {
		os.Exit(child(c))
	}
	os.Exit(m.Run())
}

// child runs one case and returns its exit status: 0 when the process
// carried on as the case expects (a case that expects death never gets
// there).
func child(c string) int {
	Catch() // as capwrap's main does first
	switch c {
	case "held": // a SIGTERM from the start waits on the channel
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		if sig := <-C(); sig != syscall.SIGTERM {
			return 2
		}
		return 0
	case "release": // Release re-raises what was caught: the process dies of it
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		waitCaught()
		Release()
		time.Sleep(10 * time.Second)
		return 3
	case "winch": // a caught SIGWINCH is dropped by Release
		syscall.Kill(os.Getpid(), syscall.SIGWINCH)
		waitCaught()
		Release()
		return 0
	case "recatch": // Catch after Release catches again
		Release()
		Catch()
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		if sig := <-C(); sig != syscall.SIGINT {
			return 2
		}
		return 0
	}
	return 4
}

// waitCaught waits until a signal sent to the process is on the channel.
func waitCaught() {
	for len(ch) == 0 {
		time.Sleep(time.Millisecond)
	}
}

func TestCases(t *testing.T) {
	for _, tc := range []struct {
		name   string
		signal syscall.Signal // the child's death, or 0 for exit 0
	}{
		{"held", 0},
		{"release", syscall.SIGTERM},
		{"winch", 0},
		{"recatch", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "SIGCATCH_CASE="+tc.name)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			switch {
			case tc.signal == 0 && err != nil:
				t.Fatalf("want exit 0, got %v\n%s", err, out)
			case tc.signal != 0 && !errors.As(err, &ee):
				t.Fatalf("want death by %v, got %v\n%s", tc.signal, err, out)
			case tc.signal != 0:
				ws := ee.Sys().(syscall.WaitStatus)
				if !ws.Signaled() || ws.Signal() != tc.signal {
					t.Fatalf("want death by %v, got %s\n%s", tc.signal, describe(ws), out)
				}
			}
		})
	}
}

func describe(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exit %d", ws.ExitStatus())
}

// TestIgnoredAtStart: a SIGINT ignored when the process started stays
// ignored (not caught, not forwarded), and SIGQUIT with it (SPEC §3).
func TestIgnoredAtStart(t *testing.T) {
	if os.Getenv("SIGCATCH_IGNORED") == "1" {
		if !IgnoredAtStart(syscall.SIGINT) || !IgnoredAtStart(syscall.SIGQUIT) || IgnoredAtStart(syscall.SIGTERM) {
			t.Fatalf("ignored at start: INT %v QUIT %v TERM %v", IgnoredAtStart(syscall.SIGINT),
				IgnoredAtStart(syscall.SIGQUIT), IgnoredAtStart(syscall.SIGTERM))
		}
		// Still ignored: of a SIGINT and a SIGTERM sent in that order,
		// only the SIGTERM arrives (Linux delivers pending signals lowest
		// number first, so a caught SIGINT would come first).
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		if sig := <-C(); sig != syscall.SIGTERM {
			t.Fatalf("an ignored SIGINT was caught")
		}
		return
	}
	cmd := exec.Command("sh", "-c", `trap '' INT; exec "$0" -test.run='^TestIgnoredAtStart$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "SIGCATCH_IGNORED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
