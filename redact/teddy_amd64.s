#include "textflag.h"

// func teddyMasks(t *teddyTables, b []byte, masks []uint32) (n int)
//
// Y0..Y5: the low and high nibbles of fingerprint bytes 0, 1, 2 of the
// block; Y14: the nibble mask 0x0f; Y7: the buckets of every set of tables
// that accept a position, ORed. For each block of 32 positions at b[DX:],
// fingerprint byte j is the vector loaded from b[DX+j:] and split into
// nibbles once; then for each set of tables (t, t.next, ...: lo at 0, 32,
// 64, hi at 96, 128, 160, next at 224) the nibbles index its tables and the
// bucket sets are ANDed over j. A nonzero byte is a surviving position; the
// block's mask has its bit set.
TEXT ·teddyMasks(SB), NOSPLIT, $0-64
	MOVQ t+0(FP), AX
	MOVQ b_base+8(FP), SI
	MOVQ b_len+16(FP), CX
	MOVQ masks_base+32(FP), DI
	MOVQ masks_len+40(FP), R8
	VMOVDQU 192(AX), Y14
	VPXOR Y6, Y6, Y6
	XORQ R9, R9 // blocks done
	SUBQ $34, CX // a block may start at len-34 at the latest
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
	VPXOR Y7, Y7, Y7
	MOVQ AX, R10

tables:
	VMOVDQU 0(R10), Y8
	VPSHUFB Y0, Y8, Y8
	VMOVDQU 96(R10), Y9
	VPSHUFB Y1, Y9, Y9
	VPAND Y8, Y9, Y10

	VMOVDQU 32(R10), Y8
	VPSHUFB Y2, Y8, Y8
	VMOVDQU 128(R10), Y9
	VPSHUFB Y3, Y9, Y9
	VPAND Y8, Y9, Y8
	VPAND Y8, Y10, Y10

	VMOVDQU 64(R10), Y8
	VPSHUFB Y4, Y8, Y8
	VMOVDQU 160(R10), Y9
	VPSHUFB Y5, Y9, Y9
	VPAND Y8, Y9, Y8
	VPAND Y8, Y10, Y10

	VPOR Y10, Y7, Y7
	MOVQ 224(R10), R10
	TESTQ R10, R10
	JNZ tables

	VPCMPEQB Y6, Y7, Y7
	VPMOVMSKB Y7, BX
	NOTL BX
	MOVL BX, (DI)(R9*4)
	INCQ R9
	ADDQ $32, DX
	JMP loop

done:
	MOVQ R9, n+56(FP)
	VZEROUPPER
	RET
