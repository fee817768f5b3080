//go:build !linux

package wrap

import "syscall"

// setParentDeathSignal does nothing where the kernel has no parent-death
// signal for exec'd children: there, a capwrap killed while it starts the
// command (before the watchdog is armed, well under a millisecond) can
// leave the command running.
func setParentDeathSignal(*syscall.SysProcAttr) {}
