//go:build !purego

#include "textflag.h"

// The layout of teddyTables (teddy.go): lo[j] at 32*j and hi[j] at
// 128+32*j for fingerprint bytes j = 0..3, each 16-byte table written twice;
// the nibble mask at 256; the fold (0x02 or 0, 32 times) at 288; next at
// 320 (teddy_amd64.go asserts each offset).

// func teddyMasks256(t *teddyTables, b []byte, masks []uint32) (n int)
//
// Y0..Y7: the low and high nibbles of fingerprint bytes 0..3 of the block;
// Y14: the nibble mask 0x0f; Y15: the buckets of every set of tables that
// accept a position, ORed; Y11: zero. For each block of 32 positions at
// b[DX:], fingerprint byte j is the vector loaded from b[DX+j:] and split
// into nibbles once; then for each set of tables (t, t.next, ...) the
// nibbles index its tables and the bucket sets are ANDed over j. A nonzero
// byte is a surviving position; the block's mask has its bit set.
TEXT ·teddyMasks256(SB), NOSPLIT, $0-64
	MOVQ t+0(FP), AX
	MOVQ b_base+8(FP), SI
	MOVQ b_len+16(FP), CX
	MOVQ masks_base+32(FP), DI
	MOVQ masks_len+40(FP), R8
	VMOVDQU 256(AX), Y14
	VPXOR Y11, Y11, Y11
	XORQ R9, R9 // blocks done
	SUBQ $35, CX // a block may start at len-35 at the latest
	JL done
	XORQ DX, DX // block start

loop:
	CMPQ R9, R8
	JGE done
	CMPQ DX, CX
	JG done

	VMOVDQU (SI)(DX*1), Y0
	VPSRLW $4, Y0, Y1
	VPAND Y14, Y0, Y0
	VPAND Y14, Y1, Y1
	VMOVDQU 1(SI)(DX*1), Y2
	VPSRLW $4, Y2, Y3
	VPAND Y14, Y2, Y2
	VPAND Y14, Y3, Y3
	VMOVDQU 2(SI)(DX*1), Y4
	VPSRLW $4, Y4, Y5
	VPAND Y14, Y4, Y4
	VPAND Y14, Y5, Y5
	VMOVDQU 3(SI)(DX*1), Y6
	VPSRLW $4, Y6, Y7
	VPAND Y14, Y6, Y6
	VPAND Y14, Y7, Y7
	VPXOR Y15, Y15, Y15
	MOVQ AX, R10

tables:
	CMPB 288(R10), $0
	JEQ exact
	// A set of case-folded fingerprints (they come last): the high
	// nibbles of the input folded to lower case, in place.
	VMOVDQU 288(R10), Y8
	VPOR Y8, Y1, Y1
	VPOR Y8, Y3, Y3
	VPOR Y8, Y5, Y5
	VPOR Y8, Y7, Y7

exact:
	VMOVDQU 0(R10), Y8
	VPSHUFB Y0, Y8, Y8
	VMOVDQU 128(R10), Y9
	VPSHUFB Y1, Y9, Y9
	VPAND Y8, Y9, Y10

	VMOVDQU 32(R10), Y8
	VPSHUFB Y2, Y8, Y8
	VMOVDQU 160(R10), Y9
	VPSHUFB Y3, Y9, Y9
	VPAND Y8, Y9, Y8
	VPAND Y8, Y10, Y10

	VMOVDQU 64(R10), Y8
	VPSHUFB Y4, Y8, Y8
	VMOVDQU 192(R10), Y9
	VPSHUFB Y5, Y9, Y9
	VPAND Y8, Y9, Y8
	VPAND Y8, Y10, Y10

	VMOVDQU 96(R10), Y8
	VPSHUFB Y6, Y8, Y8
	VMOVDQU 224(R10), Y9
	VPSHUFB Y7, Y9, Y9
	VPAND Y8, Y9, Y8
	VPAND Y8, Y10, Y10

	VPOR Y10, Y15, Y15
	MOVQ 320(R10), R10
	TESTQ R10, R10
	JNZ tables

	VPCMPEQB Y11, Y15, Y15
	VPMOVMSKB Y15, BX
	NOTL BX
	MOVL BX, (DI)(R9*4)
	INCQ R9
	ADDQ $32, DX
	JMP loop

