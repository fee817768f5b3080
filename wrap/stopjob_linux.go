package wrap

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// stopJob stops capwrap's own process group with SIGTSTP, as a shell's
// Ctrl-Z would (itself and, in a pipeline, its neighbours), and returns
// once continued (a signal on cont) or after stopGrace when the stop was
// discarded. capwrap catches SIGTSTP to relay it to its command, and the
// Go runtime cannot give it back its default action (after signal.Stop
// its handler drops it), so the default is set with rt_sigaction around
// the stop and the runtime's own action put back afterwards: the shell
// then reports the job "Stopped", as for any Ctrl-Z.
func stopJob(cont <-chan os.Signal) {
	var old kernelSigaction
	dfl := kernelSigaction{handler: 0} // SIG_DFL
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGTSTP),
		uintptr(unsafe.Pointer(&dfl)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
	if errno != 0 {
		_ = syscall.Kill(syscall.Getpid(), syscall.SIGSTOP)
	} else {
		defer syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGTSTP),
			uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
		_ = syscall.Kill(0, syscall.SIGTSTP)
	}
	select {
	case <-cont:
	case <-time.After(stopGrace):
	}
}
