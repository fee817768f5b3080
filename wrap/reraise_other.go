//go:build !linux

package wrap

import (
	"os/signal"
	"syscall"
)

// raiseDefault sends sig to capwrap once os/signal no longer catches it:
// for a signal the Go runtime itself ends the program of (SIGTERM, SIGINT,
// SIGHUP, SIGUSR1...), it then dies of that signal, and SIGKILL needs no
// help. For the signals the runtime takes for a crash of its own
// (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS) or for a
// goroutine dump (SIGQUIT) it would print a traceback instead, and macOS
// and FreeBSD give no way here to set their default action without the
// raw, per-system sigaction layout: for those it returns false, and capwrap
// exits 128+sig. It reports whether the signal was raised.
func raiseDefault(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGABRT,
		syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGQUIT:
		return false
	}
	signal.Reset(sig)
	_ = syscall.Kill(syscall.Getpid(), sig)
	return true
}
