package wrap

import "golang.org/x/sys/unix"

// szomb is SZOMB of <sys/proc.h>: a process that has exited and awaits
// its reaping.
const szomb = 5

// liveMember reports whether a process of group pgid is not a zombie:
// macOS has no /proc, the kern.proc.pgrp sysctl lists the group's
// processes with their p_stat. If the sysctl fails it trusts kill(2).
func liveMember(pgid int) bool {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return true
	}
	for _, p := range procs {
		if p.Proc.P_stat != szomb {
			return true
		}
	}
	return false
}

// sstop is SSTOP of <sys/proc.h>: a process stopped by a signal.
const sstop = 4

// stoppedMember reports whether a process of group pgid is stopped, from
// the kern.proc.pgrp sysctl; false if it fails.
func stoppedMember(pgid int) bool {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return false
	}
	for _, p := range procs {
		if p.Proc.P_stat == sstop {
			return true
		}
	}
	return false
}

// ignoresStop reports whether process pid ignores SIGTSTP: p_sigignore of
// the kern.proc.pid sysctl.
func ignoresStop(pid int) bool {
	p, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	return err == nil && p.Proc.P_sigignore&(1<<(uint(unix.SIGTSTP)-1)) != 0
}
