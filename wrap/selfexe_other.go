//go:build !linux

package wrap

import "os"

// selfExe is what the watchdog's shell stage execs (shellStage): the path
// of capwrap's executable (there is no portable way to exec an open
// descriptor: a capwrap binary removed while its command runs leaves the
// helper proper unstarted).
func selfExe(exe string) (self, path string, extra *os.File) {
	return exe, exe, nil
}
