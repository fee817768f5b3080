package wrap

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// WatchdogArg, first on capwrap's command line, runs capwrap as the
// watchdog helper: main hands such a command line to WatchdogMain. No user
// types it; StartWatchdog does.
const WatchdogArg = "__capwrap-watchdog"

// Watchdog is capwrap's end of its watchdog: a helper process that ends the
// child's process group if capwrap dies while the child runs, for any reason
// (SIGKILL, a crash, a kill of its caller's process group) — SPEC §3, "a
// command never outlives a capwrap that was killed".
//
// The helper is capwrap itself, as "capwrap __capwrap-watchdog
// KILLAFTER", reached through a light first stage in /bin/sh (see
// StartWatchdog), in a session of its own (so no signal aimed at capwrap's group
// reaches it), with stdout and stderr on /dev/null (it holds none of the
// caller's descriptors) and stdin the read end of a pipe whose only write
// end capwrap holds (close-on-exec, so the child does not inherit it). The
// kernel closes that end when capwrap dies, however it dies: the helper
// reads end of file, sends SIGTERM (and SIGCONT, for a stopped group) to
// the group it was armed with, SIGKILL KillAfter later if a member is still
// alive, and exits. When capwrap ends normally it disarms the helper first,
// which then exits at once. The helper holds nothing but the group's ID
// (and, once told, the directory of its note: see NoteTo), so it cannot
// itself be left behind: it ends at the latest noteGrace plus KillAfter
// after capwrap.
//
// A Watchdog's methods may be called from several goroutines.
type Watchdog struct {
	mu       sync.Mutex
	w        *os.File // nil once disarmed
	pid      int      // the helper's
	waitExit bool     // Disarm waits for the helper's exit (WaitOnDisarm)
}

// disarmWait bounds how long Disarm waits for the helper to exit
// (WaitOnDisarm): it reads "disarm" and exits, within milliseconds, or a
// few more when it is still starting as capwrap.
const disarmWait = 2 * time.Second

// WaitOnDisarm makes Disarm wait, up to disarmWait, until the helper has
// exited and been reaped. For a capwrap run by another capwrap (directly
// or below a script; SPEC §1 nested capwrap): the outer one is a
// subreaper, and a helper still reading its pipe when this capwrap exits
// would be re-parented to it and reported as a process the command left
// running.
func (wd *Watchdog) WaitOnDisarm() {
	if wd != nil {
		wd.waitExit = true
	}
}

// StartWatchdog starts the helper for a child whose group is to get SIGKILL
// killAfter after SIGTERM. It returns an error when the helper could not be
// started (the caller then runs without one, and says so).
//
// The helper starts as /bin/sh running shellStage, which costs about a
// tenth of a second Go runtime's start (`capwrap -- true` 67 ms instead
// of 83 on a busy 2-core machine, 63 without any watchdog: README "When
// capwrap is killed"): it holds the pipe from the
// first moment, so the guarantee is the same, and it execs capwrap as the
// helper proper (WatchdogMain) only when there is something to do: at end
// of file, or when told where to leave its note. Without /bin/sh, capwrap
// itself is started, as the helper proper, at once.
func StartWatchdog(killAfter time.Duration) (*Watchdog, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	pid, err := startHelper(shellCmd(exe, killAfter, r))
	if err != nil {
		pid, err = startHelper(&exec.Cmd{
			Path:        exe,
			Args:        []string{"capwrap", WatchdogArg, killAfter.String()},
			Stdin:       r,
			SysProcAttr: &syscall.SysProcAttr{Setsid: true},
		})
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	return &Watchdog{w: w, pid: pid}, nil
}

// reap waits for the helper to exit and collects its status, on a
// goroutine of its own; Disarm starts it. Not before: a wait4 blocked for
// the whole run holds a thread of its own, one more thread that every
// run's start paid for (issue 28). A helper that ends before (killed) is a
// zombie until then, still owned, so its PID is not reused meanwhile.
// The channel it returns is closed once the helper is reaped.
func (wd *Watchdog) reap() <-chan struct{} {
	pid := wd.pid
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		var ws syscall.WaitStatus
		for {
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
				break
			}
		}
		disown(pid)
	}()
	return reaped
}

