package guard

import (
	"errors"
	"testing"
	"time"
)

// TestGuard: a step that returns in time passes; one that hangs is given up
// after the stall timeout, its late function runs once it does return, and
// no step after it is started.
func TestGuard(t *testing.T) {
	g := New(50 * time.Millisecond)
	ran := false
	if err := g.Do("quick", func() { ran = true }, nil); err != nil || !ran {
		t.Fatalf("quick step: %v, ran %v", err, ran)
	}
	release, lateRan := make(chan struct{}), make(chan struct{})
	start := time.Now()
	err := g.Do("stuck", func() { <-release }, func() { close(lateRan) })
	var h ErrHung
	if !errors.As(err, &h) || h.What != "stuck" {
		t.Fatalf("stuck step: %v", err)
	}
	// A step that was not given up would wait for good; 10 s is generous
	// for a 50 ms timer on a busy machine.
	if d := time.Since(start); d < 50*time.Millisecond || d > 10*time.Second {
		t.Errorf("stuck step given up after %v, want the stall timeout", d)
	}
	if err := g.Do("next", func() { t.Error("a step ran after the store hung") }, nil); !errors.As(err, &h) || h.What != "stuck" {
		t.Errorf("step after a hang: %v", err)
	}
	if g.Failed() == nil {
		t.Errorf("failed() is nil after a hang")
	}
	close(release)
	select {
	case <-lateRan:
	case <-time.After(30 * time.Second):
		t.Fatal("late did not run when the stuck step returned")
	}
}
