package main

// Interactive children on a real terminal (issue 7): capwrap runs inside a
// shell in a tmux pane on a private server; send-keys types, capture-pane
// reads the screen. Every wait polls for a condition (text the command
// prints, never text that is also in the typed command line; a process
// state) up to a generous deadline, termPatience: a busy machine may take
// seconds to start a shell or python3, and only a test that already
// failed waits that long.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// termPatience is the deadline of every wait for a condition in the
// terminal tests.
const termPatience = 30 * time.Second

var (
	termSessions atomic.Int64 // sessions started, for their socket names
	termBinOnce  sync.Once
	termBin      string
	termBinErr   error
)

// termCapwrap builds the real binary once for all the terminal tests.
func termCapwrap(t *testing.T) string {
	t.Helper()
	termBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "capwrap-tmux-bin-")
		if err != nil {
			termBinErr = err
			return
		}
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = "/usr/local/go/bin/go"
		}
		termBin = filepath.Join(dir, "capwrap")
		// As make build does: a static binary, which starts faster.
		build := exec.Command(goBin, "build", "-o", termBin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			termBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if termBinErr != nil {
		t.Fatal(termBinErr)
	}
	return termBin
}

// termSession is an interactive bash in a 120x40 tmux pane whose prompt is
// "PROMPT$ ", in a fresh working directory.
type termSession struct {
	t      *testing.T
	socket string
	dir    string
	last   string // the screen as screen last saw it
}

func newTermSession(t *testing.T) *termSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	bin := termCapwrap(t)
	// A server of its own per session, also with -count=N (a new server on
	// the socket of one still exiting is told "server exited unexpectedly").
	s := &termSession{t: t, dir: t.TempDir(),
		socket: fmt.Sprintf("capwrap-test-%d-%d-%s", os.Getpid(), termSessions.Add(1), strings.ReplaceAll(t.Name(), "/", "-"))}
	t.Cleanup(func() {
		exec.Command("tmux", "-L", s.socket, "kill-server").Run()
		// kill-server leaves the socket file behind.
		tmp := os.Getenv("TMUX_TMPDIR")
		if tmp == "" {
			tmp = "/tmp"
		}
		os.Remove(filepath.Join(tmp, fmt.Sprintf("tmux-%d", os.Getuid()), s.socket))
	})
	rc := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(rc, []byte("PS1='PROMPT$ '\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40",
		"-e", "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"),
		"-e", "CAPWRAP_DIR=", "-e", "TERM=xterm", "-c", s.dir,
		"bash --noprofile --rcfile "+rc)
	s.waitFor("PROMPT$")
	return s
}

func (s *termSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		// The server ends with the pane's shell: say what it showed last.
		s.t.Fatalf("tmux %q: %v\n%s\nthe last screen seen:\n%s", args, err, out, s.last)
	}
	return string(out)
}

// run types a command line and Enter.
func (s *termSession) run(line string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", "t", "-l", line)
	s.tmux("send-keys", "-t", "t", "Enter")
}

func (s *termSession) screen() string {
	s.t.Helper()
	s.last = s.tmux("capture-pane", "-p", "-J", "-t", "t")
	return s.last
}

