package store

import (
	"errors"
	"testing"

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

// TestControlFIFO: a job's control FIFO carries a line to its reader;
// without a reader, SendControl says nobody supervises the capture.
func TestControlFIFO(t *testing.T) {
	d, c := newTestCapture(t)
	if err := d.SendControl(c.ID(), "signal 15"); !errors.Is(err, ErrNotJob) {
		t.Errorf("no FIFO: %v", err)
	}
	f, err := c.OpenControl()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SendControl(c.ID(), "signal 15"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := f.Read(buf)
	if err != nil || string(buf[:n]) != "signal 15\n" {
		t.Errorf("read %q, %v", buf[:n], err)
	}
	f.Close()
	if err := d.SendControl(c.ID(), "signal 15"); !errors.Is(err, ErrNoSupervisor) {
		t.Errorf("FIFO without a reader: %v", err)
	}
	if err := c.WritePreview([]byte("preview\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := d.ReadPreview(c.ID()); err != nil || string(b) != "preview\n" {
		t.Errorf("preview %q, %v", b, err)
	}
	publish(t, c)
}
