package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capwrap/capwrap/redact"
)

// TestSinkWaitsForPolicy: a sink made before the policy is ready redacts
// from its first byte (the write waits inside the policy's ready function,
// and nothing reaches dst meanwhile), passes bytes through with redaction
// off, and writes nothing when the policy failed (fail closed).
func TestSinkWaitsForPolicy(t *testing.T) {
	p, err := redact.NewPolicy(redact.Options{Values: []string{"hunter2hunter2"}})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	ready := sync.OnceValues(func() (*redact.Policy, error) {
		close(entered) // the writer is waiting for the policy now
		<-release
		return p, nil
	})
	var out bytes.Buffer
	s := &sink{dst: &out, ready: ready}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Write([]byte("pw hunter2hunter2 end\n"))
		s.Close()
	}()
	<-entered
	select {
	case <-done:
		t.Fatal("Write returned before the policy was ready")
	default:
	}
	if out.Len() != 0 {
		t.Fatalf("%q reached dst before the policy was ready", out.String())
	}
	close(release)
	<-done
	if got := out.String(); strings.Contains(got, "hunter2") || !strings.Contains(got, "[REDACTED") {
		t.Fatalf("output %q: secret not redacted", got)
	}

	out.Reset()
	off := &sink{dst: &out, ready: func() (*redact.Policy, error) { return nil, nil }}
	off.Write([]byte("pw hunter2hunter2\n"))
	off.Close()
	if out.String() != "pw hunter2hunter2\n" {
		t.Fatalf("--no-redact output %q", out.String())
	}

	out.Reset()
	bad := &sink{dst: &out, ready: func() (*redact.Policy, error) { return nil, errors.New("boom") }}
	if n, err := bad.Write([]byte("pw hunter2hunter2\n")); n != 18 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	bad.Close()
	if out.Len() != 0 {
		t.Fatalf("failed policy let %q through", out.String())
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSinkShowsTentative: in tee mode the live copy is shown, when the
// idle timer fires (here: called at once), what the redactor holds back
// only as a public keyword's beginning (the "l" of an echoed "echo hell"
// may begin a keyword); the file copy waits for the decision. Neither
// shows a value that waits for its decision, nor a literal secret's
// beginning; a tentative beginning that turns into a secret is followed on
// the live copy by the marker.
func TestSinkShowsTentative(t *testing.T) {
	p, err := redact.NewPolicy(redact.Options{Values: []string{"Qz9-hunter2-value"}})
	if err != nil {
		t.Fatal(err)
	}
	ready := func() (*redact.Policy, error) { return p, nil }
	type step struct {
		write    string
		wantLive string // after the idle show
		wantFile string
	}
	for _, tc := range []struct {
		name  string
		steps []step
		end   string // the live copy after Close
	}{
		{"an echo's last byte", []step{
			{"echo hel", "echo hel", "echo he"},
			{"l", "echo hell", "echo hel"},
			{"o", "echo hello", "echo hell"},
			{"\r\n", "echo hello\r\n", "echo hello\r\n"},
		}, "echo hello\r\n"},
		{"an escape sequence's final byte", []step{
			{"\x1b[?2004l", "\x1b[?2004l", "\x1b[?2004"},
			{"\r", "\x1b[?2004l\r", "\x1b[?2004l\r"},
		}, "\x1b[?2004l\r"},
		{"a token's public prefix that turns into a secret", []step{
			{"key g", "key g", "key "},
			{"hp_", "key g", "key "}, // a complete token keyword: its span starts at it
			{"0123456789abcdefghijABCDEFGHIJ012345\n", "key g[REDACTED:github-pat]\n", "key [REDACTED:github-pat]\n"},
		}, "key g[REDACTED:github-pat]\n"},
		{"a value after a keyword waits", []step{
			{"password=S3cr", "password=", "password="},
			{"3t-Passw0rd\n", "password=[REDACTED:password]\n", "password=[REDACTED:password]\n"},
		}, "password=[REDACTED:password]\n"},
		{"a literal secret's beginning waits", []step{
			{"x Qz9-hun", "x ", "x "},
			{"ter2-value\n", "x [REDACTED:value]\n", "x [REDACTED:value]\n"},
		}, "x [REDACTED:value]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var live, file bytes.Buffer
			l := &liveWriter{w: &live}
			s := &sink{dst: io.MultiWriter(l, &file), ready: ready, live: l}
			for _, st := range tc.steps {
				s.Write([]byte(st.write))
				s.showTentative()
				if live.String() != st.wantLive || file.String() != st.wantFile {
					t.Errorf("after %q: live copy %q, file copy %q; want %q, %q", st.write, live.String(), file.String(), st.wantLive, st.wantFile)
				}
			}
			s.Close()
			s.showTentative() // after Close: nothing
			if live.String() != tc.end || file.String() != strings.ReplaceAll(tc.end, "key g[", "key [") {
				t.Errorf("after Close: live copy %q, file copy %q; want %q", live.String(), file.String(), tc.end)
			}
		})
	}
}

// TestSinkIdleTimerShowsTentative: the idle show happens by itself, once
// the stream has been idle for tentativeDelay.
func TestSinkIdleTimerShowsTentative(t *testing.T) {
	p, err := redact.NewPolicy(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var live syncBuffer
	l := &liveWriter{w: &live}
	s := &sink{dst: l, ready: func() (*redact.Policy, error) { return p, nil }, live: l}
	defer s.Close()
	s.Write([]byte("echo hell"))
	deadline := time.Now().Add(30 * time.Second) // generous for a busy machine
	for live.String() != "echo hell" {
		if time.Now().After(deadline) {
			t.Fatalf("the live copy is %q 30 s later, want %q", live.String(), "echo hell")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLiveWriterWholeEscapes: an escape sequence that a write ends inside
// waits for its end and goes in one write, so that the other stream's
// output, written to the same terminal meanwhile, never lands inside it
// (the terminal would take its first byte for the sequence's final one).
func TestLiveWriterWholeEscapes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   []string // the writes that reach the terminal
	}{
		{"a CSI cut before its final byte", []string{"\r\x1b[?2004", "hINNER$ "}, []string{"\r", "\x1b[?2004hINNER$ "}},
		{"ESC alone", []string{"ab\x1b", "[1mc"}, []string{"ab", "\x1b[1mc"}},
		{"a whole CSI", []string{"\x1b[31mred\x1b[0m"}, []string{"\x1b[31mred\x1b[0m"}},
		{"an OSC until BEL", []string{"\x1b]0;tit", "le\x07x"}, []string{"\x1b]0;title\x07x"}},
		{"a charset designation", []string{"\x1b(", "Bx"}, []string{"\x1b(Bx"}},
		{"not a sequence after ESC [", []string{"\x1b[\x01z"}, []string{"\x1b[\x01z"}},
		{"a sequence longer than maxEscape goes as it comes", []string{"\x1b]8;;" + strings.Repeat("u", maxEscape)}, []string{"\x1b]8;;" + strings.Repeat("u", maxEscape)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			l := &liveWriter{w: writerFunc(func(p []byte) (int, error) { got = append(got, string(p)); return len(p), nil })}
			for _, w := range tc.writes {
				l.Write([]byte(w))
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
				t.Errorf("writes %q, want %q", got, tc.want)
			}
		})
	}
	// One that the stream ends inside goes at the end.
	var out bytes.Buffer
	l := &liveWriter{w: &out}
	l.Write([]byte("x\x1b[3"))
	if out.String() != "x" {
		t.Fatalf("before the end: %q", out.String())
	}
	l.flush()
	if out.String() != "x\x1b[3" {
		t.Fatalf("after flush: %q", out.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
