package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ptyPane is a tmux session on a private socket, running one command in a
// real terminal, for the --pty checks of issue 6 that only a terminal shows.
type ptyPane struct {
	t      *testing.T
	socket string
}

func newPTYPane(t *testing.T, cols, rows int, command string) *ptyPane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	p := &ptyPane{t: t, socket: fmt.Sprintf("capwrap-pty-%d-%d", os.Getpid(), time.Now().UnixNano())}
	p.tmux("new-session", "-d", "-s", "t", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), command)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	return p
}

func (p *ptyPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// waitFor polls the pane until it shows want, and returns the screen.
func (p *ptyPane) waitFor(want string, within time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for {
		screen := p.tmux("capture-pane", "-p", "-t", "t")
		if strings.Contains(screen, want) {
			return screen
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("pane never showed %q; screen:\n%s", want, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// buildCapwrap builds the real binary once per test into a temp dir.
func buildCapwrap(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "capwrap")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestPTYLiveOnTerminal: with a pty a Python child, which block-buffers a
// pipe, shows its first line before it prints the second (issue 6 liveness).
func TestPTYLiveOnTerminal(t *testing.T) {
	bin := buildCapwrap(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "live.py")
	os.WriteFile(script, []byte("import time\nprint('first line')\ntime.sleep(3)\nprint('second line')\n"), 0o644)
	p := newPTYPane(t, 100, 30, fmt.Sprintf("cd %s && %s -- python3 %s; sleep 30", dir, bin, script))
	screen := p.waitFor("first line", 2500*time.Millisecond)
	if strings.Contains(screen, "second line") {
		t.Fatalf("both lines arrived together, the child was not live:\n%s", screen)
	}
	screen = p.waitFor("capwrap: exit 0", 10*time.Second)
	if !strings.Contains(screen, "second line") {
		t.Fatalf("second line missing:\n%s", screen)
	}
}

// TestPTYWindowSize: each pty starts with the terminal's size and follows it
// when the terminal is resized.
func TestPTYWindowSize(t *testing.T) {
	bin := buildCapwrap(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "size.py")
	os.WriteFile(script, []byte(`import os, sys, time
print("out", *os.get_terminal_size(1), "err", *os.get_terminal_size(2), flush=True)
while os.get_terminal_size(1).columns == 100:
    time.sleep(0.05)
print("resized", *os.get_terminal_size(1), "err", *os.get_terminal_size(2), flush=True)
`), 0o644)
	p := newPTYPane(t, 100, 30, fmt.Sprintf("cd %s && %s -- python3 %s; sleep 30", dir, bin, script))
	p.waitFor("out 100 30 err 100 30", 5*time.Second)
	p.tmux("resize-window", "-t", "t", "-x", "120", "-y", "40")
	p.waitFor("resized 120 40 err 120 40", 5*time.Second)
}

// TestPTYNotControllingTerminal: /dev/tty still reaches the user's real
// terminal, so a password prompt works under --pty.
func TestPTYNotControllingTerminal(t *testing.T) {
	bin := buildCapwrap(t)
	dir := t.TempDir()
	p := newPTYPane(t, 100, 30, fmt.Sprintf(`cd %s && %s -- sh -c 'printf "secret? " >/dev/tty; read x </dev/tty; echo "got [$x]"'; sleep 30`, dir, bin))
	p.waitFor("secret?", 5*time.Second) // capture-pane trims trailing blanks
	p.tmux("send-keys", "-t", "t", "abc", "Enter")
	p.waitFor("got [abc]", 5*time.Second)
}