// waitFor polls the screen until it contains want, and returns it.
func (s *termSession) waitFor(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(termPatience)
	for {
		sc := s.screen()
		if strings.Contains(sc, want) {
			return sc
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the terminal never showed %q within %v; screen:\n%s", want, termPatience, sc)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// waitPrompt waits until the screen's last line is the shell's bare prompt
// and readline reads the keyboard: the shell's group holds the terminal and
// readline has taken it out of canonical mode (what is typed before that
// may be lost), so keys typed now reach the shell.
func (s *termSession) waitPrompt() {
	s.t.Helper()
	deadline := time.Now().Add(termPatience)
	for !s.atPrompt() {
		if time.Now().After(deadline) {
			s.t.Fatalf("no prompt; screen:\n%s", s.screen())
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// atPrompt reports whether the shell shows its bare prompt and reads the
// keyboard (see waitPrompt).
func (s *termSession) atPrompt() bool {
	s.t.Helper()
	lines := strings.Split(strings.TrimRight(s.screen(), "\n "), "\n")
	if strings.TrimSpace(lines[len(lines)-1]) != "PROMPT$" {
		return false
	}
	info := strings.Fields(s.tmux("display-message", "-p", "-t", "t", "#{pane_pid} #{pane_tty}"))
	if len(info) != 2 {
		s.t.Fatalf("pane pid and tty: %q", info)
	}
	if st := procStat(s.t, info[0]); st[2] != st[5] { // the shell's group is not the terminal's
		return false
	}
	tty, err := os.OpenFile(info[1], os.O_RDONLY|syscall.O_NOCTTY, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	defer tty.Close()
	canon, err := canonical(int(tty.Fd()))
	if err != nil {
		s.t.Fatal(err)
	}
	return !canon
}

// clear empties the screen and waits for the prompt, so that the next
// waitFor sees only what follows.
func (s *termSession) clear() {
	s.t.Helper()
	s.run("clear")
	deadline := time.Now().Add(termPatience)
	for strings.TrimSpace(s.screen()) != "PROMPT$" {
		if time.Now().After(deadline) {
			s.t.Fatalf("screen did not clear:\n%s", s.screen())
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// checkSane asserts that the terminal is back in cooked mode with echo
// and that the shell prompt is back.
func (s *termSession) checkSane() {
	s.t.Helper()
	s.run(`echo "sane=$(stty -a | tr ' ;' '\n\n' | grep -cx -e icanon -e echo -e isig)"`)
	s.waitFor("sane=3")
}

// TestTerminalTeeIsLive: at a terminal capwrap is tee: the child's first
// line is on the screen while the child still runs (it prints its second
// only once the test has seen the first, and tells it so with the file go).
func TestTerminalTeeIsLive(t *testing.T) {
	s := newTermSession(t)
	s.run(`capwrap -- sh -c 'echo "o""ne"; for i in $(seq 1200); do [ -e go ] && break; sleep 0.05; done; echo "t""wo"'`)
	sc := s.waitFor("\none")
	if strings.Contains(sc, "\ntwo") {
		t.Fatalf("the first line did not show before the child went on:\n%s", sc)
	}
	touch(t, filepath.Join(s.dir, "go"))
	sc = s.waitFor("capwrap: exit 0 · ")
	if !strings.Contains(sc, "\ntwo") || !strings.Contains(sc, "stdout 8 B, stderr 0 B · complete · tool-outputs/2") {
		t.Fatalf("summary or second line wrong:\n%s", sc)
	}
	s.waitFor("PROMPT$ \n")
}

func TestTerminalPrompt(t *testing.T) {
	s := newTermSession(t)
	s.run(`capwrap -- sh -c 'printf "na""me? "; read n; echo "hi $n"'`)
	s.waitFor("name?")
	s.run("gopher")
	sc := s.waitFor("capwrap: exit 0 · ")
	if !strings.Contains(sc, "hi gopher") {
		t.Fatalf("the child did not read the answer:\n%s", sc)
	}
	s.checkSane()
}

func TestTerminalCtrlC(t *testing.T) {
	s := newTermSession(t)
	s.run(`capwrap -- sh -c 'echo "rea""dy"; exec sleep 30'`)
	s.waitFor("\nready") // the command runs (sh, or sleep: either dies of SIGINT)
	s.tmux("send-keys", "-t", "t", "C-c")
	s.waitFor("capwrap: killed by SIGINT · ")
	s.run(`echo "status=$?"`)
	s.waitFor("status=130")
	s.checkSane()
	if out, _ := exec.Command("pgrep", "-f", "^sleep 30$").Output(); len(out) > 0 {
		// Another test or user may run "sleep 30"; only a hint.
		t.Logf("a sleep 30 is still running (pid %s)", strings.TrimSpace(string(out)))
	}
}

// TestTerminalCtrlZ: job control through capwrap. Ctrl-Z stops the command
// (its state is T) and capwrap with it, the shell reports the job stopped
// and reads the keyboard at once; fg continues both, the command holding the
// terminal again (it is the terminal's foreground group and reads a line).
func TestTerminalCtrlZ(t *testing.T) {
	s := newTermSession(t)
	s.run(`capwrap -- sh -c 'echo $$ >child.pid; echo "rea""dy"; read line; echo "got [$line]"'`)
	s.waitFor("\nready") // the output, not the command line
	b, err := os.ReadFile(filepath.Join(s.dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	waitState(t, pid, "S") // sh sleeps in read
	s.tmux("send-keys", "-t", "t", "C-z")
	s.waitFor("Stopped")
	if st := procStat(t, pid); st[0] != "T" {
		t.Fatalf("after Ctrl-Z the command is in state %s, want T (stopped)", st[0])
	}
	s.waitPrompt()
	s.run(`echo "shell has the terminal"`) // typed at once: no key may be lost
	s.waitFor("shell has the terminal\nPROMPT$")
	s.waitPrompt()
	s.run("fg")
	deadline := time.Now().Add(termPatience)
	for st := procStat(t, pid); st[0] == "T" || st[2] != st[5]; st = procStat(t, pid) {
		if time.Now().After(deadline) {
			t.Fatalf("after fg the command is in state %s, group %s, terminal's group %s", st[0], st[2], st[5])
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.tmux("send-keys", "-t", "t", "-l", "typed after fg")
	s.tmux("send-keys", "-t", "t", "Enter")
	s.waitFor("got [typed after fg]")
	s.waitFor("capwrap: exit 0 · ")
	s.checkSane()
}

// TestTerminalCtrlZBgKillPipeline: the rest of job control. bg after Ctrl-Z
// leaves the terminal to the shell (it keeps reading the keyboard and lives
// on after the job ends); kill %1 on a stopped job ends it and not the
// shell; Ctrl-Z on "capwrap ... | cat" stops the whole pipeline, and fg
// finishes it. The commands go on to their end only when the test creates
// a file (go1, go3), so that none ends before its Ctrl-Z.
func TestTerminalCtrlZBgKillPipeline(t *testing.T) {
	s := newTermSession(t)
	s.run(`capwrap -- sh -c 'echo "rea""dy"; for i in $(seq 1200); do [ -e go1 ] && break; sleep 0.05; done; echo "bg-""done"'`)
	s.waitFor("\nready")
	s.tmux("send-keys", "-t", "t", "C-z")
	s.waitFor("Stopped")
	s.waitPrompt()
	s.run("bg")
	s.waitPrompt()
	s.run(`echo "shell-$((40+2))"`)
	s.waitFor("shell-42")
	touch(t, filepath.Join(s.dir, "go1"))
	s.waitFor("bg-done")
	s.waitFor("capwrap: exit 0 · ")
	s.run(`echo "alive-$((1+1))"`)
	s.waitFor("alive-2")
	s.run(`wait; echo "all-jobs-ended-$((3+3))"`) // capwrap itself has exited
	s.waitFor("all-jobs-ended-6")
	s.checkSane()

	s.clear()
	s.run(`capwrap -- sh -c 'echo "rea""dy"; exec sleep 30'`)
	s.waitFor("\nready") // the command runs (sh, or sleep: kill %1 ends either)
	s.tmux("send-keys", "-t", "t", "C-z")
	s.waitFor("Stopped")
	s.waitPrompt()
	s.run("kill %1")
	s.waitFor("capwrap: killed by SIGTERM · ")
	s.run(`echo "alive-$((1+2))"`)
	s.waitFor("alive-3")
	s.checkSane()

	s.clear()
	s.run(`capwrap --tee -- sh -c 'echo "rea""dy"; for i in $(seq 1200); do [ -e go3 ] && break; sleep 0.05; done; echo "pipe-""end"' | cat`)
	s.waitFor("\nready")
	s.tmux("send-keys", "-t", "t", "C-z")
	s.waitFor("Stopped")
	s.waitPrompt()
	touch(t, filepath.Join(s.dir, "go3"))
	s.run("fg")
	s.waitFor("pipe-end")
	s.waitPrompt()
	s.checkSane()
}

// TestTerminalBackgroundRead: "capwrap -- cat &" at the prompt. cat, in a
// background group, reads the terminal and stops (SIGTTIN); as without
// capwrap the shell sees the job stopped (capwrap stops with it), fg gives
// cat the terminal and continues it, a typed line reaches it, Ctrl-C ends
// it, and no cat is left.
func TestTerminalBackgroundRead(t *testing.T) {
	s := newTermSession(t)
	sid := strings.TrimSpace(s.tmux("display-message", "-p", "-t", "t", "#{pane_pid}"))
	inSession := func(name string) []string {
		out, _ := exec.Command("pgrep", "-s", sid, "-x", name).Output()
		return strings.Fields(string(out))
	}
	t.Cleanup(func() { // before the tmux server goes: a stopped cat would stay
		for _, name := range []string{"cat", "capwrap"} {
			for _, pid := range inSession(name) {
				if n, err := strconv.Atoi(pid); err == nil {
					syscall.Kill(n, syscall.SIGKILL)
				}
			}
		}
	})
	s.run("capwrap -- cat &")
	stopped := func(name string) bool {
		pids := inSession(name)
		return len(pids) == 1 && procStat(t, pids[0])[0] == "T"
	}
	deadline := time.Now().Add(termPatience)
	for !(stopped("cat") && stopped("capwrap")) {
		if time.Now().After(deadline) {
			t.Fatalf("cat stopped %v, capwrap stopped %v: the job did not stop with its reader; screen:\n%s",
				stopped("cat"), stopped("capwrap"), s.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.waitPrompt()
	s.run("jobs")
	s.waitFor("Stopped")
	s.waitPrompt()
	s.run("fg")
	cat := inSession("cat")[0]
	deadline = time.Now().Add(termPatience)
	for st := procStat(t, cat); st[0] == "T" || st[2] != st[5]; st = procStat(t, cat) {
		if time.Now().After(deadline) {
			t.Fatalf("after fg cat is in state %s, group %s, terminal's group %s", st[0], st[2], st[5])
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.run("typed after fg")
	deadline = time.Now().Add(termPatience)
	for strings.Count(s.screen(), "typed after fg") < 2 { // the terminal's echo, then cat's
		if time.Now().After(deadline) {
			t.Fatalf("cat did not echo the line; screen:\n%s", s.screen())
		}
		time.Sleep(30 * time.Millisecond)
	}
	s.tmux("send-keys", "-t", "t", "C-c")
	s.waitFor("capwrap: killed by SIGINT · ")
	s.waitPrompt()
	if pids := inSession("cat"); len(pids) > 0 {
		t.Fatalf("cat is left: pid %v", pids)
	}
	s.checkSane()
}

// waitState waits until process pid is in state (R, S, T...).
func waitState(t *testing.T, pid, state string) {
	t.Helper()
	deadline := time.Now().Add(termPatience)
	for st := procStat(t, pid); st[0] != state; st = procStat(t, pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %s is in state %s, not %s", pid, st[0], state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// touch creates an empty file: the go-ahead a test gives a command that
// waits for it.
func touch(t *testing.T, name string) {
	t.Helper()
	if err := os.WriteFile(name, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// procStat returns the fields of /proc/PID/stat after the command name:
// state, ppid, pgrp, session, tty, tpgid, ...
func procStat(t *testing.T, pid string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}

// TestTerminalPager is the plain "capwrap -- less FILE", and "capwrap git
// log", which starts less itself: the pager takes over the terminal (its
// group is the foreground group, so it may change the terminal's modes),
// pages, quits on q, and leaves the terminal sane. less reads its keys from
// the terminal stderr names; with --pty auto on an interactive terminal,
// stderr stays a pipe, so less falls back to /dev/tty, the keyboard.
func TestTerminalPager(t *testing.T) {
	if _, err := exec.LookPath("less"); err != nil {
		t.Skip("less is not installed")
	}
	s := newTermSession(t)
	var lines []string
	for i := 1; i <= 200; i++ {
		lines = append(lines, fmt.Sprintf("line %03d", i))
	}
	if err := os.WriteFile(filepath.Join(s.dir, "file.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := []string{"capwrap -- less file.txt"}
	if _, err := exec.LookPath("git"); err == nil {
		s.run("git init -q . && git add file.txt && git -c user.name=t -c user.email=t@example.com commit -qm file && clear")
		cmds = append(cmds, "capwrap git -c core.pager=less show HEAD:file.txt")
	}
	for _, cmd := range cmds {
		s.clear()
		s.run(cmd)
		sc := s.waitFor("line 030")
		if strings.Contains(sc, "line 150") {
			t.Fatalf("%s: less did not page:\n%s", cmd, sc)
		}
		s.tmux("send-keys", "-t", "t", "q")
		s.waitFor("capwrap: exit 0 · ")
		s.checkSane()
	}
}

// TestTerminalPipeIsTee: a person at the keyboard piping capwrap (stdin and
// stderr terminals, stdout a pipe) gets the stream, not a preview: all the
// lines reach grep, the summary goes to the terminal (SPEC §2).
func TestTerminalPipeIsTee(t *testing.T) {
	s := newTermSession(t)
	s.run(`capwrap -- seq 100000 | grep -c '^[0-9]'; echo "rc=$?"`)
	sc := s.waitFor("\nrc=")
	if !strings.Contains(sc, "\n100000\n") || !strings.Contains(sc, "capwrap: exit 0 · ") || strings.Contains(sc, "capwrap-receipt") {
		t.Fatalf("want 100000 lines through the pipe and the summary on the terminal:\n%s", sc)
	}
	s.run(`X=$(capwrap -- seq 3); echo "got $(echo $X)"`)
	sc = s.waitFor("\ngot ")
	if !strings.Contains(sc, "got 1 2 3\n") {
		t.Fatalf("command substitution did not get the stream:\n%s", sc)
	}
}
