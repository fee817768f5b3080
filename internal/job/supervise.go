package job

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
)

// SuperviseArg, first on capwrap's command line, runs capwrap as a
// background job's supervisor (SPEC §10): "capwrap __capwrap-supervise
// attach|detach ARGS...", where ARGS are the launcher's own arguments. Only
// Launch starts it.
const SuperviseArg = "__capwrap-supervise"

// The supervisor's side of a job (SPEC §10). The launcher starts it in a
// session of its own, stdin /dev/null, its stdout and stderr the
// launcher's, and a socket (the link) on descriptor 3. Lines on the link:
//
//	supervisor → launcher   "started RECEIPT-JSON"  the child runs; its live receipt
//	                        "released"              the launcher's descriptors are let go
//	                        "ending"                too late to let go: the run is ending
//	                        "exit STATUS SIGNAL"    the run ended while attached and was
//	                                                presented on the launcher's output
//	launcher → supervisor   "release"               hand the job back (--background-after)
//	                        "ack"                   the job's ID is on the caller's output
//	                                                (--background)
//
// While attached, the run is presented on the launcher's stdout and stderr
// as a foreground run would be, and end of file on the link (the launcher
// died) stops the job as SPEC §3 says of a killed capwrap: SIGTERM, then
// SIGKILL --kill-after later; so does end of file before "ack" with
// --background (issue 26: a launcher killed before it printed the job's
// ID would leave the job running with nobody to know it; killed after it
// printed the ID and before "ack", the job is stopped too, and the ID the
// caller got shows it cancelled). Released, the supervisor lets go of the
// launcher's descriptors (they become /dev/null), runs the job to its end,
// keeps the capture whatever --keep says, and writes the preview into it
// for `capwrap wait`. `capwrap stop` reaches it through the capture's
// control socket (stop.go).

// Supervisor is a background job's supervisor (SPEC §10): the
// runner.Hooks of its run, serving the link to the launcher and the
// capture's control socket. Make one with NewSupervisor.
type Supervisor struct {
	// Link is the supervisor's end of the socket to the launcher.
	Link *os.File
	// Detach lets go of the launcher as soon as the child runs
	// (--background); else the launcher waits (--background-after).
	Detach bool

	outFDs []int // the launcher's descriptors to let go of: 1 and 2 when nil

	// KillAfter is the job's launch-time --kill-after: a stop that gives
	// none escalates after it (SPEC §10).
	KillAfter time.Duration

	d       runner.Diag
	control *store.Control // the capture's control socket, once open

	mu       sync.Mutex
	released bool // the launcher's descriptors were let go
	acked    bool // the launcher printed the job's ID (--background)
	frozen   bool // the run is ending: no more release
	signals  chan os.Signal
	stopped  syscall.Signal // the last signal `capwrap stop` asked for; 0: none
	pid      int            // the command's, its process group's ID (Started)
	exited   bool           // Exited was called: the command's group is not to be signalled
	done     chan struct{}  // closed by Exited
}

// Attached reports whether the run ends presented on the launcher's
// output: it was not released before it began to end.
func (j *Supervisor) Attached() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return !j.released
}

// send writes one line to the launcher; a launcher gone is no error.
func (j *Supervisor) send(format string, args ...any) {
	fmt.Fprintf(j.Link, format+"\n", args...)
}

// NewSupervisor returns the supervisor of a job whose launcher is at the
// other end of link (descriptor 3 of a supervisor); with detach the
// launcher is let go as soon as the command runs (--background), else it
// waits (--background-after). Diagnostics go to d.
func NewSupervisor(link *os.File, detach bool, d runner.Diag) *Supervisor {
	return &Supervisor{Link: link, Detach: detach, d: d, done: make(chan struct{})}
}

// Signals begins serving the link and returns the channel of the signals
// that the link and, once the capture exists, its control socket bring
// (runner.Hooks).
func (j *Supervisor) Signals() <-chan os.Signal {
	j.signals = make(chan os.Signal, 4)
	go j.serveLink()
	return j.signals
}

// Started opens the capture's control socket for `capwrap stop`, tells
// the launcher the command runs, with its live receipt rc, and, with
// Detach, lets go of the launcher's descriptors at once (runner.Hooks). A
// job without a capture could be neither waited for nor stopped: it is
// stopped at once.
func (j *Supervisor) Started(pid int, rc *receipt.Receipt, c *store.Capture) {
	if c == nil {
		j.d.Errorf("a background job needs its capture; stopping the command")
		j.inject(syscall.SIGTERM)
		return
	}
	j.mu.Lock()
	j.pid = pid
	j.mu.Unlock()
	if l, err := c.ListenControl(); err == nil {
		j.mu.Lock()
		j.control = l
		j.mu.Unlock()
		go j.serveControl(l)
	} else {
		j.d.Warnf("capture %s: %v: capwrap stop cannot reach this job", c.ID(), err)
	}
	b, _ := json.Marshal(rc)
	if j.Detach {
		j.release()
	}
	j.send("started %s", b)
}

