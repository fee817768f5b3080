package job

import (
	"bufio"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/wrap"
)

// linkPair is a job's link and the launcher's end of it.
func linkPair(t *testing.T) (*Supervisor, *os.File) {
	t.Helper()
	a, b, err := wrap.SocketPair()
	if err != nil {
		t.Fatal(err)
	}
	// The launcher's stdout and stderr, for letGo: files of the test's
	// own, not the test binary's descriptors 1 and 2.
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	j := &Supervisor{Link: a, outFDs: []int{int(out.Fd())}}
	l := b
	t.Cleanup(func() { j.Link.Close(); l.Close(); out.Close() })
	return j, l
}

// TestJobLinkEOFStopsAttachedJob: a launcher that goes away before the
// hand-back is a killed capwrap (SPEC §3): the job gets SIGTERM. After a
// release, or once the run is ending, it does not.
func TestJobLinkEOFStopsAttachedJob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before func(j *Supervisor)
		stop   bool
	}{
		{"attached", func(*Supervisor) {}, true},
		{"ending", func(j *Supervisor) { j.freeze() }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, l := linkPair(t)
			sigs := j.Signals()
			tc.before(j)
			l.Close()
			// The SIGTERM that must come is waited for up to 30 s; one
			// that must not would come within milliseconds of the EOF
			// (a goroutine of this process), so a second is generous.
			wait := 30 * time.Second
			if !tc.stop {
				wait = time.Second
			}
			select {
			case s := <-sigs:
				if !tc.stop || s != syscall.SIGTERM {
					t.Errorf("got %v", s)
				}
			case <-time.After(wait):
				if tc.stop {
					t.Errorf("no SIGTERM when the launcher went away")
				}
			}
		})
	}
}

// TestJobReleaseProtocol: "release" is answered "released" while the run
// goes on, "ending" once it began to end; a released job ends detached.
func TestJobReleaseProtocol(t *testing.T) {
	j, l := linkPair(t)
	j.Signals()
	r := bufio.NewReader(l)
	l.WriteString("release\n")
	if line, _ := r.ReadString('\n'); line != "released\n" {
		t.Errorf("answer %q", line)
	}
	if j.freeze() {
		t.Errorf("a released job ends attached")
	}

	j2, l2 := linkPair(t)
	j2.Signals()
	if !j2.freeze() {
		t.Errorf("a job never released does not end attached")
	}
	r2 := bufio.NewReader(l2)
	l2.WriteString("release\n")
	if line, _ := r2.ReadString('\n'); line != "ending\n" {
		t.Errorf("answer to a late release %q", line)
	}
	if !j2.Attached() {
		t.Errorf("a late release let go of the launcher")
	}
}

// TestJobControl: the control FIFO's "signal N" lines become signals for
// the run; anything else is ignored.
func TestJobControl(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	j := &Supervisor{signals: make(chan os.Signal, 4)}
	go j.serveControl(r)
	w.WriteString("signal 15\nbogus\nsignal 999\nsig")
	w.WriteString("nal 9\n")
	w.Close()
	for _, want := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case s := <-j.signals:
			if s != want {
				t.Errorf("got %v, want %v", s, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no %v", want)
		}
	}
}

func TestExitLine(t *testing.T) {
	for _, tc := range []struct {
		in     string
		status int
		sig    syscall.Signal
	}{{"0 0", 0, 0}, {"137 9", 137, 9}, {"3", runner.ExitUsage, 0}, {strings.Repeat(" ", 3), runner.ExitUsage, 0}} {
		if s, g := exitLine(tc.in); s != tc.status || g != tc.sig {
			t.Errorf("exitLine(%q) = %d, %v", tc.in, s, g)
		}
	}
	if signalNamed("SIGTERM") != syscall.SIGTERM || signalNamed("SIGNOPE") != 0 {
		t.Errorf("signalNamed")
	}
}
