package wrap

import (
	"syscall"
	"time"
)

// Reraise ends capwrap with sig, the signal that killed the child, so that
// whoever waits for capwrap sees the same status as for the child (SPEC §3,
// as timeout(1) does). Core dumps of capwrap itself are suppressed first
// (RLIMIT_CORE 0), then raiseDefault sets the signal's default action and
// raises it. If the process is still alive shortly after, Reraise returns
// and the caller exits with 128+sig.
func Reraise(sig syscall.Signal) {
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	if raiseDefault(sig) {
		time.Sleep(200 * time.Millisecond)
	}
}
