//go:build !purego

package match

import "unsafe"

// haveTeddy tells whether teddyMasks may be called: it needs AVX2.
func haveTeddy() bool { return vectorFeatures().avx2 }

// haveTeddy512 tells whether teddyMasks uses teddyMasks512 for all but
// the last blocks: it needs AVX-512 BW (and the operating system's support
// for its registers, which vectorFeatures checks).
func haveTeddy512() bool { f := vectorFeatures(); return f.avx512f && f.avx512bw }

// cpuFeatures are the CPU features the vector kernels need, each also
// supported by the operating system (its registers saved).
type cpuFeatures struct{ avx2, avx512f, avx512bw bool }

// teddyMasks judges the blocks of 32 positions at b[0:], b[32:], ... and
// stores each block's mask (bit i: position 32n+i survives, as teddyBlock
// computes it, for every set of tables in t's chain) in masks[n]. It stops
// when masks is full or when the next block would read past b (a block
// needs 32+teddyLen-1 bytes), and returns the number of blocks judged.
// Implemented in teddy_amd64.s: with AVX-512 where the CPU has it (64
// positions per step, half the instructions), and AVX2 for the rest.
func teddyMasks(t *teddyTables, b []byte, masks []uint32) (n int) {
	if haveTeddy512() {
		n = teddyMasks512(t, b, masks)
	}
	return n + teddyMasks256(t, b[32*n:], masks[n:])
}

// teddyMasks256 is teddyMasks with AVX2, 32 positions per step.
//
//go:noescape
func teddyMasks256(t *teddyTables, b []byte, masks []uint32) (n int)

// teddyMasks512 is teddyMasks with AVX-512, 64 positions per step; it
// leaves the last blocks (and an odd one) to teddyMasks256.
//
//go:noescape
func teddyMasks512(t *teddyTables, b []byte, masks []uint32) (n int)

// teddy_amd64.s reads teddyTables at fixed offsets, for fingerprints of
// four bytes: lo[j] at 32*j, hi[j] at 128+32*j, the nibble mask at 256, the
// fold at 288 and the next set at 320. Each line below fails to compile (an index out of
// range, or a constant overflow) when the struct and the assembly disagree.
var (
	_ = [1]struct{}{}[teddyLen-4]
	_ = [1]struct{}{}[unsafe.Sizeof(teddyTables{}.lo[0])-32]
	_ = [1]struct{}{}[unsafe.Offsetof(teddyTables{}.lo)-0]
	_ = [1]struct{}{}[unsafe.Offsetof(teddyTables{}.hi)-128]
	_ = [1]struct{}{}[unsafe.Offsetof(teddyTables{}.nibble)-256]
	_ = [1]struct{}{}[unsafe.Offsetof(teddyTables{}.fold)-288]
	_ = [1]struct{}{}[unsafe.Offsetof(teddyTables{}.next)-320]
)
