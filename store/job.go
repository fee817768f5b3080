package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Background jobs (SPEC §10) keep all their state in the capture
// directory: besides the streams and receipts, the preview their
// supervisor rendered when the job ended (preview.txt, what a foreground
// run would have printed before its receipt), and a FIFO (control) by
// which `capwrap stop` asks the supervisor to signal the job: the
// supervisor is the job's parent, so it never signals a reused pid.
const (
	previewName = "preview.txt"
	controlName = "control"
)

// ErrNoSupervisor reports that nobody reads a capture's control FIFO: its
// supervisor has ended, or is ending, with its job.
var ErrNoSupervisor = errors.New("the job's supervisor is not running")

// ErrNotJob reports a capture without a control FIFO: its capwrap runs, or
// ran, in the foreground.
var ErrNotJob = errors.New("not a background job")

// WritePreview publishes text as the capture's preview.txt (0600, written
// to a temporary name, fsynced, renamed), before Publish.
func (c *Capture) WritePreview(text []byte) error {
	c.receiptMu.Lock()
	defer c.receiptMu.Unlock()
	if c.isReleased() {
		return errors.New("capture already published or discarded")
	}
	return writeAtomic(c.root, c.dirf, previewName, text, false)
}

// ReadPreview returns capture id's preview.txt (at most 1 MiB); the error
// wraps fs.ErrNotExist when the capture has none (not a job, or not ended).
func (d *Dir) ReadPreview(id string) ([]byte, error) {
	return d.readSmall(id, previewName, 1<<20)
}

// OpenControl makes the capture's control FIFO (0600) and opens it for
// reading, non-blocking and also for writing (so that it never reads end
// of file when a writer goes away). The supervisor reads "signal N" lines
// from it; the caller closes it.
func (c *Capture) OpenControl() (*os.File, error) {
	rc, err := c.dirf.SyscallConn()
	if err != nil {
		return nil, err
	}
	var merr error
	if err := rc.Control(func(fd uintptr) {
		merr = unix.Mkfifoat(int(fd), controlName, 0o600)
	}); err != nil {
		return nil, err
	}
	if merr != nil {
		return nil, fmt.Errorf("make %s: %w", controlName, merr)
	}
	f, err := c.root.OpenFile(controlName, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		f.Close()
		return nil, fmt.Errorf("%s is not a FIFO", controlName)
	}
	return f, nil
}

// SendControl writes msg (one line) to capture id's control FIFO, without
// waiting: the error wraps ErrNoSupervisor when no supervisor reads it,
// ErrNotJob when the capture has no control FIFO.
func (d *Dir) SendControl(id, msg string) error {
	if !ValidID(id) {
		return ErrBadID
	}
	f, err := d.root.OpenFile(id+"/"+controlName, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	switch {
	case errors.Is(err, syscall.ENXIO):
		return fmt.Errorf("%s: %w", id, ErrNoSupervisor)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", id, ErrNotJob)
	case err != nil:
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		return fmt.Errorf("%s/%s is not a FIFO", id, controlName)
	}
	_, err = f.WriteString(msg + "\n")
	return err
}
