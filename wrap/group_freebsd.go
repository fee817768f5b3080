package wrap

// liveMember trusts kill(2), which already said group pgid has a member:
// FreeBSD mounts no /proc by default, and golang.org/x/sys/unix does not
// decode its kern.proc.pgrp records. A zombie not reaped yet counts as
// alive here; the only cost is that capwrap may wait up to --kill-after
// for a group whose last member is such a zombie, then send a harmless
// SIGKILL.
func liveMember(pgid int) bool { return true }

// stoppedMember reports false: without decoded kern.proc.pgrp records
// (see liveMember) capwrap cannot see a stopped member of a group on
// FreeBSD, so a shell under capwrap that ignores SIGTSTP keeps waiting
// for a command Ctrl-Z stopped (see checkStoppedMember).
func stoppedMember(pgid int) bool { return false }

// ignoresStop reports false on FreeBSD (see stoppedMember).
func ignoresStop(pid int) bool { return false }
