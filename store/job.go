package store

import "errors"

// Background jobs (SPEC §10) keep all their state in the capture
// directory: besides the streams and receipts, the preview their
// supervisor rendered when the job ended (preview.txt, what a foreground
// run would have printed before its receipt), and a Unix-domain socket
// (control, control.go) by which `capwrap stop` asks the supervisor to
// signal the job: the supervisor is the job's parent, so it never signals
// a reused pid.
const (
	previewName = "preview.txt"
	controlName = "control"
)

// ErrNoSupervisor reports that nobody listens on a capture's control
// socket: its supervisor has ended, or is ending, with its job (or was
// killed).
var ErrNoSupervisor = errors.New("the job's supervisor is not running")

// ErrNotJob reports a capture without a control socket: its capwrap runs,
// or ran, in the foreground (or its job has ended and removed it).
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
