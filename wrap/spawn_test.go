package wrap

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestStartCmd: startCmd starts what cmd.Start would, with the same
// errors, and gives a nil stdout or stderr /dev/null.
func TestStartCmd(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		cmd  func() *exec.Cmd
		want error  // errors.Is; nil: started
		text string // the error's text
	}{
		{"not found", func() *exec.Cmd { return exec.Command("capwrap-no-such-command") }, exec.ErrNotFound, `exec: "capwrap-no-such-command": executable file not found in $PATH`},
		{"no command", func() *exec.Cmd { return &exec.Cmd{} }, nil, "exec: no command"},
		{"NUL in the environment", func() *exec.Cmd {
			c := exec.Command(sh, "-c", "exit 0")
			c.Env = []string{"A=b\x00c"}
			return c
		}, nil, "exec: environment variable contains NUL"},
		{"not executable", func() *exec.Cmd { return exec.Command(dir) }, fs.ErrPermission, "fork/exec " + dir + ": permission denied"},
		{"missing", func() *exec.Cmd { return exec.Command(dir + "/missing") }, fs.ErrNotExist, "fork/exec " + dir + "/missing: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid, err := startCmd(tc.cmd())
			if err == nil {
				t.Fatalf("started pid %d", pid)
			}
			if tc.want != nil && !errors.Is(err, tc.want) || err.Error() != tc.text {
				t.Errorf("error %q, want %q (is %v)", err, tc.text, tc.want)
			}
		})
	}

	// Started: arguments, environment and streams as given, a nil
	// stderr on /dev/null; the status is wait4's.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := exec.Command(sh, "-c", `printf '%s %s' "$0" "$X"; printf err >&2; [ -w /dev/stderr ] && exit 7`, "arg0")
	c.Env, c.Stdout = []string{"X=y"}, w
	pid, err := startCmd(c)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "arg0 y" || ws.ExitStatus() != 7 {
		t.Errorf("output %q, status %d; want \"arg0 y\", 7", got, ws.ExitStatus())
	}
}
