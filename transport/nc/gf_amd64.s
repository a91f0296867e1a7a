#include "textflag.h"

// func mulAddAVX2(dst, src *byte, n int, tbl *[32]byte)
TEXT ·mulAddAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ tbl+24(FP), AX
	VBROADCASTI128 (AX), Y0   // c * low nibble, in both lanes
	VBROADCASTI128 16(AX), Y1 // c * high nibble
	MOVQ $0x0f0f0f0f0f0f0f0f, BX
	MOVQ BX, X2
	VPBROADCASTQ X2, Y2

loop:
	VMOVDQU (SI), Y3
	VPSRLQ  $4, Y3, Y4
	VPAND   Y2, Y3, Y3
	VPAND   Y2, Y4, Y4
	VPSHUFB Y3, Y0, Y5
	VPSHUFB Y4, Y1, Y6
	VPXOR   Y5, Y6, Y5
	VPXOR   (DI), Y5, Y5
	VMOVDQU Y5, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $32, CX
	JNZ     loop
	VZEROUPPER
	RET
