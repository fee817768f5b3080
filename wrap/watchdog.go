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
// The helper is capwrap itself, started as "capwrap __capwrap-watchdog
// KILLAFTER" in a session of its own (so no signal aimed at capwrap's group
// reaches it), with stdout and stderr on /dev/null (it holds none of the
// caller's descriptors) and stdin the read end of a pipe whose only write
// end capwrap holds (close-on-exec, so the child does not inherit it). The
// kernel closes that end when capwrap dies, however it dies: the helper
// reads end of file, sends SIGTERM (and SIGCONT, for a stopped group) to
// the group it was armed with, SIGKILL KillAfter later if a member is still
// alive, and exits. When capwrap ends normally it disarms the helper first,
// which then exits at once. The helper holds nothing but the group's ID, so
// it cannot itself be left behind: it ends at the latest KillAfter after
// capwrap.
type Watchdog struct {
	w *os.File
}

// StartWatchdog starts the helper for a child whose group is to get SIGKILL
// killAfter after SIGTERM. It returns an error when the helper could not be
// started (the caller then runs without one, and says so).
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
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        []string{"capwrap", WatchdogArg, killAfter.String()},
		Stdin:       r,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	go cmd.Wait() // reaped when it ends, whenever that is
	return &Watchdog{w: w}, nil
}

// arm names the process group to end should capwrap die.
func (wd *Watchdog) arm(pgid int) error {
	_, err := fmt.Fprintf(wd.w, "arm %d\n", pgid)
	return err
}

// Disarm tells the helper that capwrap is ending normally, so that it exits
// without a signal; it is called once the child has ended. Calling it
// again does nothing.
func (wd *Watchdog) Disarm() {
	if wd == nil || wd.w == nil {
		return
	}
	io.WriteString(wd.w, "disarm\n")
	wd.w.Close()
	wd.w = nil
}

// WatchdogMain is the helper's program (see Watchdog): args are what
// follows WatchdogArg, the kill-after duration. It reads "arm PGID" and
// "disarm" lines from in; at end of file while armed it ends that group. It
// returns the helper's exit status.
func WatchdogMain(in io.Reader, args []string) int {
	// Only the pipe tells the helper when to act.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM,
		syscall.SIGPIPE, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	if len(args) != 1 {
		return 2
	}
	killAfter, err := time.ParseDuration(args[0])
	if err != nil {
		return 2
	}
	pgid := 0
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		verb, arg, _ := strings.Cut(sc.Text(), " ")
		switch verb {
		case "arm":
			if n, err := strconv.Atoi(arg); err == nil && n > 1 {
				pgid = n
			}
		case "disarm":
			return 0
		}
	}
	// End of file (or a read error): capwrap is gone.
	if pgid > 0 {
		endGroup(pgid, killAfter)
	}
	return 0
}

// endGroup sends SIGTERM to the group (and SIGCONT, so that a stopped group
// receives it), waits for the group to empty until killAfter has passed,
// then sends SIGKILL to whatever is left.
func endGroup(pgid int, killAfter time.Duration) {
	if !groupAlive(pgid) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
	deadline := time.Now().Add(killAfter)
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
