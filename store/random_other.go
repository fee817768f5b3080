//go:build !linux

package store

import (
	"crypto/rand"
	"io"
)

// cryptoRand is the random source of capture IDs and temporary names
// (random_linux.go reads getrandom(2) itself).
var cryptoRand io.Reader = rand.Reader
