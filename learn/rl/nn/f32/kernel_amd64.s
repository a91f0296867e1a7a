//go:build amd64 && !purego

#include "textflag.h"

// func kernelAVX2(k int, a, b, c *float32, ldc int, bias *float32, flags int)
//
// C[0:6, 0:16] += A·B for a packed 6×k micro-panel A (column p at a+24p)
// and k×16 micro-panel B (row p at b+64p); then, if bias != nil, every row
// gets bias[0:16] added, and if flags&1, ReLU (VMAXPS x, 0: x > 0 ? x : +0).
// With flags&2 the tile is overwritten (C = A·B, C not read).
// Accumulators: Y4..Y15 (row i in Y(4+2i), Y(5+2i)); Y0, Y1 hold a row of
// B, Y2, Y3 broadcasts of A. Two FMA ports need ≥ 8 independent chains to
// hide the 4-cycle latency; twelve keep both busy.
TEXT ·kernelAVX2(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	MOVQ CX, AX
	SHRQ $1, AX
	JZ   tail

loop2:
	VMOVUPS      (DI), Y0
	VMOVUPS      32(DI), Y1
	VBROADCASTSS (SI), Y2
	VBROADCASTSS 4(SI), Y3
	VFMADD231PS  Y0, Y2, Y4
	VFMADD231PS  Y1, Y2, Y5
	VFMADD231PS  Y0, Y3, Y6
	VFMADD231PS  Y1, Y3, Y7
	VBROADCASTSS 8(SI), Y2
	VBROADCASTSS 12(SI), Y3
	VFMADD231PS  Y0, Y2, Y8
	VFMADD231PS  Y1, Y2, Y9
	VFMADD231PS  Y0, Y3, Y10
	VFMADD231PS  Y1, Y3, Y11
	VBROADCASTSS 16(SI), Y2
	VBROADCASTSS 20(SI), Y3
	VFMADD231PS  Y0, Y2, Y12
	VFMADD231PS  Y1, Y2, Y13
	VFMADD231PS  Y0, Y3, Y14
	VFMADD231PS  Y1, Y3, Y15

	VMOVUPS      64(DI), Y0
	VMOVUPS      96(DI), Y1
	VBROADCASTSS 24(SI), Y2
	VBROADCASTSS 28(SI), Y3
	VFMADD231PS  Y0, Y2, Y4
	VFMADD231PS  Y1, Y2, Y5
	VFMADD231PS  Y0, Y3, Y6
	VFMADD231PS  Y1, Y3, Y7
	VBROADCASTSS 32(SI), Y2
	VBROADCASTSS 36(SI), Y3
	VFMADD231PS  Y0, Y2, Y8
	VFMADD231PS  Y1, Y2, Y9
	VFMADD231PS  Y0, Y3, Y10
	VFMADD231PS  Y1, Y3, Y11
	VBROADCASTSS 40(SI), Y2
	VBROADCASTSS 44(SI), Y3
	VFMADD231PS  Y0, Y2, Y12
	VFMADD231PS  Y1, Y2, Y13
	VFMADD231PS  Y0, Y3, Y14
	VFMADD231PS  Y1, Y3, Y15
	ADDQ         $48, SI
	ADDQ         $128, DI
	DECQ         AX
	JNZ          loop2

tail:
	ANDQ $1, CX
	JZ   store
	VMOVUPS      (DI), Y0
	VMOVUPS      32(DI), Y1
	VBROADCASTSS (SI), Y2
	VBROADCASTSS 4(SI), Y3
	VFMADD231PS  Y0, Y2, Y4
	VFMADD231PS  Y1, Y2, Y5
	VFMADD231PS  Y0, Y3, Y6
	VFMADD231PS  Y1, Y3, Y7
	VBROADCASTSS 8(SI), Y2
	VBROADCASTSS 12(SI), Y3
	VFMADD231PS  Y0, Y2, Y8
	VFMADD231PS  Y1, Y2, Y9
	VFMADD231PS  Y0, Y3, Y10
	VFMADD231PS  Y1, Y3, Y11
	VBROADCASTSS 16(SI), Y2
	VBROADCASTSS 20(SI), Y3
	VFMADD231PS  Y0, Y2, Y12
	VFMADD231PS  Y1, Y2, Y13
	VFMADD231PS  Y0, Y3, Y14
	VFMADD231PS  Y1, Y3, Y15

store:
	// C + acc, in the order the Go edge-tile code uses; flags&2: C = acc.
	MOVQ  flags+48(FP), R10
	TESTQ $2, R10
	JNZ   addbias
	MOVQ   DX, R11
	VADDPS (R11), Y4, Y4
	VADDPS 32(R11), Y5, Y5
	ADDQ   R8, R11
	VADDPS (R11), Y6, Y6
	VADDPS 32(R11), Y7, Y7
	ADDQ   R8, R11
	VADDPS (R11), Y8, Y8
	VADDPS 32(R11), Y9, Y9
	ADDQ   R8, R11
	VADDPS (R11), Y10, Y10
	VADDPS 32(R11), Y11, Y11
	ADDQ   R8, R11
	VADDPS (R11), Y12, Y12
	VADDPS 32(R11), Y13, Y13
	ADDQ   R8, R11
	VADDPS (R11), Y14, Y14
	VADDPS 32(R11), Y15, Y15

addbias:
	MOVQ  bias+40(FP), R9
	TESTQ R9, R9
	JZ    nobias
	VMOVUPS (R9), Y0
	VMOVUPS 32(R9), Y1
	VADDPS  Y0, Y4, Y4
	VADDPS  Y1, Y5, Y5
	VADDPS  Y0, Y6, Y6
	VADDPS  Y1, Y7, Y7
	VADDPS  Y0, Y8, Y8
	VADDPS  Y1, Y9, Y9
	VADDPS  Y0, Y10, Y10
	VADDPS  Y1, Y11, Y11
	VADDPS  Y0, Y12, Y12
	VADDPS  Y1, Y13, Y13
	VADDPS  Y0, Y14, Y14
	VADDPS  Y1, Y15, Y15

nobias:
	TESTQ $1, R10
	JZ    write
	VXORPS Y0, Y0, Y0
	VMAXPS Y0, Y4, Y4
	VMAXPS Y0, Y5, Y5
	VMAXPS Y0, Y6, Y6
	VMAXPS Y0, Y7, Y7
	VMAXPS Y0, Y8, Y8
	VMAXPS Y0, Y9, Y9
	VMAXPS Y0, Y10, Y10
	VMAXPS Y0, Y11, Y11
	VMAXPS Y0, Y12, Y12
	VMAXPS Y0, Y13, Y13
	VMAXPS Y0, Y14, Y14
	VMAXPS Y0, Y15, Y15

write:
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y12, (DX)
	VMOVUPS Y13, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y14, (DX)
	VMOVUPS Y15, 32(DX)
	VZEROUPPER
	RET

// func axpyAVX2(n int, alpha float32, x, y *float32)
// y[0:n] += alpha·x[0:n], the product rounded before the add (no FMA), so
// the result is axpyGo's and gonum's AxpyUnitary's bit for bit.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	MOVQ         n+0(FP), CX
	VBROADCASTSS alpha+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         y+24(FP), DI
	MOVQ         CX, AX
	SHRQ         $5, AX
	JZ           axpy8

axpy32:
	VMOVUPS     (DI), Y1
	VMOVUPS     32(DI), Y2
	VMOVUPS     64(DI), Y3
	VMOVUPS     96(DI), Y4
	VMULPS      (SI), Y0, Y5
	VMULPS      32(SI), Y0, Y6
	VMULPS      64(SI), Y0, Y7
	VMULPS      96(SI), Y0, Y8
	VADDPS      Y5, Y1, Y1
	VADDPS      Y6, Y2, Y2
	VADDPS      Y7, Y3, Y3
	VADDPS      Y8, Y4, Y4
	VMOVUPS     Y1, (DI)
	VMOVUPS     Y2, 32(DI)
	VMOVUPS     Y3, 64(DI)
	VMOVUPS     Y4, 96(DI)
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        AX
	JNZ         axpy32

axpy8:
	MOVQ CX, AX
	ANDQ $31, AX
	SHRQ $3, AX
	JZ   axpy1

axpy8loop:
	VMOVUPS     (DI), Y1
	VMULPS      (SI), Y0, Y5
	VADDPS      Y5, Y1, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        AX
	JNZ         axpy8loop

axpy1:
	ANDQ $7, CX
	JZ   axpydone

axpy1loop:
	VMOVSS      (DI), X1
	VMULSS      (SI), X0, X5
	VADDSS      X5, X1, X1
	VMOVSS      X1, (DI)
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JNZ         axpy1loop

axpydone:
	VZEROUPPER
	RET

// func dotAVX2(n int, x, y *float32) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   CX, AX
	SHRQ   $5, AX
	JZ     dot8

dot32:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        AX
	JNZ         dot32

dot8:
	MOVQ CX, AX
	ANDQ $31, AX
	SHRQ $3, AX
	JZ   dotred

dot8loop:
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        AX
	JNZ         dot8loop

dotred:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	ANDQ         $7, CX
	JZ           dotdone

dot1loop:
	VMOVSS      (SI), X4
	VFMADD231SS (DI), X4, X0
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JNZ         dot1loop

dotdone:
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func scaleAVX2(n int, alpha float32, x *float32)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-24
	MOVQ         n+0(FP), CX
	VBROADCASTSS alpha+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         CX, AX
	SHRQ         $3, AX
	JZ           scale1

scale8:
	VMULPS  (SI), Y0, Y1
	VMOVUPS Y1, (SI)
	ADDQ    $32, SI
	DECQ    AX
	JNZ     scale8

scale1:
	ANDQ $7, CX
	JZ   scaledone

scale1loop:
	VMULSS (SI), X0, X1
	VMOVSS X1, (SI)
	ADDQ   $4, SI
	DECQ   CX
	JNZ    scale1loop

scaledone:
	VZEROUPPER
	RET

// func adamAVX2(n int, k *adamConst, p, gr, m, v *float32)
//
// n must be a multiple of 8. The operations and their order are adamGo's:
// m' = b1·m + c1·g; v' = b2·v + (c2·g)·g; p -= (step·m') / (sqrt(v')·sq + eps),
// each rounded to float32 (no FMA), so results are bit-identical.
TEXT ·adamAVX2(SB), NOSPLIT, $0-48
	MOVQ         n+0(FP), CX
	MOVQ         k+8(FP), R9
	MOVQ         p+16(FP), DI
	MOVQ         gr+24(FP), SI
	MOVQ         m+32(FP), R10
	MOVQ         v+40(FP), R11
	VBROADCASTSS (R9), Y8
	VBROADCASTSS 4(R9), Y9
	VBROADCASTSS 8(R9), Y10
	VBROADCASTSS 12(R9), Y11
	VBROADCASTSS 16(R9), Y12
	VBROADCASTSS 20(R9), Y13
	VBROADCASTSS 24(R9), Y14
	SHRQ         $3, CX
	JZ           adamdone

adamloop:
	VMOVUPS (SI), Y0
	VMULPS  (R10), Y8, Y1
	VMULPS  Y0, Y9, Y2
	VADDPS  Y2, Y1, Y1
	VMOVUPS Y1, (R10)
	VMULPS  (R11), Y10, Y3
	VMULPS  Y0, Y11, Y4
	VMULPS  Y0, Y4, Y4
	VADDPS  Y4, Y3, Y3
	VMOVUPS Y3, (R11)
	VSQRTPS Y3, Y5
	VMULPS  Y13, Y5, Y5
	VADDPS  Y14, Y5, Y5
	VMULPS  Y1, Y12, Y6
	VDIVPS  Y5, Y6, Y6
	VMOVUPS (DI), Y7
	VSUBPS  Y6, Y7, Y7
	VMOVUPS Y7, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, R10
	ADDQ    $32, R11
	DECQ    CX
	JNZ     adamloop

adamdone:
	VZEROUPPER
	RET

// func polyakAVX2(n int, tau, u float32, target, source *float32)
// target = u·target + tau·source (n a multiple of 8; polyakGo's rounding).
TEXT ·polyakAVX2(SB), NOSPLIT, $0-32
	MOVQ         n+0(FP), CX
	VBROADCASTSS tau+8(FP), Y0
	VBROADCASTSS u+12(FP), Y1
	MOVQ         target+16(FP), DI
	MOVQ         source+24(FP), SI
	SHRQ         $3, CX
	JZ           polyakdone

polyakloop:
	VMULPS  (DI), Y1, Y2
	VMULPS  (SI), Y0, Y3
	VADDPS  Y3, Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     polyakloop

polyakdone:
	VZEROUPPER
	RET

// func reluBackAVX2(rows, cols, ld int, dz, y, gb *float32)
//
// For columns [0, cols) (a multiple of 8) of the rows×ld matrices dz and
// y: dz = y > 0 ? dz : 0, and gb[j] += dz[r][j] row by row (skipped when
// gb is nil), in reluBackGo's order.
TEXT ·reluBackAVX2(SB), NOSPLIT, $0-48
	MOVQ   rows+0(FP), BX
	MOVQ   cols+8(FP), CX
	MOVQ   ld+16(FP), R8
	SHLQ   $2, R8
	MOVQ   dz+24(FP), DI
	MOVQ   y+32(FP), SI
	MOVQ   gb+40(FP), DX
	SHRQ   $3, CX
	VXORPS Y15, Y15, Y15

relurow:
	MOVQ DI, R9
	MOVQ SI, R10
	MOVQ DX, R11
	MOVQ CX, AX

relucol:
	VMOVUPS (R10), Y0
	VCMPPS  $14, Y15, Y0, Y1 // Y1 = Y0 > 0 (GT_OS)
	VANDPS  (R9), Y1, Y2
	VMOVUPS Y2, (R9)
	TESTQ   R11, R11
	JZ      relunext
	VADDPS  (R11), Y2, Y3
	VMOVUPS Y3, (R11)
	ADDQ    $32, R11

relunext:
	ADDQ $32, R9
	ADDQ $32, R10
	DECQ AX
	JNZ  relucol
	ADDQ R8, DI
	ADDQ R8, SI
	DECQ BX
	JNZ  relurow
	VZEROUPPER
	RET
