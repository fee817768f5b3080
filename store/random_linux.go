package store

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// cryptoRand is the random source of capture IDs and temporary names: the
// kernel's getrandom(2), which crypto/rand reads on Linux too. Read
// directly, not through crypto/rand, whose imports' init (its DRBG, AES
// and GCM) every capwrap would pay for at start (issue 28).
var cryptoRand io.Reader = getrandom{}

// getrandom reads getrandom(2) with no flags: it blocks only until the
// kernel's pool is first initialized, early in boot.
type getrandom struct{}

// Read fills b whole, or returns the getrandom error (never a short read
// without one).
func (getrandom) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Getrandom(b[n:], 0)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return n, os.NewSyscallError("getrandom", err)
		}
		n += m
	}
	return n, nil
}
