package wrap

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// liveMember reports whether a process of group pgid is neither a zombie
// nor dead, from /proc/PID/stat (state and pgrp fields); without /proc it
// trusts kill(2), which already said the group has a member.
func liveMember(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	if stats == nil {
		return true
	}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}
