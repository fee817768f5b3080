package store

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capwrap/capwrap/receipt"
)

func publish(t *testing.T, c *Capture) {
	t.Helper()
	if _, err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	id := c.ID()
	if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema, ID: &id}); err != nil {
		t.Fatal(err)
	}
}

// serveOnce answers the next request on l with "ok " and the request.
func serveOnce(t *testing.T, l *Control) <-chan error {
	done := make(chan error, 1)
	go func() {
		conn, err := l.Accept()
		if err != nil {
			done <- err
			return
		}
		defer conn.Close()
		line, err := ReadControlLine(conn)
		if err == nil {
			_, err = io.WriteString(conn, "ok "+line+"\n")
		}
		done <- err
	}()
	return done
}

// TestControlSocket: a job's control socket carries a line to its
// supervisor and its reply back; without a listener, SendControl says
// nobody supervises the capture, and without a socket that the capture is
// no job. Opening the socket as a file fails at once (issue 26: a FIFO
// there held `cat tool-outputs/ID/*` for ever).
func TestControlSocket(t *testing.T) {
	d, c := newTestCapture(t)
	if _, err := d.SendControl(c.ID(), "signal 15"); !errors.Is(err, ErrNotJob) {
		t.Errorf("no socket: %v", err)
	}
	l, err := c.ListenControl()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(c.AbsPath(), controlName))
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("control: %v, %v", fi.Mode(), err)
	}
	if f, err := os.Open(filepath.Join(c.AbsPath(), controlName)); err == nil {
		f.Close()
		t.Errorf("opening the control socket as a file worked; a reader could block on it")
	}
	done := serveOnce(t, l)
	if reply, err := d.SendControl(c.ID(), "signal 15"); err != nil || reply != "ok signal 15" {
		t.Errorf("reply %q, %v", reply, err)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
	l.Close()
	if _, err := d.SendControl(c.ID(), "signal 15"); !errors.Is(err, ErrNoSupervisor) {
		t.Errorf("socket without a listener: %v", err)
	}
	if err := l.Remove(); err != nil {
		t.Error(err)
	}
	if _, err := d.SendControl(c.ID(), "signal 15"); !errors.Is(err, ErrNotJob) {
		t.Errorf("socket removed: %v", err)
	}
	// A FIFO left by a capwrap of before issue 26 is not waited on.
	if err := syscall.Mkfifo(filepath.Join(c.AbsPath(), controlName), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SendControl(c.ID(), "signal 15"); err == nil || errors.Is(err, ErrNoSupervisor) || errors.Is(err, ErrNotJob) {
		t.Errorf("FIFO: %v", err)
	}
	os.Remove(filepath.Join(c.AbsPath(), controlName))
	if err := c.WritePreview([]byte("preview\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := d.ReadPreview(c.ID()); err != nil || string(b) != "preview\n" {
		t.Errorf("preview %q, %v", b, err)
	}
	publish(t, c)
}

// TestControlDeepDirectory: a tool-outputs directory whose path is longer
// than a socket address (sun_path, 104 or 108 bytes) still gets a control
// socket that SendControl reaches.
func TestControlDeepDirectory(t *testing.T) {
	top := t.TempDir()
	for len(top) < 300 {
		top = filepath.Join(top, strings.Repeat("d", 50))
	}
	d, _, err := Open(filepath.Join(top, "tool-outputs"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c, err := d.Create(time.Now(), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.ListenControl()
	if err != nil {
		t.Fatal(err)
	}
	done := serveOnce(t, l)
	if reply, err := d.SendControl(c.ID(), "hello"); err != nil || reply != "ok hello" {
		t.Errorf("reply %q, %v", reply, err)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
	l.Close()
	l.Remove()
	publish(t, c)
}

// TestControlLineBounds: a request line longer than ControlMax, or cut
// without its line end, is refused whole.
func TestControlLineBounds(t *testing.T) {
	for _, tc := range []struct {
		name, send string
		want       string // "" for an error
	}{
		{"line", "signal 15\n", "signal 15"},
		{"partial", "signal 1", ""},
		{"huge", strings.Repeat("x", 10*ControlMax) + "\n", ""},
		{"at the bound", strings.Repeat("y", ControlMax-1) + "\n", strings.Repeat("y", ControlMax-1)},
		{"over the bound", strings.Repeat("y", ControlMax) + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := net.Pipe()
			go func() {
				io.WriteString(a, tc.send)
				a.Close()
			}()
			got, err := ReadControlLine(b)
			if tc.want == "" && err == nil || tc.want != "" && (err != nil || got != tc.want) {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
			b.Close()
		})
	}
}
