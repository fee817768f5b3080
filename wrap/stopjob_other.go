//go:build !linux

package wrap

import (
	"os"
	"syscall"
	"time"
)

// stopJob stops capwrap with SIGSTOP and returns once continued (a signal
// on cont), or after stopGrace. macOS and FreeBSD give no way here to set
// SIGTSTP's default action back without the raw, per-system sigaction
// layout (see raiseDefault), and capwrap catches SIGTSTP to relay it: so
// capwrap stops itself alone, with SIGSTOP, where Linux stops its whole
// process group with SIGTSTP. The shell reports the job stopped either
// way ("Stopped (signal)"); a pipeline neighbour that did not get the
// terminal's Ctrl-Z itself (the command held the terminal) runs on.
func stopJob(cont <-chan os.Signal) {
	_ = syscall.Kill(syscall.Getpid(), syscall.SIGSTOP)
	select {
	case <-cont:
	case <-time.After(stopGrace):
	}
}
