package main

// Issue 23 at a real terminal (the tmux harness of tmux_test.go): capwrap X
// | Y behaves as X | Y, a pager in the same job keeps the terminal, a
// prompt on /dev/tty works whatever stdin is, an interactive shell gets its
// prompt, and a pager that reads its keys from its stderr gets them.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTerminalPipeToLess: `capwrap seq 1 200 | less`. less, in the same
// job as capwrap, keeps the terminal's foreground (capwrap's command gets
// its own group but not the terminal), so G and q work at once and leave
// the terminal sane.
func TestTerminalPipeToLess(t *testing.T) {
	if _, err := exec.LookPath("less"); err != nil {
		t.Skip("less is not installed")
	}
	s := newTermSession(t)
	s.run(`LESS= capwrap -- seq 1 200 | less`)
	s.waitFor("\n30\n")
	less := waitProc(t, s, "less")
	if st := procStat(t, less); st[2] != st[5] {
		t.Fatalf("less (group %s) is not the terminal's foreground group (%s)", st[2], st[5])
	}
	s.tmux("send-keys", "-t", "t", "G")
	s.waitFor("\n200\n")
	s.tmux("send-keys", "-t", "t", "q")
	s.waitPrompt()
	s.checkSane()
}

// waitProc waits for a process named name in the tmux pane's session and
// returns its pid.
func waitProc(t *testing.T, s *termSession, name string) string {
	t.Helper()
	sid := strings.TrimSpace(s.tmux("display-message", "-p", "-t", "t", "#{pane_pid}"))
	deadline := time.Now().Add(termPatience)
	for {
		out, _ := exec.Command("pgrep", "-s", sid, "-x", name).Output()
		if f := strings.Fields(string(out)); len(f) > 0 {
			return f[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the session; screen:\n%s", name, s.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTerminalPipeSameBytes: at a terminal, `capwrap X | Y` gives Y the
// bytes `X | Y` does: ls prints one name per line and no colour into a
// pipe, git log starts no pager (it would wait on an invisible one).
func TestTerminalPipeSameBytes(t *testing.T) {
	s := newTermSession(t)
	files := filepath.Join(s.dir, "files") // not where capwrap makes tool-outputs/
	if err := os.Mkdir(files, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		if err := os.WriteFile(filepath.Join(files, fmt.Sprintf("file-%03d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pairs := []string{
		`ls files | wc -l`,
		`ls --color=auto files | od -c | grep -c 033`,
		`ls --color=auto -F files | head -3 | od -c | md5sum`,
	}
	if _, err := exec.LookPath("git"); err == nil {
		s.run(`git init -q . && seq 1 300 >tracked && git add tracked && for i in $(seq 1 30); do git -c user.name=t -c user.email=t@e commit -q --allow-empty -m "c$i"; done; seq 2 301 >tracked; clear`)
		s.waitPrompt()
		pairs = append(pairs, `git log --oneline | wc -l`, `git log | md5sum`, `git diff --color=auto | md5sum`)
	}
	for i, p := range pairs {
		cmd, pipe, _ := strings.Cut(p, " | ")
		s.clear()
		s.run(fmt.Sprintf(`echo "bare-%d [$(%s | %s)]"; echo "wrapped-%d [$(capwrap -- %s | %s)]"`, i, cmd, pipe, i, cmd, pipe))
		sc := s.waitFor(fmt.Sprintf("\nwrapped-%d [", i))
		bare, wrapped := between(sc, fmt.Sprintf("\nbare-%d [", i)), between(sc, fmt.Sprintf("\nwrapped-%d [", i))
		if bare == "" || bare != wrapped {
			t.Errorf("%s: bare gave [%s], under capwrap [%s]; screen:\n%s", p, bare, wrapped, sc)
		}
	}
}

// between is what follows the first prefix in sc, up to the next "]".
func between(sc, prefix string) string {
	_, rest, ok := strings.Cut(sc, prefix)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, "]")
	return v
}

// TestTerminalTTYPromptStdinPipe: `… | capwrap -- sudo sh`: a prompt on
// /dev/tty works when capwrap's stdin is a pipe (the command asks for the
// terminal, and gets it, as `… | sudo sh` would).
func TestTerminalTTYPromptStdinPipe(t *testing.T) {
	s := newTermSession(t)
	s.run(`echo piped | capwrap -- sh -c 'read a; printf "pass""word? " >/dev/tty; read p </dev/tty; echo "got [$a] [$p]"'`)
	s.waitFor("password?")
	s.run("sekrit")
	s.waitFor("got [piped] [sekrit]")
	s.waitFor("capwrap: exit 0 · ")
	s.checkSane()
}

// TestTerminalTTYPromptPreviewMode: the same prompt with stdout piped too
// (`echo x | capwrap -- CMD | cat`: preview mode, neither stdin nor stdout
// a terminal): capwrap's job is still the shell's, so the command gets the
// terminal when it asks (SPEC §2: whatever capwrap's stdin is).
func TestTerminalTTYPromptPreviewMode(t *testing.T) {
	s := newTermSession(t)
	s.run(`echo piped | capwrap -- sh -c 'read a; printf "pass""word? " >/dev/tty; read p </dev/tty; echo "got [$a] [$p]"' | cat`)
	s.waitFor("password?")
	s.run("sekrit")
	s.waitFor("got [piped] [sekrit]")
	s.waitFor("capwrap-receipt {")
	s.checkSane()
}

// TestTerminalHarnessKeepsTerminal: an agent's harness at a terminal (here
// a Python program typed at the prompt, itself reading that terminal) runs
// capwrap with pipes, in its own process group. A command that reads
// /dev/tty is not given the terminal (it would stop the harness): it
// waits until --timeout, and the preview says why, not "raise --timeout".
func TestTerminalHarnessKeepsTerminal(t *testing.T) {
	s := newTermSession(t)
	harness := filepath.Join(s.dir, "harness.py")
	if err := os.WriteFile(harness, []byte(`import subprocess, sys
p = subprocess.run(["capwrap", "--timeout", "1s", "--kill-after", "1s", "--", "sh", "-c", "read p </dev/tty; echo got $p"],
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
print("harness-rc", p.returncode)
print(p.stdout.decode())
line = sys.stdin.readline()
print("harness-read", line.strip())
`), 0o644); err != nil {
		t.Fatal(err)
	}
	s.run("python3 " + harness)
	sc := s.waitFor("harness-rc ")
	if !strings.Contains(sc, "harness-rc 124") || !strings.Contains(sc, "the command waited for the terminal") {
		t.Fatalf("want status 124 and the note on waiting for the terminal:\n%s", sc)
	}
	s.run("still-mine") // the harness still has the terminal and reads it
	s.waitFor("harness-read still-mine")
	s.checkSane()
}

// TestTerminalCtrlZShowsLastOutput: what the command wrote just before
// Ctrl-Z stopped it is on the screen before the shell's "Stopped" (a
// full-screen program's last escape sequences restore the terminal).
func TestTerminalCtrlZShowsLastOutput(t *testing.T) {
	s := newTermSession(t)
	for i := 0; i < 3; i++ {
		s.clear()
		s.run(fmt.Sprintf(`capwrap -- sh -c 'echo "last-""words-%d"; kill -TSTP 0; echo after'`, i))
		sc := s.waitFor("Stopped")
		last, stopped := strings.Index(sc, fmt.Sprintf("\nlast-words-%d", i)), strings.Index(sc, "Stopped")
		if last < 0 || last > stopped {
			t.Fatalf("the output before the stop is not on the screen before \"Stopped\":\n%s", sc)
		}
		s.waitPrompt()
		s.run("fg")
		s.waitFor("capwrap: exit 0 · ")
	}
	s.checkSane()
}

// TestTerminalInteractiveShell: `capwrap bash` is an interactive shell
// (stdin and stderr terminals) with its prompt; it reads what is typed;
// a pager started inside it reads its keys; exit ends the run.
func TestTerminalInteractiveShell(t *testing.T) {
	s := newTermSession(t)
	rc := filepath.Join(s.dir, "inner.rc")
	if err := os.WriteFile(rc, []byte("PS1='INNER$ '\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.run("capwrap -- bash --noprofile --rcfile " + rc)
	s.waitFor("INNER$")
	s.waitReadline()
	// What is typed shows as it is typed: the echo's last byte ("o", which
	// may begin a keyword) does not wait for the next key (the live copy
	// shows a public keyword's beginning once the stream is idle).
	s.tmux("send-keys", "-t", "t", "-l", `echo "inner-$((20+22))" typed-hello`)
	s.waitFor("typed-hello")
	s.tmux("send-keys", "-t", "t", "Enter")
	s.waitFor("inner-42 typed-hello") // not in what was typed
	if _, err := exec.LookPath("less"); err == nil {
		// The pager reads its keys from the shell's stderr, capwrap's pty
		// (key relay); what is typed right after q goes to the shell.
		s.run(`seq 1 200 | less`)
		s.waitFor("\n30\n")
		s.tmux("send-keys", "-t", "t", "-l", `qecho "after-$((5+5))"`)
		s.tmux("send-keys", "-t", "t", "Enter")
		s.waitFor("after-10")
	}
	// Ctrl-Z on a command of the inner shell, which has no job control:
	// the whole capwrap job stops, and fg lets the command finish. (The
	// command ends once the test creates the file go, after the stop.)
	s.run(`sh -c 'for i in $(seq 1200); do [ -e go ] && break; sleep 0.05; done'; echo "slept-$((3+3))"`)
	waitArgs(t, s, "sh -c for i in $(seq 1200); do [ -e go ] && break; sleep 0.05; done") // a stop before it, of the shell alone, would do nothing
	s.tmux("send-keys", "-t", "t", "C-z")
	s.waitFor("Stopped")
	s.waitPrompt()
	touch(t, filepath.Join(s.dir, "go"))
	s.run("fg")
	s.waitFor("slept-6")
	s.run("exit 3")
	s.waitFor("capwrap: exit 3 · ")
	s.checkSane()
}

// TestTerminalEarlyCtrlC: Ctrl-C moments after capwrap starts (5, 20 and
// 50 ms after its process appears): the shell sees 130, the terminal is
// sane, and a command that started was followed by the summary (the
// SIGINT caught and forwarded, or the run cancelled before the start). A
// key that lands before capwrap could catch anything (the Go runtime's
// own start) ends capwrap before it has made a capture or started the
// command: that is the only outcome without a summary.
func TestTerminalEarlyCtrlC(t *testing.T) {
	s := newTermSession(t)
	for _, ms := range []int{5, 20, 50} {
		s.clear()
		name := fmt.Sprintf("early-%d", ms)
		s.run(fmt.Sprintf(`capwrap -- sh -c 'touch "ran-$0"; exec sleep 30' %s`, name))
		waitArgs(t, s, `capwrap -- sh -c touch "ran-$0"; exec sleep 30 `+name)
		time.Sleep(time.Duration(ms) * time.Millisecond)
		s.tmux("send-keys", "-t", "t", "C-c")
		s.waitPrompt()
		s.run(`echo "sta""tus=$?"`)
		sc := s.waitFor("status=")
		if !strings.Contains(sc, "status=130") {
			t.Errorf("Ctrl-C %d ms after the start: want status 130; screen:\n%s", ms, sc)
		}
		summary := strings.Contains(sc, "capwrap: cancelled by SIGINT before the start · ") ||
			strings.Contains(sc, "capwrap: killed by SIGINT · ")
		_, err := os.Stat(filepath.Join(s.dir, "ran-"+name))
		switch ran := err == nil; {
		case ran && !summary:
			t.Errorf("Ctrl-C %d ms after the start: the command ran, but no summary followed; screen:\n%s", ms, sc)
		case !ran && !summary:
			t.Logf("Ctrl-C %d ms after the start landed before capwrap could catch it", ms)
		}
		s.checkSane()
	}
}

// waitReadline waits until a shell in the pane reads a line with readline:
// the pane's terminal is out of canonical mode (readline sets it so when
// it is ready for keys; what is typed before may be flushed).
func (s *termSession) waitReadline() {
	s.t.Helper()
	tty := strings.TrimSpace(s.tmux("display-message", "-p", "-t", "t", "#{pane_tty}"))
	deadline := time.Now().Add(termPatience)
	for {
		out, _ := exec.Command("stty", "-a", "-F", tty).Output()
		if strings.Contains(string(out), "-icanon") {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the shell never read the terminal; stty:\n%s\nscreen:\n%s", out, s.screen())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitArgs waits for a process whose command line is args.
func waitArgs(t *testing.T, s *termSession, args string) {
	t.Helper()
	deadline := time.Now().Add(termPatience)
	for {
		if out, _ := exec.Command("pgrep", "-f", "^"+regexp.QuoteMeta(args)+"$").Output(); len(out) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process %q; screen:\n%s", args, s.screen())
		}
		time.Sleep(time.Millisecond)
	}
}
