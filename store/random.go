package store

import (
	"crypto/rand"
	"io"
)

// cryptoRand is the random source of capture IDs and temporary names:
// crypto/rand, as SPEC §4 names it for the ID's 50 random bits. (Reading
// getrandom(2) directly would spare its imports' init, about 0.1 ms, but
// the spec names the package.)
var cryptoRand io.Reader = rand.Reader
