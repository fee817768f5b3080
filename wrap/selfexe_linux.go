package wrap

import "os"

// selfExe is what the watchdog's shell stage execs (shellStage): on Linux
// capwrap's running executable, opened through /proc/self/exe and passed
// as the stage's descriptor 3, so that a capwrap binary replaced or
// removed while its command runs still gets its helper proper; the path
// exe when /proc cannot be had.
func selfExe(exe string) (self, path string, extra *os.File) {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return exe, exe, nil
	}
	return "/proc/self/fd/3", exe, f
}
