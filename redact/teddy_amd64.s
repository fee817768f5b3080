#include "textflag.h"

// func teddyMasks(t *teddyTables, b []byte, masks []uint32) (n int)
//
// Y8..Y13: lo0 hi0 lo1 hi1 lo2 hi2; Y14: the nibble mask 0x0f.
// For each block of 32 positions at b[DX:], fingerprint byte j is the
// vector loaded from b[DX+j:]; its nibbles index the tables and the
// bucket sets are ANDed over j. A nonzero byte is a surviving position;
// the block's mask has its bit set.
TEXT ·teddyMasks(SB), NOSPLIT, $0-64
	MOVQ t+0(FP), AX
	MOVQ b_base+8(FP), SI
	MOVQ b_len+16(FP), CX
	MOVQ masks_base+32(FP), DI
	MOVQ masks_len+40(FP), R8
	VMOVDQU 0(AX), Y8
	VMOVDQU 96(AX), Y9
	VMOVDQU 32(AX), Y10
	VMOVDQU 128(AX), Y11
	VMOVDQU 64(AX), Y12
	VMOVDQU 160(AX), Y13
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
	VPSHUFB Y0, Y8, Y2
	VPSHUFB Y1, Y9, Y3
	VPAND Y2, Y3, Y7

	VMOVDQU 1(SI)(DX*1), Y0
	VPSRLW $4, Y0, Y1
	VPAND Y14, Y0, Y0
	VPAND Y14, Y1, Y1
	VPSHUFB Y0, Y10, Y2
	VPSHUFB Y1, Y11, Y3
	VPAND Y2, Y3, Y2
	VPAND Y2, Y7, Y7

	VMOVDQU 2(SI)(DX*1), Y0
	VPSRLW $4, Y0, Y1
	VPAND Y14, Y0, Y0
	VPAND Y14, Y1, Y1
	VPSHUFB Y0, Y12, Y2
	VPSHUFB Y1, Y13, Y3
	VPAND Y2, Y3, Y2
	VPAND Y2, Y7, Y7

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
