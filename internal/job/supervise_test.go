package job

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/store"
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
	j := &Supervisor{Link: a, outFDs: []int{int(out.Fd())}, done: make(chan struct{})}
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

// TestJobControl: each connection to the control socket is one request:
// junk (a partial line held open, garbage, a line far over the bound)
// gets an error or nothing, and the next request still becomes a signal
// for the run (issue 26: junk in the FIFO swallowed the next stop).
func TestJobControl(t *testing.T) {
	d, _, err := store.Open(filepath.Join(t.TempDir(), "tool-outputs"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c, err := d.Create(time.Now(), store.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.ListenControl()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	j := &Supervisor{signals: make(chan os.Signal, 4), done: make(chan struct{}), KillAfter: time.Hour}
	go j.serveControl(l)
	sock := filepath.Join(c.AbsPath(), "control")
	held, err := net.Dial("unix", sock) // a partial line, never ended
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	held.Write([]byte("signal 1"))
	for _, junk := range []string{"\x00\xff garbage\n", "signal 15 kill-after -1\n", strings.Repeat("signal 15 ", 100000) + "\n", "sig"} {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		conn.Write([]byte(junk))
		if cw, ok := conn.(*net.UnixConn); ok {
			cw.CloseWrite()
		}
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		reply, _ := io.ReadAll(conn)
		conn.Close()
		if strings.HasPrefix(string(reply), "ok") {
			t.Errorf("junk %.20q accepted: %q", junk, reply)
		}
	}
	for _, want := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		reply, err := d.SendControl(c.ID(), stopRequest{sig: want, killAfter: -1}.String())
		if err != nil || reply != "ok" {
			t.Fatalf("stop after junk: %q, %v", reply, err)
		}
		select {
		case s := <-j.signals:
			if r, ok := s.(wrap.Request); !ok || r.Sig != want {
				t.Errorf("got %#v, want a wrap.Request of %v", s, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no %v", want)
		}
	}
}

// TestParseStop: a request line decodes, and encodes back the same.
func TestParseStop(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
		want stopRequest
	}{
		{"signal 15", true, stopRequest{syscall.SIGTERM, -1}},
		{"signal 2 kill-after 30000000000", true, stopRequest{syscall.SIGINT, 30 * time.Second}},
		{"signal 9 kill-after 0", true, stopRequest{syscall.SIGKILL, 0}},
		{"signal 0", false, stopRequest{}},
		{"signal 65", false, stopRequest{}},
		{"signal 15 kill-after -1", false, stopRequest{}},
		{"signal 15 after 5", false, stopRequest{}},
		{"signal 15 kill-after", false, stopRequest{}},
		{"bogus", false, stopRequest{}},
		{"", false, stopRequest{}},
	} {
		r, err := parseStop(tc.line)
		if (err == nil) != tc.ok || r != tc.want {
			t.Errorf("parseStop(%q) = %+v, %v", tc.line, r, err)
		}
		if tc.ok && r.String() != tc.line {
			t.Errorf("%+v encodes as %q", r, r.String())
		}
	}
}

// TestStopEscalation: which signals a stop hands to the run, and when the
// supervisor signals the group itself (issue 26: a stop's own
// --kill-after governs its SIGKILL, not the job's launch-time one, which
// the run's relay of an ending signal arms).
// TestStopEscalation: a stop hands the run one wrap.Request, the signal
// with the kill-after that governs its escalation: the stop's own when it
// gave one, else the job's launch-time value (issue 26: the launch-time
// value used to win); none for SIGKILL. The run's handling of a Request
// is wrap's TestRequestKillAfter; stop_kill_after.txtar runs it end to end.
func TestStopEscalation(t *testing.T) {
	const launch = time.Hour
	for _, tc := range []struct {
		name   string
		r      stopRequest
		launch time.Duration
		want   wrap.Request
	}{
		{"TERM, launch-time kill-after", stopRequest{syscall.SIGTERM, -1}, launch, wrap.Request{Sig: syscall.SIGTERM, KillAfter: launch}},
		{"TERM, shorter kill-after", stopRequest{syscall.SIGTERM, time.Millisecond}, launch, wrap.Request{Sig: syscall.SIGTERM, KillAfter: time.Millisecond}},
		{"TERM, longer kill-after", stopRequest{syscall.SIGTERM, 30 * time.Second}, time.Millisecond, wrap.Request{Sig: syscall.SIGTERM, KillAfter: 30 * time.Second}},
		{"USR1, launch-time kill-after", stopRequest{syscall.SIGUSR1, -1}, time.Millisecond, wrap.Request{Sig: syscall.SIGUSR1, KillAfter: time.Millisecond}},
		{"KILL", stopRequest{syscall.SIGKILL, -1}, launch, wrap.Request{Sig: syscall.SIGKILL, KillAfter: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &Supervisor{signals: make(chan os.Signal, 4), done: make(chan struct{}), KillAfter: tc.launch, pid: 1 << 22}
			if err := j.stop(tc.r); err != nil {
				t.Fatal(err)
			}
			select {
			case s := <-j.signals:
				if s != tc.want {
					t.Errorf("handed %#v to the run, want %#v", s, tc.want)
				}
			default:
				t.Fatalf("nothing handed to the run")
			}
			select {
			case s := <-j.signals:
				t.Errorf("also handed %v to the run", s)
			default:
			}
			if got := j.stopSignal(); got != tc.r.sig {
				t.Errorf("stopSignal = %v, want %v", got, tc.r.sig)
			}
		})
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
