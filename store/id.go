package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// idTimeLayout is the UTC timestamp that starts every capture ID (SPEC §4).
const idTimeLayout = "20060102T150405Z"

// idRandChars is the number of base32 characters after the dash: 10
// characters carry 50 bits from crypto/rand (SPEC §4; cryptoRand).
const idRandChars = 10

// idLen is the length in bytes of a capture ID such as
// "20261130T030612Z-k3j4h5g6x2".
const idLen = len(idTimeLayout) + 1 + idRandChars

// idAlphabet is the alphabet of an ID's random part: RFC 4648's base32, in
// lower case.
const idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// idRandom encodes the first 5*idRandChars bits of b, the most significant
// bit of b[0] first, in idAlphabet: the first idRandChars characters of
// b's base32 encoding. A loop of ten shifts, not encoding/base32, whose
// package init every capwrap would pay for (issue 28).
func idRandom(b [8]byte) string {
	v := binary.BigEndian.Uint64(b[:])
	var out [idRandChars]byte
	for i := range out {
		out[i] = idAlphabet[v>>(64-5*(i+1))&31]
	}
	return string(out[:])
}

// newID returns a capture ID for now: the UTC time to the second, a dash and
// 50 random bits in lowercase base32. IDs sort by time (to the second) and
// cannot be guessed.
func newID(now time.Time, random io.Reader) (string, error) {
	var b [8]byte // 64 bits read, 50 used
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("read random bits for capture id: %w", err)
	}
	return now.UTC().Format(idTimeLayout) + "-" + idRandom(b), nil
}

// idCharOK reports whether c may appear at index i of a capture ID.
func idCharOK(i int, c byte) bool {
	switch {
	case i < 8 || (i > 8 && i < 15):
		return c >= '0' && c <= '9'
	case i == 8:
		return c == 'T'
	case i == 15:
		return c == 'Z'
	case i == 16:
		return c == '-'
	case i < idLen:
		return (c >= 'a' && c <= 'z') || (c >= '2' && c <= '7')
	}
	return false
}

// ValidID reports whether s has the syntax of a capture ID (SPEC §4).
func ValidID(s string) bool {
	return len(s) == idLen && validIDPrefix(s)
}

// validIDPrefix reports whether s is a non-empty prefix of some valid ID.
func validIDPrefix(s string) bool {
	if s == "" || len(s) > idLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !idCharOK(i, s[i]) {
			return false
		}
	}
	return true
}

// Errors returned by [Dir.Lookup].
var (
	ErrBadID       = errors.New("not a capture id")
	ErrUnknownID   = errors.New("no such capture")
	ErrAmbiguousID = errors.New("ambiguous capture id prefix")
)

// checkPrefix refuses a user-supplied ID prefix that could name anything but
// a capture directory.
func checkPrefix(prefix string) error {
	if strings.ContainsAny(prefix, `/\`) || strings.Contains(prefix, "..") || !validIDPrefix(prefix) {
		return fmt.Errorf("%q: %w", prefix, ErrBadID)
	}
	return nil
}
