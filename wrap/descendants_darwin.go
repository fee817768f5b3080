package wrap

import (
	"os"

	"golang.org/x/sys/unix"
)

// listTree returns capwrap's descendants that are still attached to it
// through their parents, from the kern.proc.all sysctl (macOS has no
// subreaper: an orphan is re-parented to launchd and is not found here),
// each with the direct child of capwrap it descends from and whether it is
// a zombie. A direct child for which skip is true is left out with its
// subtree.
func listTree(skip func(pid int) bool) []proc {
	all, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	kids := map[int][]int{}
	zombie := map[int]bool{}
	for _, p := range all {
		pid := int(p.Proc.P_pid)
		kids[int(p.Eproc.Ppid)] = append(kids[int(p.Eproc.Ppid)], pid)
		zombie[pid] = p.Proc.P_stat == szomb
	}
	self := os.Getpid()
	return walkTree(kids, zombie, self, skip)
}

// procCommand is pid's name (p_comm, at most 16 bytes), "" when it is gone.
func procCommand(pid int) string {
	p, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return ""
	}
	return unix.ByteSliceToString(p.Proc.P_comm[:])
}

// hasEnv reports false: macOS has no /proc (see markedProcs).
func hasEnv(pid int, entry string) bool { return false }

// pipeHolders returns nil: capwrap does not list macOS's open files.
func pipeHolders(pids []int, id string) []int { return nil }

// markedProcs returns nil: on macOS the watchdog ends the process group it
// was armed with only (README, platforms).
func markedProcs(entry string, since uint64) []int { return nil }

// procStart returns 0 (see markedProcs).
func procStart(pid int) uint64 { return 0 }

// anyOrphan reports true: there is no cheaper look than listTree here.
func anyOrphan(skip func(pid int) bool) bool { return true }

// ownChildren is capwrap's children (but those skip names) from listTree.
func ownChildren(skip func(pid int) bool) []proc { return onlyChildren(listTree(skip)) }
