package job

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// endingSignal reports whether the runner's relay of sig arms its own
// SIGKILL after the launch-time --kill-after (wrap: SIGINT, SIGTERM,
// SIGHUP and SIGQUIT ask the command to end).
func endingSignal(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT:
		return true
	}
	return false
}

// stop carries out request r (SPEC §10): r.sig to the job's process group,
// then SIGKILL after the stop's own --kill-after when it gave one, else
// after the job's launch-time --kill-after (issue 26: the launch-time
// value used to win). A signal the run relays (forward) is noted in the
// receipt as sent by `capwrap stop`; but the run's relay of an ending
// signal arms the launch-time kill-after, so a stop that asks for longer
// signals the group itself (the supervisor is the command's parent: the
// group is its child's) and escalates on its own clock. A job that has
// ended is not signalled.
func (j *Supervisor) stop(r stopRequest) error {
	j.mu.Lock()
	if j.exited {
		j.mu.Unlock()
		return nil // ended: stop waits for its receipt
	}
	j.stopped = r.sig
	pid := j.pid
	j.mu.Unlock()
	launch := j.KillAfter
	k := r.killAfter
	if k < 0 {
		k = launch
	}
	switch {
	case r.sig == syscall.SIGKILL:
		j.forward(syscall.SIGKILL)
		return nil
	case endingSignal(r.sig) && k > launch:
		if err := j.signalGroup(pid, r.sig); err != nil {
			return err
		}
	default:
		j.forward(r.sig)
	}
	if endingSignal(r.sig) && k == launch {
		return nil // the run's relay escalates, at this very time
	}
	go j.escalate(k)
	return nil
}

// escalate sends SIGKILL through the run after d, unless the command has
// ended by then.
func (j *Supervisor) escalate(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-j.done:
		return
	case <-t.C:
	}
	j.mu.Lock()
	j.stopped = syscall.SIGKILL
	j.mu.Unlock()
	j.forward(syscall.SIGKILL)
}

// signalGroup sends sig, then SIGCONT (a stopped group acts on it only
// once continued, as under timeout(1)), to the process group of the
// command pid, unless the command has ended.
func (j *Supervisor) signalGroup(pid int, sig syscall.Signal) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.exited || pid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal the job's group: %v", err)
	}
	_ = syscall.Kill(-pid, syscall.SIGCONT)
	return nil
}

// forward hands sig to the run, which relays it to the command's group
// and notes it in the receipt; it waits until the run takes it, or the
// command has ended.
func (j *Supervisor) forward(sig syscall.Signal) {
	select {
	case j.signals <- sig:
	case <-j.done:
	}
}
