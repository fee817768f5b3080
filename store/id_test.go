package store

import (
	"bytes"
	"encoding/base32"
	"math/rand/v2"
	"testing"
)

// TestIDRandom holds idRandom to what encoding/base32 with the ID's
// alphabet gives for the first idRandChars characters (the encoding IDs
// had before it), on fixed inputs and random ones.
func TestIDRandom(t *testing.T) {
	for _, tc := range []struct {
		in   [8]byte
		want string
	}{
		{[8]byte{}, "aaaaaaaaaa"},
		{[8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "7777777777"},
		{[8]byte{0x80}, "qaaaaaaaaa"},                                           // the first bit is the top of the first character
		{[8]byte{0, 0, 0, 0, 0, 0, 0x40, 0}, "aaaaaaaaab"},                      // bit 49, the last one used
		{[8]byte{0, 0, 0, 0, 0, 0, 0x3f, 0xff}, "aaaaaaaaaa"},                   // bits 50 to 63 are not used
		{[8]byte{'c', 'a', 'p', 'w', 'r', 'a', 'p', '!'}, "mnqxa53smf"},         // base32("capwrap!") = MNQXA53SMFYCC===
		{[8]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}, "aerukz4jvp"}, // base32 = AERUKZ4JVPG66===
	} {
		if got := idRandom(tc.in); got != tc.want {
			t.Errorf("idRandom(%x) = %q, want %q", tc.in, got, tc.want)
		}
	}
	enc := base32.NewEncoding(idAlphabet).WithPadding(base32.NoPadding)
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		var b [8]byte
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if got, want := idRandom(b), enc.EncodeToString(b[:])[:idRandChars]; got != want {
			t.Fatalf("idRandom(%x) = %q, base32 gives %q", b, got, want)
		}
	}
}

// TestCryptoRand checks that the random source fills whole buffers,
// short and long, and that two reads differ.
func TestCryptoRand(t *testing.T) {
	for _, n := range []int{1, 8, 256, 4096} {
		a, b := make([]byte, n), make([]byte, n)
		for _, p := range [][]byte{a, b} {
			if got, err := cryptoRand.Read(p); got != n || err != nil {
				t.Fatalf("Read of %d bytes: %d, %v", n, got, err)
			}
		}
		if n >= 8 && bytes.Equal(a, b) {
			t.Errorf("two reads of %d bytes are equal", n)
		}
	}
}
