package redact

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveTeddy tells whether teddyMasks may be called: it needs AVX2.
var haveTeddy = cpu.X86.HasAVX2

// teddyMasks judges the blocks of 32 positions at b[0:], b[32:], ... and
// stores each block's mask (bit i: position 32n+i survives, as teddyBlock
// computes it, for every set of tables in t's chain) in masks[n]. It stops
// when masks is full or when the next block would read past b (a block
// needs 32+teddyLen-1 bytes), and returns the number of blocks judged.
// Implemented in teddy_amd64.s with AVX2.
//
//go:noescape
func teddyMasks(t *teddyTables, b []byte, masks []uint32) (n int)

// teddy_amd64.s finds a set's next set at offset 224.
var _ [unsafe.Offsetof(teddyTables{}.next) - 224]struct{}
var _ [224 - unsafe.Offsetof(teddyTables{}.next)]struct{}