// startHelper starts the helper's command (startCmd), owned (its status
// is the Watchdog's, reap's, not reapOrphans'), and returns its PID. It
// closes the command's ExtraFiles, which are capwrap's own copies.
func startHelper(cmd *exec.Cmd) (int, error) {
	spawnMu.Lock()
	pid, err := startCmd(cmd)
	if err == nil {
		own(pid)
	}
	spawnMu.Unlock()
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	return pid, err
}

// shellStage is the helper's first stage, run by /bin/sh as
// `sh -c shellStage SELF __capwrap-watchdog KILLAFTER EXE`. It ignores
// the signals WatchdogMain ignores, then reads the pipe a line at a time
// (the shell's read takes a byte at a time, so what it leaves is still in
// the pipe): at "disarm" it exits; at a "note" line, or at end of file
// (capwrap is gone), it execs capwrap as the helper proper, with the lines
// read so far as one more argument, which WatchdogMain reads before the
// pipe. It execs SELF, capwrap's own executable held open (Linux:
// /proc/self/fd/3, see selfExe), when it can, else the path EXE: a
// capwrap replaced or removed since it started still gets its helper.
// A note line hands over at once because the helper proper opens the
// note's directory in a goroutine, so that a hung file system cannot stop
// it from reading the pipe; the shell could not.
const shellStage = `trap '' HUP INT QUIT TERM PIPE TSTP TTIN TTOU
l=
while IFS= read -r x; do
	case $x in
	disarm) exit 0 ;;
	"note "*) l="$l$x
"; x=; break ;;
	esac
	l="$l$x
"
	x=
done
if [ -x "$0" ]; then exec "$0" "$1" "$2" "$l$x"; fi
exec "$3" "$1" "$2" "$l$x"
`

