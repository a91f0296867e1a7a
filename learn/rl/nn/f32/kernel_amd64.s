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
	// Start fetching the C tile now; it is read only after the k loop.
	MOVQ       DX, R11
	PREFETCHT0 (R11)
	PREFETCHT0 60(R11)
	ADDQ       R8, R11
	PREFETCHT0 (R11)
	PREFETCHT0 60(R11)
	ADDQ       R8, R11
	PREFETCHT0 (R11)
	PREFETCHT0 60(R11)
	ADDQ       R8, R11
	PREFETCHT0 (R11)
	PREFETCHT0 60(R11)
	ADDQ       R8, R11
	PREFETCHT0 (R11)
	PREFETCHT0 60(R11)
	ADDQ       R8, R11
	PREFETCHT0 (R11)
	PREFETCHT0 60(R11)
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

// Constants of the float32 tanh (tanh.go), each broadcast to 8 lanes:
// |x| mask, tiny, ±clamp, the numerator's and the denominator's
// coefficients from the highest degree down, and 1.
DATA tanhc<>+0(SB)/4, $0x7fffffff
DATA tanhc<>+4(SB)/4, $0x7fffffff
DATA tanhc<>+8(SB)/4, $0x7fffffff
DATA tanhc<>+12(SB)/4, $0x7fffffff
DATA tanhc<>+16(SB)/4, $0x7fffffff
DATA tanhc<>+20(SB)/4, $0x7fffffff
DATA tanhc<>+24(SB)/4, $0x7fffffff
DATA tanhc<>+28(SB)/4, $0x7fffffff
DATA tanhc<>+32(SB)/4, $0x39d1b717
DATA tanhc<>+36(SB)/4, $0x39d1b717
DATA tanhc<>+40(SB)/4, $0x39d1b717
DATA tanhc<>+44(SB)/4, $0x39d1b717
DATA tanhc<>+48(SB)/4, $0x39d1b717
DATA tanhc<>+52(SB)/4, $0x39d1b717
DATA tanhc<>+56(SB)/4, $0x39d1b717
DATA tanhc<>+60(SB)/4, $0x39d1b717
DATA tanhc<>+64(SB)/4, $0x40fcf84f
DATA tanhc<>+68(SB)/4, $0x40fcf84f
DATA tanhc<>+72(SB)/4, $0x40fcf84f
DATA tanhc<>+76(SB)/4, $0x40fcf84f
DATA tanhc<>+80(SB)/4, $0x40fcf84f
DATA tanhc<>+84(SB)/4, $0x40fcf84f
DATA tanhc<>+88(SB)/4, $0x40fcf84f
DATA tanhc<>+92(SB)/4, $0x40fcf84f
DATA tanhc<>+96(SB)/4, $0xc0fcf84f
DATA tanhc<>+100(SB)/4, $0xc0fcf84f
DATA tanhc<>+104(SB)/4, $0xc0fcf84f
DATA tanhc<>+108(SB)/4, $0xc0fcf84f
DATA tanhc<>+112(SB)/4, $0xc0fcf84f
DATA tanhc<>+116(SB)/4, $0xc0fcf84f
DATA tanhc<>+120(SB)/4, $0xc0fcf84f
DATA tanhc<>+124(SB)/4, $0xc0fcf84f
DATA tanhc<>+128(SB)/4, $0xa59f25c0
DATA tanhc<>+132(SB)/4, $0xa59f25c0
DATA tanhc<>+136(SB)/4, $0xa59f25c0
DATA tanhc<>+140(SB)/4, $0xa59f25c0
DATA tanhc<>+144(SB)/4, $0xa59f25c0
DATA tanhc<>+148(SB)/4, $0xa59f25c0
DATA tanhc<>+152(SB)/4, $0xa59f25c0
DATA tanhc<>+156(SB)/4, $0xa59f25c0
DATA tanhc<>+160(SB)/4, $0x2a61337e
DATA tanhc<>+164(SB)/4, $0x2a61337e
DATA tanhc<>+168(SB)/4, $0x2a61337e
DATA tanhc<>+172(SB)/4, $0x2a61337e
DATA tanhc<>+176(SB)/4, $0x2a61337e
DATA tanhc<>+180(SB)/4, $0x2a61337e
DATA tanhc<>+184(SB)/4, $0x2a61337e
DATA tanhc<>+188(SB)/4, $0x2a61337e
DATA tanhc<>+192(SB)/4, $0xaebd37ff
DATA tanhc<>+196(SB)/4, $0xaebd37ff
DATA tanhc<>+200(SB)/4, $0xaebd37ff
DATA tanhc<>+204(SB)/4, $0xaebd37ff
DATA tanhc<>+208(SB)/4, $0xaebd37ff
DATA tanhc<>+212(SB)/4, $0xaebd37ff
DATA tanhc<>+216(SB)/4, $0xaebd37ff
DATA tanhc<>+220(SB)/4, $0xaebd37ff
DATA tanhc<>+224(SB)/4, $0x335c0041
DATA tanhc<>+228(SB)/4, $0x335c0041
DATA tanhc<>+232(SB)/4, $0x335c0041
DATA tanhc<>+236(SB)/4, $0x335c0041
DATA tanhc<>+240(SB)/4, $0x335c0041
DATA tanhc<>+244(SB)/4, $0x335c0041
DATA tanhc<>+248(SB)/4, $0x335c0041
DATA tanhc<>+252(SB)/4, $0x335c0041
DATA tanhc<>+256(SB)/4, $0x3779434a
DATA tanhc<>+260(SB)/4, $0x3779434a
DATA tanhc<>+264(SB)/4, $0x3779434a
DATA tanhc<>+268(SB)/4, $0x3779434a
DATA tanhc<>+272(SB)/4, $0x3779434a
DATA tanhc<>+276(SB)/4, $0x3779434a
DATA tanhc<>+280(SB)/4, $0x3779434a
DATA tanhc<>+284(SB)/4, $0x3779434a
DATA tanhc<>+288(SB)/4, $0x3a270ded
DATA tanhc<>+292(SB)/4, $0x3a270ded
DATA tanhc<>+296(SB)/4, $0x3a270ded
DATA tanhc<>+300(SB)/4, $0x3a270ded
DATA tanhc<>+304(SB)/4, $0x3a270ded
DATA tanhc<>+308(SB)/4, $0x3a270ded
DATA tanhc<>+312(SB)/4, $0x3a270ded
DATA tanhc<>+316(SB)/4, $0x3a270ded
DATA tanhc<>+320(SB)/4, $0x3ba059dc
DATA tanhc<>+324(SB)/4, $0x3ba059dc
DATA tanhc<>+328(SB)/4, $0x3ba059dc
DATA tanhc<>+332(SB)/4, $0x3ba059dc
DATA tanhc<>+336(SB)/4, $0x3ba059dc
DATA tanhc<>+340(SB)/4, $0x3ba059dc
DATA tanhc<>+344(SB)/4, $0x3ba059dc
DATA tanhc<>+348(SB)/4, $0x3ba059dc
DATA tanhc<>+352(SB)/4, $0x35a0d3d8
DATA tanhc<>+356(SB)/4, $0x35a0d3d8
DATA tanhc<>+360(SB)/4, $0x35a0d3d8
DATA tanhc<>+364(SB)/4, $0x35a0d3d8
DATA tanhc<>+368(SB)/4, $0x35a0d3d8
DATA tanhc<>+372(SB)/4, $0x35a0d3d8
DATA tanhc<>+376(SB)/4, $0x35a0d3d8
DATA tanhc<>+380(SB)/4, $0x35a0d3d8
DATA tanhc<>+384(SB)/4, $0x38f895d6
DATA tanhc<>+388(SB)/4, $0x38f895d6
DATA tanhc<>+392(SB)/4, $0x38f895d6
DATA tanhc<>+396(SB)/4, $0x38f895d6
DATA tanhc<>+400(SB)/4, $0x38f895d6
DATA tanhc<>+404(SB)/4, $0x38f895d6
DATA tanhc<>+408(SB)/4, $0x38f895d6
DATA tanhc<>+412(SB)/4, $0x38f895d6
DATA tanhc<>+416(SB)/4, $0x3b14aa05
DATA tanhc<>+420(SB)/4, $0x3b14aa05
DATA tanhc<>+424(SB)/4, $0x3b14aa05
DATA tanhc<>+428(SB)/4, $0x3b14aa05
DATA tanhc<>+432(SB)/4, $0x3b14aa05
DATA tanhc<>+436(SB)/4, $0x3b14aa05
DATA tanhc<>+440(SB)/4, $0x3b14aa05
DATA tanhc<>+444(SB)/4, $0x3b14aa05
DATA tanhc<>+448(SB)/4, $0x3ba059dd
DATA tanhc<>+452(SB)/4, $0x3ba059dd
DATA tanhc<>+456(SB)/4, $0x3ba059dd
DATA tanhc<>+460(SB)/4, $0x3ba059dd
DATA tanhc<>+464(SB)/4, $0x3ba059dd
DATA tanhc<>+468(SB)/4, $0x3ba059dd
DATA tanhc<>+472(SB)/4, $0x3ba059dd
DATA tanhc<>+476(SB)/4, $0x3ba059dd
DATA tanhc<>+480(SB)/4, $0x3f800000
DATA tanhc<>+484(SB)/4, $0x3f800000
DATA tanhc<>+488(SB)/4, $0x3f800000
DATA tanhc<>+492(SB)/4, $0x3f800000
DATA tanhc<>+496(SB)/4, $0x3f800000
DATA tanhc<>+500(SB)/4, $0x3f800000
DATA tanhc<>+504(SB)/4, $0x3f800000
DATA tanhc<>+508(SB)/4, $0x3f800000
GLOBL tanhc<>(SB), RODATA|NOPTR, $512

