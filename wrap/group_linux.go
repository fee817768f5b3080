package wrap

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// liveMember reports whether a process of group pgid is neither a zombie
// nor dead, from /proc/PID/stat (state and pgrp fields); without /proc it
// trusts kill(2), which already said the group has a member.
func liveMember(pgid int) bool {
	states, ok := memberStates(pgid)
	if !ok {
		return true
	}
	return strings.ContainsFunc(states, func(r rune) bool { return r != 'Z' && r != 'X' })
}

// stoppedMember reports whether a process of group pgid is stopped by a
// signal (state T; not t, traced).
func stoppedMember(pgid int) bool {
	states, _ := memberStates(pgid)
	return strings.ContainsRune(states, 'T')
}

// ignoresStop reports whether process pid ignores SIGTSTP, from the
// SigIgn mask of /proc/PID/status (an interactive shell does).
func ignoresStop(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(syscall.SIGTSTP)-1)) != 0
		}
	}
	return false
}

// memberStates returns the state letters (/proc/PID/stat) of the processes
// of group pgid, one per process; ok is false without /proc.
func memberStates(pgid int) (states string, ok bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	if stats == nil {
		return "", false
	}
	var b strings.Builder
	want := strconv.Itoa(pgid)
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) >= 3 && f[2] == want {
			b.WriteString(f[0])
		}
	}
	return b.String(), true
}
