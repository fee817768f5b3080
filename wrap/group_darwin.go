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