done:
	MOVQ R9, n+56(FP)
	VZEROUPPER
	RET

// func teddyMasks512(t *teddyTables, b []byte, masks []uint32) (n int)
//
// teddyMasks256 with AVX-512 (BW): 64 positions per step, two masks stored
// at once; it stops when fewer than two masks are left or the next 64
// positions would read past b (they need 67 bytes), and returns the number
// of masks stored, always even. Each 16-byte table is broadcast to the four
// lanes of a 512-bit register. Z0..Z7: the nibbles of fingerprint bytes
// 0..3; Z14: the nibble mask; Z15: the buckets that accept, ORed over sets.
TEXT ·teddyMasks512(SB), NOSPLIT, $0-64
	MOVQ t+0(FP), AX
	MOVQ b_base+8(FP), SI
	MOVQ b_len+16(FP), CX
	MOVQ masks_base+32(FP), DI
	MOVQ masks_len+40(FP), R8
	VBROADCASTI32X4 256(AX), Z14
	XORQ R9, R9 // masks stored
	SUBQ $1, R8 // a step stores masks R9 and R9+1
	SUBQ $67, CX // a step may start at len-67 at the latest
	JL done512
	XORQ DX, DX // step start

loop512:
	CMPQ R9, R8
	JGE done512
	CMPQ DX, CX
	JG done512

	VMOVDQU64 (SI)(DX*1), Z0
	VPSRLW $4, Z0, Z1
	VPANDQ Z14, Z0, Z0
	VPANDQ Z14, Z1, Z1
	VMOVDQU64 1(SI)(DX*1), Z2
	VPSRLW $4, Z2, Z3
	VPANDQ Z14, Z2, Z2
	VPANDQ Z14, Z3, Z3
	VMOVDQU64 2(SI)(DX*1), Z4
	VPSRLW $4, Z4, Z5
	VPANDQ Z14, Z4, Z4
	VPANDQ Z14, Z5, Z5
	VMOVDQU64 3(SI)(DX*1), Z6
	VPSRLW $4, Z6, Z7
	VPANDQ Z14, Z6, Z6
	VPANDQ Z14, Z7, Z7
	VPXORQ Z15, Z15, Z15
	MOVQ AX, R10

tables512:
	CMPB 288(R10), $0
	JEQ exact512
	VBROADCASTI32X4 288(R10), Z8
	VPORQ Z8, Z1, Z1
	VPORQ Z8, Z3, Z3
	VPORQ Z8, Z5, Z5
	VPORQ Z8, Z7, Z7

exact512:
	VBROADCASTI32X4 0(R10), Z8
	VPSHUFB Z0, Z8, Z8
	VBROADCASTI32X4 128(R10), Z9
	VPSHUFB Z1, Z9, Z9
	VPANDQ Z8, Z9, Z10

	VBROADCASTI32X4 32(R10), Z8
	VPSHUFB Z2, Z8, Z8
	VBROADCASTI32X4 160(R10), Z9
	VPSHUFB Z3, Z9, Z9
	VPTERNLOGQ $0x80, Z8, Z9, Z10 // Z10 &= Z8 & Z9

	VBROADCASTI32X4 64(R10), Z8
	VPSHUFB Z4, Z8, Z8
	VBROADCASTI32X4 192(R10), Z9
	VPSHUFB Z5, Z9, Z9
	VPTERNLOGQ $0x80, Z8, Z9, Z10

	VBROADCASTI32X4 96(R10), Z8
	VPSHUFB Z6, Z8, Z8
	VBROADCASTI32X4 224(R10), Z9
	VPSHUFB Z7, Z9, Z9
	VPTERNLOGQ $0x80, Z8, Z9, Z10

	VPORQ Z10, Z15, Z15
	MOVQ 320(R10), R10
	TESTQ R10, R10
	JNZ tables512

	VPTESTMB Z15, Z15, K1
	KMOVQ K1, BX
	MOVQ BX, (DI)(R9*4)
	ADDQ $2, R9
	ADDQ $64, DX
	JMP loop512

done512:
	MOVQ R9, n+56(FP)
	VZEROUPPER
	RET
