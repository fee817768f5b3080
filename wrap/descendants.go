package wrap

import (
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one of capwrap's descendants as listTree sees it: its pid, the
// direct child of capwrap it descends from (top; pid itself for a direct
// child) and whether it is a zombie.
type proc struct {
	pid, top int
	zombie   bool
}

// walkTree lists the descendants of self from a parent-to-children map
// (kids) and the zombies among them, depth first, each with the direct
// child of self it descends from; a direct child for which skip is true
// is left out with its subtree. It is listTree's walk where the system
// gives every process's parent (Linux's /proc scan, macOS's sysctl).
func walkTree(kids map[int][]int, zombie map[int]bool, self int, skip func(pid int) bool) []proc {
	var out []proc
	var walk func(pid, top int)
	walk = func(pid, top int) {
		for _, k := range kids[pid] {
			t := top
			if pid == self {
				if skip(k) {
					continue
				}
				t = k
			}
			out = append(out, proc{pid: k, top: t, zombie: zombie[k]})
			walk(k, t)
		}
	}
	walk(self, 0)
	return out
}

// Descendant is a process the command left running when it ended (SPEC
// §3): its pid, its command line (cut to CommandMax bytes; "" where the
// system does not say, see procCommand) and, when it held one of the
// command's output pipes at the drain timeout, that stream's name
// ("stdout" or "stderr").
type Descendant struct {
	PID     int
	Command string
	Holds   string
}

// DescendantsListed is the most descendants Result.Descendants lists
// besides those that held a stream (pipeHolders); DescendantCount counts
// them all.
const DescendantsListed = 10

// CommandMax is the most bytes of a descendant's command line that
// Descendant.Command keeps.
const CommandMax = 80

// owned are the pids of capwrap's own children whose exit status someone
// waits for: the commands being run (waitChild) and the watchdogs
// (StartWatchdog; reaped once disarmed, Watchdog.reap). Orphans
// re-parented to capwrap (becomeSubreaper) are every other child, which
// reapOrphans reaps; spawnMu is held around a spawn and its registration,
// and around a reaping, so that a command that exits at once is never
// reaped as an orphan. runs counts the Runs under way: with one (capwrap's
// case), every orphan is its.
var (
	spawnMu sync.Mutex
	owned   = map[int]bool{}
	runs    int
)

// own registers pid as a child whose status is waited for elsewhere;
// spawnMu must be held.
func own(pid int) { owned[pid] = true }

// disown forgets pid (its status was collected).
func disown(pid int) {
	spawnMu.Lock()
	delete(owned, pid)
	spawnMu.Unlock()
}

// reapOrphans reaps the zombies among capwrap's children that are not its
// own (owned): orphans re-parented to it, which it must reap as init would.
// Each is waited for by its pid with WNOHANG, never wait4(-1), so the exit
// status of the command or of a watchdog is never taken from its waiter.
func reapOrphans(tree []proc) {
	spawnMu.Lock()
	defer spawnMu.Unlock()
	for _, p := range tree {
		if p.pid == p.top && p.zombie && !owned[p.pid] {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// tree is the run's part of capwrap's descendants (listTree): the
// command's subtree, and the orphans re-parented to capwrap that belong
// to this run (all of them when this is the only Run, else those still in
// the command's group or carrying its mark, Config.StdoutMark). Zombie
// orphans are reaped on the way and left out.
func (c *child) tree() []proc {
	all := listTree(othersOwn(c.pid))
	reapOrphans(all)
	spawnMu.Lock()
	alone := runs == 1
	mine := map[int]bool{}
	for _, p := range all {
		if p.pid != p.top || p.pid == c.pid {
			continue
		}
		if owned[p.pid] {
			continue
		}
		if alone || pgidOf(p.pid) == c.pid || c.mark != "" && hasEnv(p.pid, c.mark) {
			mine[p.pid] = true
		}
	}
	spawnMu.Unlock()
	var out []proc
	for _, p := range all {
		if p.top == c.pid || mine[p.top] {
			if p.pid == p.top && p.zombie && p.pid != c.pid {
				continue // reaped just now
			}
			out = append(out, p)
		}
	}
	return out
}

// othersOwn is listTree's skip for a run whose command is pid: the
// other children capwrap waits for itself (a watchdog, another run's
// command), whose subtrees are not the run's.
func othersOwn(pid int) func(int) bool {
	spawnMu.Lock()
	skip := make(map[int]bool, len(owned))
	for p := range owned {
		skip[p] = p != pid
	}
	spawnMu.Unlock()
	return func(p int) bool { return skip[p] }
}

// pgidOf is pid's process group, 0 if unknown.
func pgidOf(pid int) int {
	g, err := syscall.Getpgid(pid)
	if err != nil {
		return 0
	}
	return g
}

// live returns the pids of the processes of t that are not zombies.
func live(t []proc) []int {
	var out []int
	for _, p := range t {
		if !p.zombie {
			out = append(out, p.pid)
		}
	}
	return out
}

// treeAlive reports whether the command's group or one of the run's
// descendants has a live member. The tree is looked at first: where
// capwrap is the subreaper it holds every member of the group, and
// groupAlive may scan all of /proc.
func (c *child) treeAlive() bool {
	pids := live(c.tree())
	if c.endSig != 0 {
		// One not signalled yet: on its way to capwrap (re-parented
		// from a parent that just died) when the tree was walked.
		for _, pid := range pids {
			if !c.signalled[pid] {
				c.signalled[pid] = true
				_ = syscall.Kill(pid, c.endSig)
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
		}
	}
	if len(pids) > 0 {
		return true
	}
	return groupAlive(c.pid)
}

// signalTree sends sigs, in order, to the command's process group and to
// every live descendant of the run (tree), in whatever group or session it
// is: SPEC §3, on --timeout, a forwarded ending signal (capwrap stop),
// kill-after and the end of a run. The list is taken again, at most three
// times, until it holds no process not yet signalled (one forked
// meanwhile).
//
// The descendants are signalled before the group, while their parents
// still live: a child whose parent dies is, for a moment, in neither's
// children list. An ending signal (or SIGKILL) is remembered, so that
// treeAlive sends it to a descendant seen only later.
func (c *child) signalTree(sigs ...syscall.Signal) {
	if ending(sigs[0]) || sigs[0] == syscall.SIGKILL {
		c.endSig = sigs[0]
		c.signalled = map[int]bool{}
	}
	sent := map[int]bool{}
	for range 3 {
		fresh := false
		for _, pid := range live(c.tree()) {
			if !sent[pid] {
				sent[pid], fresh = true, true
				for _, sig := range sigs {
					_ = syscall.Kill(pid, sig)
				}
			}
		}
		if !fresh {
			break
		}
	}
	for _, sig := range sigs {
		_ = syscall.Kill(-c.pid, sig)
	}
	if c.signalled != nil && c.endSig == sigs[0] {
		for pid := range sent {
			c.signalled[pid] = true
		}
	}
}

// leftBehind is the end of a run whose command ended on its own: the
// descendants still alive once the streams are drained are listed in
// Result.Descendants and, unless Config.LeaveDescendants, ended: SIGTERM
// (and SIGCONT), then SIGKILL KillAfter later to whatever is left (SPEC
// §3: nothing capwrap started outlives it unseen). The first look is
// cheap (anyOrphan: one read of a children file, and the command's group);
// the tree is walked only when it finds something.
func (c *child) leftBehind() {
	if !anyOrphan(othersOwn(0)) && !groupAlive(c.pid) {
		return
	}
	t := c.tree()
	pids := live(t)
	if len(pids) == 0 {
		return
	}
	holds := map[int]string{}
	for i, s := range c.streams {
		if s.cut && !s.pty {
			for _, pid := range pipeHolders(pids, s.id) {
				if holds[pid] == "" {
					holds[pid] = [2]string{"stdout", "stderr"}[i]
				}
			}
		}
	}
	c.res.DescendantCount = len(pids)
	for _, pid := range pids {
		if len(c.res.Descendants) < DescendantsListed || holds[pid] != "" {
			c.res.Descendants = append(c.res.Descendants, Descendant{PID: pid, Command: cut(procCommand(pid), CommandMax), Holds: holds[pid]})
		}
	}
	if c.cfg.LeaveDescendants {
		c.res.DescendantsLeft = true
		return
	}
	c.endTree()
}

// endTree ends the run's descendants: SIGTERM and SIGCONT, SIGKILL
// KillAfter later to whatever is still alive, and a wait of up to a
// second for that to take.
func (c *child) endTree() {
	c.signalTree(syscall.SIGTERM, syscall.SIGCONT)
	deadline := time.Now().Add(c.cfg.KillAfter)
	for c.treeAlive() {
		if time.Now().After(deadline) {
			c.signalTree(syscall.SIGKILL)
			for end := time.Now().Add(time.Second); c.treeAlive() && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cut is s cut to at most n bytes, on a rune boundary, with "…" where it
// was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	return strings.TrimSpace(s[:i]) + "…"
}

// utf8Start reports whether b starts a UTF-8 sequence.
func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// onlyChildren keeps the direct children of capwrap from a listTree.
func onlyChildren(t []proc) []proc {
	var out []proc
	for _, p := range t {
		if p.pid == p.top {
			out = append(out, p)
		}
	}
	return out
}
