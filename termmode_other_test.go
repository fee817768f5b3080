//go:build !linux

package main

import "golang.org/x/sys/unix"

// canonical reports whether the terminal fd is in canonical mode (ICANON).
// (macOS and FreeBSD name the request TIOCGETA.)
func canonical(fd int) (bool, error) {
	tio, err := unix.IoctlGetTermios(fd, unix.TIOCGETA)
	if err != nil {
		return false, err
	}
	return tio.Lflag&unix.ICANON != 0, nil
}
