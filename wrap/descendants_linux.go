package wrap

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// listTree returns capwrap's descendants, parents before their children,
// each with the direct child of capwrap it descends from (top) and whether
// it is a zombie. It reads /proc/PID/task/*/children (one small read per
// thread, CONFIG_PROC_CHILDREN), walking down from capwrap; where the kernel
// has no such file it scans /proc/*/stat once for the parent of every
// process. A direct child for which skip is true is left out with its
// subtree. The list is a snapshot: a process may end or fork meanwhile.
func listTree(skip func(pid int) bool) []proc {
	self := os.Getpid()
	if !childrenFiles() {
		return scanTree(self, skip)
	}
	var out []proc
	type item struct{ pid, top int }
	queue := []item{{self, 0}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for _, k := range childrenOf(it.pid) {
			top := it.top
			if it.pid == self {
				if skip(k) {
					continue
				}
				top = k
			}
			state, _, ok := procStat(k)
			if !ok {
				continue
			}
			out = append(out, proc{pid: k, top: top, zombie: state == 'Z' || state == 'X'})
			queue = append(queue, item{k, top})
		}
	}
	return out
}

var (
	childrenOnce sync.Once
	hasChildren  bool
)

// childrenFiles reports whether the kernel has /proc/PID/task/TID/children.
func childrenFiles() bool {
	childrenOnce.Do(func() {
		_, err := os.Stat("/proc/self/task/" + strconv.Itoa(syscall.Gettid()) + "/children")
		hasChildren = err == nil
	})
	return hasChildren
}

// childrenOf lists the children of pid from its threads' children files.
func childrenOf(pid int) []int {
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	var kids []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids
}

// scanTree is listTree from one scan of /proc/*/stat.
func scanTree(self int, skip func(pid int) bool) []proc {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	kids := map[int][]int{}
	zombie := map[int]bool{}
	for _, p := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		state, ppid, ok := procStat(pid)
		if !ok {
			continue
		}
		kids[ppid] = append(kids[ppid], pid)
		zombie[pid] = state == 'Z' || state == 'X'
	}
	return walkTree(kids, zombie, self, skip)
}

// statFields returns the fields of /proc/PID/stat after the command name
// (state first), which may itself hold spaces and parentheses.
func statFields(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data[i+1:]))
}

// procStat returns pid's state letter and parent; ok is false when it is
// gone.
func procStat(pid int) (state byte, ppid int, ok bool) {
	f := statFields(pid)
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0][0], ppid, true
}

// procStart returns pid's start time, in clock ticks after boot (field 22
// of /proc/PID/stat), 0 if unknown.
func procStart(pid int) uint64 {
	f := statFields(pid)
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

// procCommand is pid's command line, its arguments joined by spaces
// (/proc/PID/cmdline), or its name in brackets when that is empty (a
// zombie, a kernel thread); "" when it is gone.
func procCommand(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err == nil && len(b) > 0 {
		return strings.TrimSpace(strings.ReplaceAll(string(bytes.TrimRight(b, "\x00")), "\x00", " "))
	}
	c, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return "[" + strings.TrimSpace(string(c)) + "]"
}

// hasEnv reports whether pid's environment holds the entry NAME=VALUE
// exactly (/proc/PID/environ: readable for a process of capwrap's user).
func hasEnv(pid int, entry string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if string(kv) == entry {
			return true
		}
	}
	return false
}

// pipeHolders returns the processes among pids that hold open the pipe
// whose identity (FileID) is id, from their /proc/PID/fd links
// ("pipe:[INODE]").
func pipeHolders(pids []int, id string) []int {
	_, ino, ok := strings.Cut(id, ":")
	if !ok {
		return nil
	}
	link := "pipe:[" + ino + "]"
	var out []int
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			if l, err := os.Readlink(dir + "/" + fd.Name()); err == nil && l == link {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// markedProcs returns the live processes of capwrap's user started at or
// after since (procStart's clock) whose environment holds entry: the
// watchdog's way to the command's descendants once capwrap, their
// subreaper, is gone (SPEC §3), whatever group or session they moved to.
func markedProcs(entry string, since uint64) []int {
	ents, _ := os.ReadDir("/proc")
	uid := os.Getuid()
	self := os.Getpid()
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if info, err := e.Info(); err != nil || int(info.Sys().(*syscall.Stat_t).Uid) != uid {
			continue
		}
		f := statFields(pid)
		if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if start, _ := strconv.ParseUint(f[19], 10, 64); start < since {
			continue
		}
		if hasEnv(pid, entry) {
			out = append(out, pid)
		}
	}
	return out
}

// anyOrphan is the cheap look, at the end of a run, for descendants left
// behind: once the command has been reaped, every surviving descendant's
// top-most ancestor is an orphan re-parented to capwrap (becomeSubreaper),
// which Linux attaches to capwrap's main thread (the first live thread,
// find_alive_thread; Go never ends its main thread). So one read of that
// thread's children file says whether anything but skipped children (a
// watchdog) is there. Without the file it reports true: look properly.
func anyOrphan(skip func(pid int) bool) bool {
	pid := os.Getpid()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	if err != nil {
		return true
	}
	for _, f := range strings.Fields(string(b)) {
		if k, err := strconv.Atoi(f); err != nil || !skip(k) {
			return true
		}
	}
	return false
}

// ownChildren is the orphans among capwrap's children (but those skip
// names) with their states, for reapOrphans once a second (orphanReap): Linux attaches
// an orphan to capwrap's main thread (see anyOrphan), so one read of that
// thread's children file finds them, with no walk of the command's tree.
func ownChildren(skip func(pid int) bool) []proc {
	if !childrenFiles() {
		return onlyChildren(listTree(skip))
	}
	pid := os.Getpid()
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	var out []proc
	for _, f := range strings.Fields(string(b)) {
		k, err := strconv.Atoi(f)
		if err != nil || skip(k) {
			continue
		}
		if state, _, ok := procStat(k); ok {
			out = append(out, proc{pid: k, top: k, zombie: state == 'Z' || state == 'X'})
		}
	}
	return out
}
