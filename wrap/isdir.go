package wrap

import (
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// dirCommand is the error for a command name that names a directory: "."
// and ".." (which exec.LookPath would look up in PATH and call not found)
// or a path with a slash that is one (where the kernel's EACCES would say
// "permission denied"). As a POSIX shell does for `./`, it is a command
// found but not executable (exit 126; classified by failStart through
// EISDIR). nil for any other name.
func dirCommand(name string) error {
	if name != "." && name != ".." && !strings.Contains(name, "/") {
		return nil
	}
	if fi, err := os.Stat(name); err != nil || !fi.IsDir() {
		return nil
	}
	return &fs.PathError{Op: "exec", Path: name, Err: syscall.EISDIR}
}
