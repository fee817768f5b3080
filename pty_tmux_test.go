package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The --pty checks of issue 6 that only a real terminal shows, on the tmux
// harness of tmux_test.go.

// TestPTYLiveOnTerminal: with a pty a Python child, which block-buffers a
// pipe, shows its first line before it prints the second.
func TestPTYLiveOnTerminal(t *testing.T) {
	s := newTermSession(t)
	script := filepath.Join(s.dir, "live.py")
	os.WriteFile(script, []byte("import time\nprint('first line')\ntime.sleep(3)\nprint('second line')\n"), 0o644)
	s.run("capwrap -- python3 live.py")
	screen := s.waitFor("first line", 2500*time.Millisecond)
	if strings.Contains(screen, "second line") {
		t.Fatalf("both lines arrived together, the child was not live:\n%s", screen)
	}
	screen = s.waitFor("capwrap: exit 0", 10*time.Second)
	if !strings.Contains(screen, "second line") {
		t.Fatalf("second line missing:\n%s", screen)
	}
}

// TestPTYWindowSize: each pty starts with the terminal's size (the pane is
// 120x40) and follows it when the terminal is resized.
func TestPTYWindowSize(t *testing.T) {
	s := newTermSession(t)
	os.WriteFile(filepath.Join(s.dir, "size.py"), []byte(`import os, time
print("out", *os.get_terminal_size(1), "err", *os.get_terminal_size(2), flush=True)
while os.get_terminal_size(1).columns == 120:
    time.sleep(0.05)
print("resized", *os.get_terminal_size(1), "err", *os.get_terminal_size(2), flush=True)
`), 0o644)
	s.run("capwrap -- python3 size.py")
	s.waitFor("out 120 40 err 120 40", 5*time.Second)
	s.tmux("resize-window", "-t", "t", "-x", "100", "-y", "30")
	s.waitFor("resized 100 30 err 100 30", 5*time.Second)
	s.waitFor("capwrap: exit 0 · ", 5*time.Second) // before the test's directory goes
}

// TestPTYNotControllingTerminal: /dev/tty still reaches the user's real
// terminal, so a password prompt works under --pty.
func TestPTYNotControllingTerminal(t *testing.T) {
	s := newTermSession(t)
	s.run(`capwrap -- sh -c 'printf "secret? " >/dev/tty; read x </dev/tty; echo "got [$x]"'`)
	s.waitFor("secret?", 5*time.Second) // capture-pane trims trailing blanks
	s.tmux("send-keys", "-t", "t", "abc", "Enter")
	s.waitFor("got [abc]", 5*time.Second)
	s.checkSane()
}

// TestPTYAutoInteractive: SPEC §2 --pty auto. At the keyboard both
// streams are ptys (stderr keeps its colour); a stream that goes to a pipe
// or a file is a pipe, as without capwrap: in `capwrap X | cat` stdout, in
// `capwrap X 2>file` stderr. --pty always gives both whatever they go to.
func TestPTYAutoInteractive(t *testing.T) {
	s := newTermSession(t)
	probe := `python3 -c 'import sys; print("%s", sys.stdout.isatty(), sys.stderr.isatty())'`
	s.run(`capwrap -- ` + fmt.Sprintf(probe, "auto-kbd"))
	s.waitFor("auto-kbd True True", 5*time.Second)
	s.run(`capwrap -- ` + fmt.Sprintf(probe, "auto-pipe") + ` | cat`)
	s.waitFor("auto-pipe False True", 5*time.Second)
	s.run(`capwrap -- ` + fmt.Sprintf(probe, "auto-file") + ` 2>err.txt`)
	s.waitFor("auto-file True False", 5*time.Second)
	s.run(`capwrap --pty always -- ` + fmt.Sprintf(probe, "always-pipe") + ` | cat`)
	s.waitFor("always-pipe True True", 5*time.Second)
}
