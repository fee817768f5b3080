package runner

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/capwrap/capwrap/preview"
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
//
// While attached, the run is presented on the launcher's stdout and stderr
// as a foreground run would be, and end of file on the link (the launcher
// died) stops the job as SPEC §3 says of a killed capwrap: SIGTERM, then
// SIGKILL --kill-after later. Released, the supervisor lets go of the
// launcher's descriptors (they become /dev/null), runs the job to its end,
// keeps the capture whatever --keep says, and writes the preview into it
// for `capwrap wait`. `capwrap stop` reaches it through the capture's
// control FIFO.

// Job makes a run a background job's supervisor.
type Job struct {
	// Link is the supervisor's end of the socket to the launcher.
	Link *os.File
	// Detach lets go of the launcher as soon as the child runs
	// (--background); else the launcher waits (--background-after).
	Detach bool

	outFDs []int // the launcher's descriptors to let go of: 1 and 2 when nil

	mu       sync.Mutex
	released bool // the launcher's descriptors were let go
	frozen   bool // the run is ending: no more release
	signals  chan os.Signal
	stopped  syscall.Signal // the last signal `capwrap stop` asked for; 0: none
}

// Attached reports whether the run ends presented on the launcher's
// output: it was not released before it began to end.
func (j *Job) Attached() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return !j.released
}

// send writes one line to the launcher; a launcher gone is no error.
func (j *Job) send(format string, args ...any) {
	fmt.Fprintf(j.Link, format+"\n", args...)
}

// start begins serving the link and, once the capture exists, its control
// FIFO; the signals they bring are for wrap.Config.Signals.
func (j *Job) start() <-chan os.Signal {
	j.signals = make(chan os.Signal, 4)
	go j.serveLink()
	return j.signals
}

// started tells the launcher the child runs, with its live receipt, and
// lets go of it at once with Detach.
func (j *Job) started(rc *receipt.Receipt) {
	b, _ := json.Marshal(rc)
	if j.Detach {
		j.release()
	}
	j.send("started %s", b)
}

// serveLink reads the launcher's requests until end of file.
func (j *Job) serveLink() {
	sc := bufio.NewScanner(j.Link)
	for sc.Scan() {
		if sc.Text() == "release" {
			if j.release() {
				j.send("released")
			} else {
				j.send("ending")
			}
		}
	}
	// End of file: the launcher is gone. If it was still waiting, that
	// is a killed capwrap (SPEC §3): the job is stopped, and the caller's
	// stdout and stderr are let go of at once (whoever reads them to their
	// end must not wait for the job's --kill-after).
	j.mu.Lock()
	attached := !j.released
	stop := attached && !j.frozen
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
func (j *Job) letGo() {
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
func (j *Job) release() bool {
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
func (j *Job) freeze() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.frozen = true
	return !j.released
}

// serveControl reads "signal N" lines from the capture's control FIFO
// (`capwrap stop`) until it is closed.
func (j *Job) serveControl(f *os.File) {
	buf := make([]byte, 256)
	var line []byte
	for {
		n, err := f.Read(buf)
		line = append(line, buf[:n]...)
		for {
			i := strings.IndexByte(string(line), '\n')
			if i < 0 {
				break
			}
			if verb, arg, _ := strings.Cut(string(line[:i]), " "); verb == "signal" {
				if s, err := strconv.Atoi(arg); err == nil && s > 0 && s < 65 {
					j.mu.Lock()
					j.stopped = syscall.Signal(s)
					j.mu.Unlock()
					j.inject(syscall.Signal(s))
				}
			}
			line = line[i+1:]
		}
		if err != nil {
			return
		}
	}
}

// stopSignal is the last signal `capwrap stop` asked for (0: none).
func (j *Job) stopSignal() syscall.Signal {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stopped
}

// inject hands a signal to the run, without waiting.
func (j *Job) inject(s os.Signal) {
	select {
	case j.signals <- s:
	default:
	}
}

// jobPresenter presents a job's run: on the launcher's output as a
// foreground run would be while attached; detached, the preview is
// rendered for preview.txt, which `capwrap wait` prints.
type jobPresenter struct {
	job      *Job
	inner    presenter        // the run's own presentation, on the launcher's output
	text     *footerPresenter // the preview for preview.txt
	attached bool             // set when the run began to end
}

func (p *jobPresenter) live(i int) io.Writer { return p.inner.live(i) }

func (p *jobPresenter) render(o *Outcome, c *store.Capture, keepers [2]*preview.Keeper) {
	p.text.render(o, c, keepers) // preview.txt, for capwrap wait
	if p.attached {
		p.inner.render(o, c, keepers) // what the launcher's caller sees now
	}
}

func (p *jobPresenter) present(o *Outcome) error {
	if p.attached {
		return p.inner.present(o)
	}
	return nil
}