// func tanhAVX2(rows, cols, ld int, x *float32)
//
// x = Tanh32(x) on columns [0, cols) (a multiple of 8) of the rows×ld
// matrix x, with tanh.go's float32 operations in its order (separate
// multiplies and adds, no FMA; |x| < tiny selects x, the clamps return x
// for NaN), so the result is Tanh32's bit for bit. Two vectors are
// evaluated interleaved: each is one long dependency chain (Horner's
// rule, then a division), and two chains keep the FP pipes busier.
TEXT ·tanhAVX2(SB), NOSPLIT, $0-32
	MOVQ    rows+0(FP), BX
	MOVQ    cols+8(FP), CX
	MOVQ    ld+16(FP), R8
	SHLQ    $2, R8
	MOVQ    x+24(FP), DI
	SHRQ    $3, CX
	JZ      tanhdone
	TESTQ   BX, BX
	JZ      tanhdone
	VMOVUPS tanhc<>+0(SB), Y15
	VMOVUPS tanhc<>+32(SB), Y12
	VMOVUPS tanhc<>+64(SB), Y14
	VMOVUPS tanhc<>+96(SB), Y13

tanhrow:
	MOVQ DI, R9
	MOVQ CX, AX

tanhpair:
	CMPQ AX, $2
	JLT  tanhsingle
	VMOVUPS (R9), Y0
	VMOVUPS 32(R9), Y6
	VANDPS  Y15, Y0, Y1
	VANDPS  Y15, Y6, Y7
	VCMPPS  $1, Y12, Y1, Y1
	VCMPPS  $1, Y12, Y7, Y7
	VMINPS  Y0, Y14, Y2
	VMINPS  Y6, Y14, Y8
	VMAXPS  Y2, Y13, Y2
	VMAXPS  Y8, Y13, Y8
	VMULPS  Y2, Y2, Y3
	VMULPS  Y8, Y8, Y9
	VMULPS  tanhc<>+128(SB), Y3, Y4
	VMULPS  tanhc<>+128(SB), Y9, Y10
	VADDPS  tanhc<>+160(SB), Y4, Y4
	VADDPS  tanhc<>+160(SB), Y10, Y10
	VMULPS  Y3, Y4, Y4
	VMULPS  Y9, Y10, Y10
	VADDPS  tanhc<>+192(SB), Y4, Y4
	VADDPS  tanhc<>+192(SB), Y10, Y10
	VMULPS  Y3, Y4, Y4
	VMULPS  Y9, Y10, Y10
	VADDPS  tanhc<>+224(SB), Y4, Y4
	VADDPS  tanhc<>+224(SB), Y10, Y10
	VMULPS  Y3, Y4, Y4
	VMULPS  Y9, Y10, Y10
	VADDPS  tanhc<>+256(SB), Y4, Y4
	VADDPS  tanhc<>+256(SB), Y10, Y10
	VMULPS  Y3, Y4, Y4
	VMULPS  Y9, Y10, Y10
	VADDPS  tanhc<>+288(SB), Y4, Y4
	VADDPS  tanhc<>+288(SB), Y10, Y10
	VMULPS  Y3, Y4, Y4
	VMULPS  Y9, Y10, Y10
	VADDPS  tanhc<>+320(SB), Y4, Y4
	VADDPS  tanhc<>+320(SB), Y10, Y10
	VMULPS  Y2, Y4, Y4
	VMULPS  Y8, Y10, Y10
	VMULPS  tanhc<>+352(SB), Y3, Y5
	VMULPS  tanhc<>+352(SB), Y9, Y11
	VADDPS  tanhc<>+384(SB), Y5, Y5
	VADDPS  tanhc<>+384(SB), Y11, Y11
	VMULPS  Y3, Y5, Y5
	VMULPS  Y9, Y11, Y11
	VADDPS  tanhc<>+416(SB), Y5, Y5
	VADDPS  tanhc<>+416(SB), Y11, Y11
	VMULPS  Y3, Y5, Y5
	VMULPS  Y9, Y11, Y11
	VADDPS  tanhc<>+448(SB), Y5, Y5
	VADDPS  tanhc<>+448(SB), Y11, Y11
	VDIVPS  Y5, Y4, Y4
	VDIVPS  Y11, Y10, Y10
	VBLENDVPS Y1, Y0, Y4, Y4
	VBLENDVPS Y7, Y6, Y10, Y10
	VMOVUPS Y4, (R9)
	VMOVUPS Y10, 32(R9)
	ADDQ    $64, R9
	SUBQ    $2, AX
	JMP     tanhpair

