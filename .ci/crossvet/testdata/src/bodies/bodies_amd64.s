#include "textflag.h"

// func inAsm(x int) int
TEXT ·inAsm(SB), NOSPLIT, $0-16
	MOVQ	x+0(FP), AX
	MOVQ	AX, ret+8(FP)
	RET
