package main

import "golang.org/x/sys/unix"

// canonical reports whether the terminal fd is in canonical mode (ICANON).
func canonical(fd int) (bool, error) {
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return false, err
	}
	return tio.Lflag&unix.ICANON != 0, nil
}
