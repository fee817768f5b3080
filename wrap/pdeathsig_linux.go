package wrap

import "syscall"

// setParentDeathSignal asks the kernel for SIGTERM to the child should
// capwrap die before the watchdog knows the child's group: the child is
// forked and exec'd before its group ID can be sent to the watchdog, and a
// SIGKILL of capwrap in that window would leave it running (SPEC §3). Set
// in the child before the exec, and kept across it (PR_SET_PDEATHSIG);
// after the window it only doubles the watchdog's SIGTERM.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
