package runner

import (
	"fmt"
	"sync"
	"time"

	"github.com/capwrap/capwrap/store"
)

// openGrace is the longest the command's start waits for the tool-outputs
// directory to be opened and checked (or --stall-timeout, if shorter). A
// directory that has not answered by then is on a hung file system: the
// command starts without a capture rather than wait for it (SPEC §3: the
// store never holds the command hostage).
const openGrace = time.Second

// errHung reports a step of the store that made no progress for the stall
// timeout: the tool-outputs file system hangs.
type errHung struct {
	what  string
	after time.Duration
}

func (e errHung) Error() string {
	return fmt.Sprintf("%s made no progress for %v (a hung file system?)", e.what, e.after)
}

// guard bounds the store's steps on the command's path and after it has
// ended, so that a hung tool-outputs file system can neither keep the
// command from starting and writing nor keep capwrap from returning its
// status (SPEC §3). Each step runs on a goroutine of its own and is waited
// for at most the stall timeout; once one has hung, the store is taken as
// hung and no later step is started.
type guard struct {
	stall time.Duration

	mu   sync.Mutex
	hung error // the first step that hung
}

func newGuard(stall time.Duration) *guard {
	if stall <= 0 {
		stall = store.DefaultStallTimeout
	}
	return &guard{stall: stall}
}

// do runs fn and waits for it at most the stall timeout. It returns nil
// when fn returned in time, else an errHung naming what; fn then runs on to
// its end in the background, and late, when set, runs after it there (to
// undo what fn did too late). Once a step has hung, do runs nothing and
// returns that step's error. A nil guard runs fn without a bound.
func (g *guard) do(what string, fn, late func()) error {
	if g == nil {
		fn()
		return nil
	}
	return g.within(g.stall, what, fn, late)
}

// within is do with a bound of its own instead of the stall timeout.
func (g *guard) within(d time.Duration, what string, fn, late func()) error {
	g.mu.Lock()
	if g.hung != nil {
		g.mu.Unlock()
		return g.hung
	}
	g.mu.Unlock()
	done := make(chan struct{})
	var mu sync.Mutex
	abandoned := false
	go func() {
		fn()
		mu.Lock()
		defer mu.Unlock()
		close(done)
		if abandoned && late != nil {
			late()
		}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case <-done: // finished as the timer fired
		return nil
	default:
	}
	abandoned = true
	err := errHung{what, d}
	g.mu.Lock()
	if g.hung == nil {
		g.hung = err
	}
	g.mu.Unlock()
	return err
}

// failed is the error of the step that hung, or nil.
func (g *guard) failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hung
}
