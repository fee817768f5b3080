//go:build darwin || freebsd

package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// viaShortPath calls fn with a path to name in the directory dir (whose
// absolute path is dirPath) that fits a socket address (sun_path: 104
// bytes on macOS and FreeBSD): the absolute path when it fits, else a
// symbolic link to the directory in a new private (0700) temporary
// directory, removed when fn returns. (FreeBSD's bindat and connectat
// would take the descriptor; golang.org/x/sys/unix has neither, and macOS
// has no equivalent, so both use the link.)
func viaShortPath(dir *os.File, dirPath, name string, fn func(path string) error) error {
	p := filepath.Join(dirPath, name)
	if len(p) < sunPathMax {
		return fn(p)
	}
	for _, tmp := range []string{os.TempDir(), "/tmp"} {
		if len(tmp)+len("/capwrap-0123456789/d/")+len(name) >= sunPathMax {
			continue
		}
		priv, err := os.MkdirTemp(tmp, "capwrap-")
		if err != nil {
			continue
		}
		defer os.RemoveAll(priv)
		link := filepath.Join(priv, "d")
		if err := os.Symlink(dirPath, link); err != nil {
			return err
		}
		return fn(link + "/" + name)
	}
	return fmt.Errorf("%s: path too long for a socket (%d bytes, at most %d), and no short temporary directory", p, len(p), sunPathMax-1)
}

// sunPathMax is the size of sockaddr_un's sun_path on the BSDs, its NUL
// included.
const sunPathMax = 104
