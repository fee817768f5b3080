package wrap

import (
	"unsafe"
)

// procctl(2) PROC_REAP_GETPIDS and its records (<sys/procctl.h>).
const (
	procReapGetpids    = 5
	reaperPidinfoValid = 0x1
	reaperPidinfoChild = 0x2
	reaperPidinfoZomb  = 0x8 // FreeBSD 13 and later; 0 before
)

type reaperPidinfo struct {
	pid, subtree int32
	flags        uint32
	_            [15]uint32
}

type reaperPids struct {
	count uint32
	_     [15]uint32
	pids  *reaperPidinfo
}

// listTree returns capwrap's descendants from PROC_REAP_GETPIDS: every
// process of capwrap's reaper subtree (becomeSubreaper), with the direct
// child of capwrap it descends from (pi_subtree) and whether it is a
// zombie (where the kernel says so). Empty when capwrap is not a reaper.
// A process under a direct child for which skip is true is left out.
func listTree(skip func(pid int) bool) []proc {
	for n := 256; n <= 1<<16; n *= 4 {
		buf := make([]reaperPidinfo, n)
		rp := reaperPids{count: uint32(n), pids: &buf[0]}
		if procctl(procReapGetpids, uintptr(unsafe.Pointer(&rp))) != nil {
			return nil
		}
		var out []proc
		full := true
		for _, pi := range buf {
			if pi.flags&reaperPidinfoValid == 0 {
				full = false
				break
			}
			if !skip(int(pi.subtree)) {
				out = append(out, proc{pid: int(pi.pid), top: int(pi.subtree), zombie: pi.flags&reaperPidinfoZomb != 0})
			}
		}
		if !full {
			return out
		}
	}
	return nil
}

// procCommand returns "": capwrap does not decode FreeBSD's process
// records (kern.proc.args), so a descendant is named by its pid only.
func procCommand(pid int) string { return "" }

// hasEnv reports false: FreeBSD mounts no /proc by default.
func hasEnv(pid int, entry string) bool { return false }

// pipeHolders returns nil: capwrap does not decode FreeBSD's file records.
func pipeHolders(pids []int, id string) []int { return nil }

// markedProcs returns nil: without /proc the watchdog does not look for
// the command's descendants by their environment on FreeBSD; it ends the
// process group it was armed with (README, platforms).
func markedProcs(entry string, since uint64) []int { return nil }

// procStart returns 0 (see markedProcs).
func procStart(pid int) uint64 { return 0 }

// anyOrphan reports true: there is no cheaper look than listTree here.
func anyOrphan(skip func(pid int) bool) bool { return true }

// ownChildren is capwrap's children (but those skip names) from listTree.
func ownChildren(skip func(pid int) bool) []proc { return onlyChildren(listTree(skip)) }