// Exited closes the control socket (a later `capwrap stop` finds nobody
// to signal, and waits for the end), ends the escalations stop asked for,
// and names `capwrap stop` as the sender of forwarded when it was the last
// signal stop asked for (runner.Hooks).
func (j *Supervisor) Exited(forwarded syscall.Signal) string {
	j.mu.Lock()
	if !j.exited {
		j.exited = true
		close(j.done)
	}
	control := j.control
	j.mu.Unlock()
	if control != nil {
		control.Close()
	}
	if forwarded != 0 && forwarded == j.stopSignal() {
		return "capwrap stop"
	}
	return ""
}

// Ending marks the run as ending, so that it can no longer be released,
// and reports whether it ends attached (runner.Hooks).
func (j *Supervisor) Ending() bool { return j.freeze() }

// Ended removes the control socket from the capture, whose final receipt
// is published now, and tells a launcher still attached how the run
// ended, which it presented on the launcher's output (runner.Hooks).
func (j *Supervisor) Ended(status int, reraise syscall.Signal) {
	j.mu.Lock()
	control := j.control
	j.mu.Unlock()
	if control != nil {
		control.Remove()
	}
	if j.Attached() {
		j.send("exit %d %d", status, int(reraise))
	}
}

// serveLink reads the launcher's requests until end of file.
func (j *Supervisor) serveLink() {
	sc := bufio.NewScanner(j.Link)
	for sc.Scan() {
		switch sc.Text() {
		case "release":
			if j.release() {
				j.send("released")
			} else {
				j.send("ending")
			}
		case "ack":
			j.mu.Lock()
			j.acked = true
			j.mu.Unlock()
		}
	}
	// End of file: the launcher is gone. If it was still waiting, that
	// is a killed capwrap (SPEC §3): the job is stopped, and the caller's
	// stdout and stderr are let go of at once (whoever reads them to their
	// end must not wait for the job's --kill-after). A --background
	// launcher gone before it acknowledged the job's ID is stopped too:
	// its caller may never have seen the ID.
	j.mu.Lock()
	attached := !j.released
	stop := (attached || j.Detach && !j.acked) && !j.frozen
	if attached {
		j.letGo()
	}
	j.mu.Unlock()
	if stop {
		j.inject(syscall.SIGTERM)
	}
}

// letGo makes descriptors 1 and 2, the launcher's stdout and stderr,
// /dev/null, so that every writer of them carries on harmlessly. Caller
// holds j.mu.
func (j *Supervisor) letGo() {
	fds := j.outFDs
	if fds == nil {
		fds = []int{1, 2}
	}
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		for _, fd := range fds {
			unix.Dup2(int(null.Fd()), fd)
		}
		null.Close()
	}
	j.released = true
}

// release lets go of the launcher's stdout and stderr (descriptors 1 and
// 2 become /dev/null, so every writer of them carries on harmlessly); false
// when the run is already ending, presented on them.
func (j *Supervisor) release() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.frozen && !j.released {
		return false
	}
	if !j.released {
		j.letGo()
	}
	return true
}

// freeze marks the run as ending and reports whether it ends attached.
func (j *Supervisor) freeze() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.frozen = true
	return !j.released
}

// serveControl answers the requests on the capture's control socket
// (`capwrap stop`) until it is closed, each connection on its own: one
// that sends junk, or never ends its line, has no effect on the next.
func (j *Supervisor) serveControl(l *store.Control) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			line, err := store.ReadControlLine(conn)
			if err != nil {
				fmt.Fprintf(conn, "error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
				return
			}
			r, err := parseStop(line)
			if err == nil {
				err = j.stop(r)
			}
			if err != nil {
				fmt.Fprintf(conn, "error %v\n", err)
				return
			}
			fmt.Fprintln(conn, "ok")
		}()
	}
}

// stopSignal is the last signal `capwrap stop` asked for (0: none).
func (j *Supervisor) stopSignal() syscall.Signal {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stopped
}

// inject hands a signal to the run, without waiting.
func (j *Supervisor) inject(s os.Signal) {
	select {
	case j.signals <- s:
	default:
	}
}
