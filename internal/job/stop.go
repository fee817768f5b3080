package job

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/capwrap/capwrap/wrap"
)

// A stop request, one line on the capture's control socket (store.Control),
// from `capwrap stop` to the job's supervisor:
//
//	signal N                  signal N to the job's group; escalate as the job's
//	                          launch-time --kill-after says
//	signal N kill-after NS    the same, SIGKILL NS nanoseconds later if it still runs
//
// The supervisor replies "ok" once the signal is sent, or "error TEXT".

// stopRequest is a decoded stop request.
type stopRequest struct {
	sig syscall.Signal
	// killAfter is the stop's own --kill-after; negative when it gave
	// none (the job's launch-time value then governs, SPEC §10).
	killAfter time.Duration
}

// String encodes r as its request line.
func (r stopRequest) String() string {
	if r.killAfter < 0 {
		return fmt.Sprintf("signal %d", int(r.sig))
	}
	return fmt.Sprintf("signal %d kill-after %d", int(r.sig), int64(r.killAfter))
}

// parseStop decodes a request line; anything else is an error.
func parseStop(line string) (stopRequest, error) {
	f := strings.Fields(line)
	bad := errors.New("bad request: want \"signal N [kill-after NS]\"")
	if (len(f) != 2 && len(f) != 4) || f[0] != "signal" {
		return stopRequest{}, bad
	}
	s, err := strconv.Atoi(f[1])
	if err != nil || s <= 0 || s >= 65 {
		return stopRequest{}, bad
	}
	r := stopRequest{sig: syscall.Signal(s), killAfter: -1}
	if len(f) == 4 {
		ns, err := strconv.ParseInt(f[3], 10, 64)
		if f[2] != "kill-after" || err != nil || ns < 0 {
			return stopRequest{}, bad
		}
		r.killAfter = time.Duration(ns)
	}
	return r, nil
}

// stop carries out request r (SPEC §10): r.sig to the job's command (its
// group and the descendants that left it), then SIGKILL to them after the
// stop's own --kill-after when it gave one, else after the job's
// launch-time --kill-after (issue 26: the launch-time value used to win).
// The run relays both (wrap.Request), so the receipt names `capwrap stop`
// and the escalation happens in the job even if the stop is killed. A job
// that has ended is not signalled.
func (j *Supervisor) stop(r stopRequest) error {
	j.mu.Lock()
	if j.exited {
		j.mu.Unlock()
		return nil // ended: stop waits for its receipt
	}
	j.stopped = r.sig
	j.mu.Unlock()
	k := r.killAfter
	if k < 0 {
		k = j.KillAfter
	}
	if r.sig == syscall.SIGKILL {
		k = -1
	}
	j.forward(wrap.Request{Sig: r.sig, KillAfter: k})
	return nil
}

// forward hands sig to the run, which relays it to the command's group
// and notes it in the receipt; it waits until the run takes it, or the
// command has ended.
func (j *Supervisor) forward(sig os.Signal) {
	select {
	case j.signals <- sig:
	case <-j.done:
	}
}
