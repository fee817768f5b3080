package wrap

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
)

// startCmd starts cmd as cmd.Start would and returns the child's PID, for
// the commands capwrap builds: standard streams and ExtraFiles that are
// *os.File (nil stdout or stderr: /dev/null), no Dir, no context. It goes
// through syscall.StartProcess, not os.StartProcess: the os package's
// first start forks a probe child of its own, to learn whether pidfds
// work, and waits for it to exit, a process more to be scheduled and
// reaped on the path of every run before the command can start; capwrap
// reaps its children with wait4 and needs no pidfd. Errors are os/exec's:
// cmd.Err, "exec: no command", a NUL in the environment, or the spawn's
// as an *os.PathError "fork/exec".
func startCmd(cmd *exec.Cmd) (int, error) {
	if cmd.Err != nil {
		return 0, cmd.Err
	}
	if cmd.Path == "" {
		return 0, errors.New("exec: no command")
	}
	for _, kv := range cmd.Env { // Environ leaves such an entry out
		if strings.IndexByte(kv, 0) >= 0 {
			return 0, errors.New("exec: environment variable contains NUL")
		}
	}
	env := cmd.Environ()
	var nulls [2]*os.File // /dev/null for reading, for writing; opened at need
	defer func() {
		for _, f := range nulls {
			if f != nil {
				f.Close()
			}
		}
	}()
	file := func(s any, write int) (*os.File, error) {
		if f, ok := s.(*os.File); ok && f != nil {
			return f, nil
		}
		if s != nil && !isNilFile(s) {
			return nil, errors.New("wrap: a command's standard stream must be an *os.File")
		}
		if nulls[write] == nil {
			f, err := os.OpenFile(os.DevNull, [2]int{os.O_RDONLY, os.O_WRONLY}[write], 0)
			if err != nil {
				return nil, err
			}
			nulls[write] = f
		}
		return nulls[write], nil
	}
	var files []*os.File
	for i, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		f, err := file(s, min(i, 1))
		if err != nil {
			return 0, err
		}
		files = append(files, f)
	}
	files = append(files, cmd.ExtraFiles...)
	fds := make([]uintptr, len(files))
	for i, f := range files {
		fds[i] = f.Fd()
	}
	pid, _, err := syscall.StartProcess(cmd.Path, cmd.Args, &syscall.ProcAttr{Env: env, Files: fds, Sys: cmd.SysProcAttr})
	runtime.KeepAlive(files)
	if err != nil {
		return 0, &os.PathError{Op: "fork/exec", Path: cmd.Path, Err: err}
	}
	return pid, nil
}

// isNilFile reports whether s is a nil *os.File.
func isNilFile(s any) bool {
	f, ok := s.(*os.File)
	return ok && f == nil
}
