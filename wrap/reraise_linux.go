package wrap

import (
	"syscall"
	"unsafe"
)

// kernelSigaction is struct sigaction as the Linux rt_sigaction system call
// takes it on amd64 and arm64.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// raiseDefault sets sig's action to the default and sends it to the
// calling thread. The Go runtime keeps its own handlers for signals such as
// SIGSEGV, and os/signal cannot restore their default, so the default is
// set with rt_sigaction directly: capwrap is about to end, and nothing of
// the runtime's signal handling is needed any more. It reports whether the
// signal was raised.
func raiseDefault(sig syscall.Signal) bool {
	act := kernelSigaction{handler: 0} // SIG_DFL
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	var set uint64 = 1 << (uint(sig) - 1)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	_ = syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), sig)
	return true
}