// shellCmd is the helper's first stage (shellStage) for the executable
// exe, reading r.
func shellCmd(exe string, killAfter time.Duration, r *os.File) *exec.Cmd {
	self, path, extra := selfExe(exe)
	cmd := &exec.Cmd{
		Path:        "/bin/sh",
		Args:        []string{"sh", "-c", shellStage, self, WatchdogArg, killAfter.String(), path},
		Stdin:       r,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if extra != nil {
		cmd.ExtraFiles = []*os.File{extra}
	}
	return cmd
}

// send writes one line to the helper; it does nothing once disarmed.
func (wd *Watchdog) send(line string) error {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.w == nil {
		return nil
	}
	_, err := io.WriteString(wd.w, line)
	return err
}

// arm names the process group to end should capwrap die.
func (wd *Watchdog) arm(pgid int) error {
	return wd.send(fmt.Sprintf("arm %d\n", pgid))
}

// markWith tells the helper the NAME=VALUE entry the command's
// environment carries (Config.StdoutMark), before the spawn: at end of
// file it also ends the processes of capwrap's user started after the
// helper that carry it (markedProcs, Linux), whatever group or session
// they moved to, and even when capwrap died before it armed the helper
// with the group.
func (wd *Watchdog) markWith(entry string) error {
	return wd.send("mark " + strconv.Quote(entry) + "\n")
}

// exited tells the helper that capwrap has reaped the group's leader, the
// command itself: should capwrap die from here on (while it drains the
// streams), a group found empty ended on its own, and the helper leaves no
// note (see NoteTo). With leave (Config.LeaveDescendants) the helper then
// leaves the command's descendants found by its mark alone.
func (wd *Watchdog) exited(leave bool) {
	if wd != nil {
		_ = wd.send("exited\n")
		if leave {
			_ = wd.send("leave\n")
		}
	}
}

// NoteTo asks the helper to leave a note should capwrap die while the
// command runs: at end of file, before its SIGTERM, it creates the file
// name in directory dir (0600, exclusively, through an [os.Root] of dir
// that it opens when told, so that a later rename of dir or a symbolic
// link put in its place cannot send the note elsewhere; name is resolved
// inside that root). The note says which signal the helper sends, to which
// group, and when: whoever finds it knows that capwrap was killed and the
// command with it (SPEC §3), not that the command may still run.
//
// The helper writes it when the group is alive (it is about to end it),
// and also when the group is gone but capwrap had not reaped the command
// yet: on Linux the kernel's parent-death signal (SIGTERM, see
// setParentDeathSignal) reaches the command at capwrap's death, often
// before the helper looks, and the command then ended with capwrap all
// the same. No note is written when the helper is disarmed, or when the
// group is gone and capwrap had reaped the command (it ended on its own;
// capwrap died while draining). The caller (the runner) chooses dir and
// name; wrap knows nothing of captures.
//
// The error is the pipe's (the helper is gone); NoteTo after Disarm, or on
// a nil Watchdog, does nothing and returns nil. Paths may hold any byte
// but NUL: the line carries them quoted (strconv.Quote).
func (wd *Watchdog) NoteTo(dir, name string) error {
	if wd == nil {
		return nil
	}
	return wd.send("note " + strconv.Quote(dir) + " " + strconv.Quote(name) + "\n")
}

// Disarm tells the helper that capwrap is ending normally, so that it exits
// without a signal, and reaps the helper once it has (reap); it is called
// once the child has ended. Calling it again does nothing.
func (wd *Watchdog) Disarm() {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.w == nil {
		return
	}
	io.WriteString(wd.w, "disarm\n")
	wd.w.Close()
	wd.w = nil
	reaped := wd.reap()
	if wd.waitExit {
		t := time.NewTimer(disarmWait)
		defer t.Stop()
		select {
		case <-reaped:
		case <-t.C:
		}
	}
}

// WatchdogMain is the helper's program (see Watchdog): args are what
// follows WatchdogArg, the kill-after duration and, when the helper's
// shell stage (shellStage) read lines before it, those lines, which it
// reads before in. It reads "arm PGID",
// "note DIR NAME" (both quoted, see NoteTo), "exited" (capwrap reaped the
// command) and "disarm" lines from in; at end of file while armed it
// writes the note (when told to and NoteTo's rule says so, waiting at
// most noteGrace for it), then ends the group if it is still alive. It
// returns the helper's exit status.
func WatchdogMain(in io.Reader, args []string) int {
	// Only the pipe tells the helper when to act.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM,
		syscall.SIGPIPE, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	if len(args) != 1 && len(args) != 2 {
		return 2
	}
	if len(args) == 2 {
		in = io.MultiReader(strings.NewReader(args[1]), in)
	}
	killAfter, err := time.ParseDuration(args[0])
	if err != nil {
		return 2
	}
	pgid, exited, leave, mark := 0, false, false, ""
	since := procStart(os.Getpid())
	var n *note
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		verb, arg, _ := strings.Cut(sc.Text(), " ")
		switch verb {
		case "arm":
			if n, err := strconv.Atoi(arg); err == nil && n > 1 {
				pgid = n
			}
		case "note":
			if dir, name, ok := parseNote(arg); ok {
				n = openNote(dir, name)
			}
		case "mark":
			if m, err := strconv.Unquote(arg); err == nil {
				mark = m
			}
		case "exited":
			exited = true
		case "leave":
			leave = true
		case "disarm":
			return 0
		}
	}
	// End of file (or a read error): capwrap is gone.
	if mark == "" || exited && leave {
		mark = ""
		if pgid <= 0 {
			return 0
		}
	}
	marked := func() []int {
		if mark == "" {
			return nil
		}
		return markedProcs(mark, since)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	switch {
	case pgid > 0 && groupAlive(pgid):
		n.write(fmt.Sprintf("capwrap ended while its command ran; its watchdog sent SIGTERM to process group %d at %s (and to the command's processes outside it), and SIGKILL %v later to any still alive\n",
			pgid, now, killAfter), noteGrace)
	case len(marked()) > 0 && !exited:
		n.write(fmt.Sprintf("capwrap ended while its command ran; its watchdog sent SIGTERM to the command's processes at %s, and SIGKILL %v later to any still alive\n",
			now, killAfter), noteGrace)
	case !exited && pgid > 0:
		n.write(fmt.Sprintf("capwrap ended while its command ran; its watchdog found process group %d ended at %s (a command ends with capwrap: on Linux the kernel sends it SIGTERM)\n",
			pgid, now), noteGrace)
	}
	watch := time.Duration(0)
	if !exited {
		// The command may be between its fork and its exec, its
		// environment not yet the marked one.
		watch = markWatch
	}
	endAll(pgid, marked, killAfter, watch)
	return 0
}

// markWatch is how long, at least, the helper keeps looking for marked
// processes when capwrap died before it reaped the command: one forked
// but not yet exec'd carries capwrap's environment, not the mark.
const markWatch = 300 * time.Millisecond

// noteGrace is the longest the helper waits for its note (see NoteTo)
// before it ends the group: a hung file system costs the note, never the
// end of the command (SPEC §3).
const noteGrace = time.Second

// note is where the helper is to leave its note: the directory, opened (or
// being opened) as an os.Root, and the file's name in it.
type note struct {
	name string
	root chan *os.Root // one value: the root, or nil if it could not be opened
}

// parseNote splits the argument of a "note" line: two quoted strings
// (strconv.Quote) separated by one space.
func parseNote(arg string) (dir, name string, ok bool) {
	qdir, err := strconv.QuotedPrefix(arg)
	if err != nil {
		return "", "", false
	}
	qname, found := strings.CutPrefix(arg[len(qdir):], " ")
	if !found {
		return "", "", false
	}
	if dir, err = strconv.Unquote(qdir); err != nil {
		return "", "", false
	}
	if name, err = strconv.Unquote(qname); err != nil || name == "" {
		return "", "", false
	}
	return dir, name, true
}

// openNote starts opening dir as the note's root at once, so that what dir
// names later does not matter; in a goroutine, so that a hung file system
// does not keep the helper from reading its pipe.
func openNote(dir, name string) *note {
	n := &note{name: name, root: make(chan *os.Root, 1)}
	go func() {
		r, err := os.OpenRoot(dir)
		if err != nil {
			r = nil
		}
		n.root <- r
	}()
	return n
}

// write creates the note holding text: exclusively (an existing file or
// symbolic link at its name is left alone), 0600 whatever the umask,
// fsynced. It gives up after grace. A nil note writes nothing.
func (n *note) write(text string, grace time.Duration) {
	if n == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := <-n.root
		if r == nil {
			return
		}
		f, err := r.OpenFile(n.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return
		}
		defer f.Close()
		if f.Chmod(0o600) == nil {
			if _, err := f.WriteString(text); err == nil {
				f.Sync()
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(grace):
	}
}

// endAll sends SIGTERM (and SIGCONT, so that a stopped process receives
// it) to the group pgid (none when 0) and to the processes marked lists,
// looking again every 20ms for marked ones that appeared since, until the
// group is empty and no marked process is alive, for at least watch; once
// killAfter has passed it sends SIGKILL to whatever is left.
func endAll(pgid int, marked func() []int, killAfter, watch time.Duration) {
	start := time.Now()
	deadline := start.Add(killAfter)
	termed := map[int]bool{}
	if pgid > 0 && groupAlive(pgid) {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		_ = syscall.Kill(-pgid, syscall.SIGCONT)
	}
	for {
		alive := pgid > 0 && groupAlive(pgid)
		procs := marked()
		for _, pid := range procs {
			if !termed[pid] {
				termed[pid] = true
				_ = syscall.Kill(pid, syscall.SIGTERM)
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
		}
		if !alive && len(procs) == 0 && time.Since(start) >= watch {
			return
		}
		if time.Now().After(deadline) {
			if alive {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
			for _, pid := range procs {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			if time.Since(start) >= watch {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
