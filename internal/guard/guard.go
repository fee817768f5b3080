// Package guard bounds steps on a file system that may hang (SPEC §3: the
// store never holds the command hostage): each step runs on a goroutine of
// its own and is waited for at most a stall timeout; once one has hung,
// the file system is taken as hung and no later step is started. It knows
// nothing of what the steps do.
package guard

import (
	"fmt"
	"sync"
	"time"
)

// ErrHung reports a step that made no progress for the stall timeout: the
// file system it works on hangs. What names the step.
type ErrHung struct {
	What  string
	After time.Duration
}

func (e ErrHung) Error() string {
	return fmt.Sprintf("%s made no progress for %v (a hung file system?)", e.What, e.After)
}

// Guard bounds the store's steps on the command's path and after it has
// ended, so that a hung tool-outputs file system can neither keep the
// command from starting and writing nor keep capwrap from returning its
// status (SPEC §3). A nil Guard bounds nothing.
type Guard struct {
	stall time.Duration

	mu   sync.Mutex
	hung error // the first step that hung
}

// New returns a Guard whose steps wait at most stall each (a default of
// 10 s, --stall-timeout's, when stall is not positive).
func New(stall time.Duration) *Guard {
	if stall <= 0 {
		stall = defaultStall
	}
	return &Guard{stall: stall}
}

// defaultStall is --stall-timeout's default (SPEC §4).
const defaultStall = 10 * time.Second

// Stall is the bound of each step.
func (g *Guard) Stall() time.Duration { return g.stall }

// Do runs fn and waits for it at most the stall timeout. It returns nil
// when fn returned in time, else an ErrHung naming what; fn then runs on to
// its end in the background, and late, when set, runs after it there (to
// undo what fn did too late). Once a step has hung, do runs nothing and
// returns that step's error. A nil guard runs fn without a bound.
func (g *Guard) Do(what string, fn, late func()) error {
	if g == nil {
		fn()
		return nil
	}
	return g.Within(g.stall, what, fn, late)
}

// Within is Do with a bound of its own instead of the stall timeout.
func (g *Guard) Within(d time.Duration, what string, fn, late func()) error {
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
	err := ErrHung{what, d}
	g.mu.Lock()
	if g.hung == nil {
		g.hung = err
	}
	g.mu.Unlock()
	return err
}

// Failed is the error of the step that hung, or nil.
func (g *Guard) Failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hung
}
