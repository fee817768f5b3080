package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The --pty checks of issue 6 that only a real terminal shows, on the tmux
// harness of tmux_test.go.

// TestPTYLiveOnTerminal: with a pty a Python child, which block-buffers a
// pipe, shows its first line while it still runs: it prints the second
// only once the test has seen the first (and created the file go), so
// through a pipe the first would never show in time.
func TestPTYLiveOnTerminal(t *testing.T) {
	s := newTermSession(t)
	script := filepath.Join(s.dir, "live.py")
	os.WriteFile(script, []byte(`import os, time
print('first line')
for i in range(1200):
    if os.path.exists('go'):
        break
    time.sleep(0.05)
print('second line')
`), 0o644)
	s.run("capwrap -- python3 live.py")
	screen := s.waitFor("first line")
	if strings.Contains(screen, "second line") {
		t.Fatalf("both lines arrived together, the child was not live:\n%s", screen)
	}
	touch(t, filepath.Join(s.dir, "go"))
	screen = s.waitFor("capwrap: exit 0")
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
	s.waitFor("out 120 40 err 120 40")
	s.tmux("resize-window", "-t", "t", "-x", "100", "-y", "30")
	s.waitFor("resized 100 30 err 100 30")
	s.waitFor("capwrap: exit 0 · ") // before the test's directory goes
}

// TestPTYNotControllingTerminal: /dev/tty still reaches the user's real
// terminal, so a password prompt works under --pty.
func TestPTYNotControllingTerminal(t *testing.T) {
	s := newTermSession(t)
	s.run(`capwrap -- sh -c 'printf "sec""ret? " >/dev/tty; read x </dev/tty; echo "got [$x]"'`)
	s.waitFor("secret?") // capture-pane trims trailing blanks
	s.tmux("send-keys", "-t", "t", "abc", "Enter")
	s.waitFor("got [abc]")
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
	s.waitFor("auto-kbd True True")
	s.run(`capwrap -- ` + fmt.Sprintf(probe, "auto-pipe") + ` | cat`)
	s.waitFor("auto-pipe False True")
	s.run(`capwrap -- ` + fmt.Sprintf(probe, "auto-file") + ` 2>err.txt`)
	s.waitFor("auto-file True False")
	s.run(`capwrap --pty always -- ` + fmt.Sprintf(probe, "always-pipe") + ` | cat`)
	s.waitFor("always-pipe True True")
}
