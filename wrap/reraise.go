package wrap

import (
	"syscall"
	"time"
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

// Reraise ends capwrap with sig, the signal that killed the child, so that
// whoever waits for capwrap sees the same status as for the child (SPEC §3,
// as timeout(1) does). Core dumps of capwrap itself are suppressed first
// (RLIMIT_CORE 0). The Go runtime keeps its own handlers for signals such as
// SIGSEGV, and os/signal cannot restore their default, so the default action
// is set with rt_sigaction directly: capwrap is about to end, and nothing of
// the runtime's signal handling is needed any more. If the process is still
// alive shortly after, Reraise returns and the caller exits with 128+sig.
func Reraise(sig syscall.Signal) {
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	act := kernelSigaction{handler: 0} // SIG_DFL
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	var set uint64 = 1 << (uint(sig) - 1)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	_ = syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), sig)
	time.Sleep(200 * time.Millisecond)
}
