package store

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A job's control channel (SPEC §10, issue 26) is a Unix-domain socket
// named control in its capture directory. A socket, not a FIFO: open(2) of
// a socket fails at once (ENXIO), so `cat tool-outputs/ID/*`, `grep -r` or a
// backup never blocks on it, whoever runs them (permission bits do not stop
// root); and each `capwrap stop` has a connection of its own, so bytes
// another writer left half-written cannot swallow its request. The socket
// is bound and reached through a short path (sockpath_*.go): a sun_path
// holds only 104 (BSD) or 108 (Linux) bytes, and a tool-outputs directory
// can be deeper than that. store carries lines; what they say is package
// job's.

// ControlMax is the longest request or reply line on a control socket, in
// bytes, line end included: a longer one is refused, not buffered.
const ControlMax = 256

// controlWait bounds a control exchange: a connection that has not sent
// its whole line by then is dropped, and a sender stops waiting for the
// reply.
const controlWait = 5 * time.Second

// Control is a job's control socket, listening (Capture.ListenControl).
// Accept the requests, then Close it when the job has ended and Remove it
// once the final receipt is published.
type Control struct {
	ln  *net.UnixListener
	dir *os.File // the capture directory, a descriptor of its own (not the lock's)
}

// ListenControl makes the capture's control socket (0600 inside the 0700
// capture directory) and listens on it. The caller closes it.
func (c *Capture) ListenControl() (*Control, error) {
	if c.isReleased() {
		return nil, errors.New("capture already published or discarded")
	}
	// A descriptor of its own, not a dup of dirf: dirf's open file
	// description holds the capture's flock, which must drop when the
	// capture is released, not when the control socket is removed.
	dir, err := c.root.Open(".")
	if err != nil {
		return nil, err
	}
	var ln *net.UnixListener
	err = viaShortPath(dir, c.AbsPath(), controlName, func(path string) error {
		var lerr error
		ln, lerr = net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		return lerr
	})
	if err != nil {
		dir.Close()
		return nil, fmt.Errorf("make %s: %w", controlName, err)
	}
	// The short path may name the directory through /proc or a temporary
	// link: the socket is removed by Remove, through the directory's own
	// descriptor, never by that path.
	ln.SetUnlinkOnClose(false)
	_ = unix.Fchmodat(int(dir.Fd()), controlName, 0o600, 0)
	return &Control{ln: ln, dir: dir}, nil
}

// Accept waits for the next connection; after Close it returns an error.
func (l *Control) Accept() (net.Conn, error) { return l.ln.Accept() }

// Close stops listening: a later sender gets ErrNoSupervisor. The socket
// stays in the capture until Remove.
func (l *Control) Close() error { return l.ln.Close() }

// Remove deletes the socket from the capture directory (call it after
// Close, once the final receipt is published) and lets go of the
// directory. A socket already gone is no error.
func (l *Control) Remove() error {
	defer l.dir.Close()
	err := unix.Unlinkat(int(l.dir.Fd()), controlName, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// ReadControlLine reads one request line (without its line end) from a
// control connection, within the exchange's deadline. A line longer than
// ControlMax, or one cut by the sender's end or the deadline, is an error:
// the request is dropped whole.
func ReadControlLine(conn net.Conn) (string, error) {
	conn.SetReadDeadline(time.Now().Add(controlWait))
	r := bufio.NewReaderSize(conn, ControlMax)
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return "", fmt.Errorf("request longer than %d bytes", ControlMax)
		}
		return "", err
	}
	return string(line[:len(line)-1]), nil
}

// SendControl sends msg (one line, without line end) to the supervisor of
// capture id over its control socket and returns its one-line reply. The
// error wraps ErrNoSupervisor when nobody listens on the socket (the
// supervisor has ended, is ending or was killed), ErrNotJob when the
// capture has no control socket.
func (d *Dir) SendControl(id, msg string) (string, error) {
	if !ValidID(id) {
		return "", ErrBadID
	}
	if len(msg)+1 > ControlMax {
		return "", fmt.Errorf("control request longer than %d bytes", ControlMax)
	}
	fi, err := d.root.Lstat(id + "/" + controlName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s: %w", id, ErrNotJob)
	case err != nil:
		return "", err
	case fi.Mode()&fs.ModeNamedPipe != 0:
		// A job started by a capwrap of before issue 26, which reads a
		// FIFO: waiting for its end would wait for ever.
		return "", fmt.Errorf("%s/%s is a FIFO: the job was started by an older capwrap, which that capwrap's stop reaches", id, controlName)
	case fi.Mode()&fs.ModeSocket == 0:
		return "", fmt.Errorf("%s/%s is not a socket; refusing it", id, controlName)
	}
	dir, err := d.root.Open(id)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	var conn *net.UnixConn
	err = viaShortPath(dir, d.abs+"/"+id, controlName, func(path string) error {
		var derr error
		conn, derr = net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
		return derr
	})
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "", fmt.Errorf("%s: %w", id, ErrNoSupervisor)
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s: %w", id, ErrNotJob)
	case err != nil:
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(controlWait))
	if _, err := conn.Write([]byte(msg + "\n")); err != nil {
		return "", fmt.Errorf("%s: %w (%v)", id, ErrNoSupervisor, err)
	}
	reply, err := ReadControlLine(conn)
	if err != nil {
		// Accepted, then closed or silent: the supervisor is ending.
		return "", fmt.Errorf("%s: %w (no reply: %v)", id, ErrNoSupervisor, err)
	}
	return reply, nil
}