tanhsingle:
	TESTQ AX, AX
	JZ    tanhnext
	VMOVUPS (R9), Y0
	VANDPS  Y15, Y0, Y1
	VCMPPS  $1, Y12, Y1, Y1
	VMINPS  Y0, Y14, Y2
	VMAXPS  Y2, Y13, Y2
	VMULPS  Y2, Y2, Y3
	VMULPS  tanhc<>+128(SB), Y3, Y4
	VADDPS  tanhc<>+160(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  tanhc<>+192(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  tanhc<>+224(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  tanhc<>+256(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  tanhc<>+288(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  tanhc<>+320(SB), Y4, Y4
	VMULPS  Y2, Y4, Y4
	VMULPS  tanhc<>+352(SB), Y3, Y5
	VADDPS  tanhc<>+384(SB), Y5, Y5
	VMULPS  Y3, Y5, Y5
	VADDPS  tanhc<>+416(SB), Y5, Y5
	VMULPS  Y3, Y5, Y5
	VADDPS  tanhc<>+448(SB), Y5, Y5
	VDIVPS  Y5, Y4, Y4
	VBLENDVPS Y1, Y0, Y4, Y4
	VMOVUPS Y4, (R9)

tanhnext:
	ADDQ R8, DI
	DECQ BX
	JNZ  tanhrow

tanhdone:
	VZEROUPPER
	RET

// func tanhBackAVX2(rows, cols, ld int, dz, y, gb *float32)
//
// For columns [0, cols) (a multiple of 8) of the rows×ld matrices dz and
// y: dz = dz·(1 − y·y), and gb[j] += dz[r][j] row by row (skipped when gb
// is nil), in tanhBackGo's order and roundings.
TEXT ·tanhBackAVX2(SB), NOSPLIT, $0-48
	MOVQ    rows+0(FP), BX
	MOVQ    cols+8(FP), CX
	MOVQ    ld+16(FP), R8
	SHLQ    $2, R8
	MOVQ    dz+24(FP), DI
	MOVQ    y+32(FP), SI
	MOVQ    gb+40(FP), DX
	SHRQ    $3, CX
	VMOVUPS tanhc<>+480(SB), Y15

tbrow:
	MOVQ DI, R9
	MOVQ SI, R10
	MOVQ DX, R11
	MOVQ CX, AX

tbcol:
	VMOVUPS (R10), Y0
	VMULPS  Y0, Y0, Y1
	VSUBPS  Y1, Y15, Y1 // 1 − y²
	VMULPS  (R9), Y1, Y2
	VMOVUPS Y2, (R9)
	TESTQ   R11, R11
	JZ      tbnext
	VADDPS  (R11), Y2, Y3
	VMOVUPS Y3, (R11)
	ADDQ    $32, R11

tbnext:
	ADDQ $32, R9
	ADDQ $32, R10
	DECQ AX
	JNZ  tbcol
	ADDQ R8, DI
	ADDQ R8, SI
	DECQ BX
	JNZ  tbrow
	VZEROUPPER
	RET
