package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// viaShortPath calls fn with a path to name in the directory dir (whose
// absolute path is dirPath) that fits a socket address (sun_path: 108
// bytes on Linux): /proc/self/fd/N/name, which resolves through the
// directory's own descriptor whatever its depth; the absolute path when
// /proc is not mounted and it fits.
func viaShortPath(dir *os.File, dirPath, name string, fn func(path string) error) error {
	proc := fmt.Sprintf("/proc/self/fd/%d", dir.Fd())
	if _, err := os.Stat(proc); err == nil {
		return fn(proc + "/" + name)
	}
	p := filepath.Join(dirPath, name)
	if len(p) >= sunPathMax {
		return fmt.Errorf("%s: path too long for a socket (%d bytes, at most %d) and /proc is not mounted", p, len(p), sunPathMax-1)
	}
	return fn(p)
}

// sunPathMax is the size of sockaddr_un's sun_path on Linux, its NUL
// included.
const sunPathMax = 108
