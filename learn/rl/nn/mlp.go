package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/cclab/cclab/learn/rl/nn/f32"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// Activation is an elementwise nonlinearity applied after a dense layer.
type Activation uint8

// Activations. The numeric values are part of the policy-file format.
const (
	Identity Activation = 0
	ReLU     Activation = 1
	Tanh     Activation = 2
)

// String names the activation.
func (a Activation) String() string {
	switch a {
	case Identity:
		return "identity"
	case ReLU:
		return "relu"
	case Tanh:
		return "tanh"
	}
	return fmt.Sprintf("Activation(%d)", a)
}

// Valid reports whether a is a known activation.
func (a Activation) Valid() bool { return a <= Tanh }

// MLP is a multilayer perceptron: dense layers y = act(x W + b) with W of
// shape in×out (row-major). Parameters and their gradients are stored flat,
// layer by layer (W then b). An MLP holds no per-call state, so several
// Workspaces may run forward passes through it; backward passes accumulate
// into Grads and must not run concurrently.
type MLP struct {
	// Sizes lists the layer widths: input, hidden..., output.
	Sizes []int
	// Acts holds one activation per layer (len(Sizes)-1).
	Acts []Activation
	// Params holds all weights and biases; Grads has the same layout.
	Params, Grads []float32

	offW, offB []int
	mm         Matmul
}

// NewMLP returns an MLP with the given layer sizes (input first, output
// last), activation hidden after every hidden layer and output after the
// last. Parameters are zero; call an Init method. It panics on sizes < 1 or
// fewer than two sizes (programmer error).
func NewMLP(sizes []int, hidden, output Activation) *MLP {
	acts := make([]Activation, len(sizes)-1)
	for i := range acts {
		acts[i] = hidden
	}
	if len(acts) > 0 {
		acts[len(acts)-1] = output
	}
	return NewMLPActs(sizes, acts)
}

// NewMLPActs is NewMLP with one activation per layer.
func NewMLPActs(sizes []int, acts []Activation) *MLP {
	if len(sizes) < 2 {
		panic(fmt.Sprintf("nn: MLP needs at least 2 sizes, got %v", sizes))
	}
	if len(acts) != len(sizes)-1 {
		panic(fmt.Sprintf("nn: MLP with %d layers got %d activations", len(sizes)-1, len(acts)))
	}
	m := &MLP{Sizes: append([]int(nil), sizes...), Acts: append([]Activation(nil), acts...), mm: DefaultMatmul()}
	n := 0
	for l := 0; l+1 < len(sizes); l++ {
		in, out := sizes[l], sizes[l+1]
		if in < 1 || out < 1 {
			panic(fmt.Sprintf("nn: MLP layer sizes must be >= 1, got %v", sizes))
		}
		if !acts[l].Valid() {
			panic(fmt.Sprintf("nn: unknown activation %d", acts[l]))
		}
		m.offW = append(m.offW, n)
		n += in * out
		m.offB = append(m.offB, n)
		n += out
	}
	m.Params = make([]float32, n)
	m.Grads = make([]float32, n)
	return m
}

// NumParams returns the number of scalar parameters.
func NumParams(sizes []int) int {
	n := 0
	for l := 0; l+1 < len(sizes); l++ {
		n += sizes[l]*sizes[l+1] + sizes[l+1]
	}
	return n
}

// SetMatmul replaces the matrix-multiply backend (for benchmarks and tests).
func (m *MLP) SetMatmul(mm Matmul) { m.mm = mm }

// In is the input width.
func (m *MLP) In() int { return m.Sizes[0] }

// Out is the output width.
func (m *MLP) Out() int { return m.Sizes[len(m.Sizes)-1] }

// Layers is the number of dense layers.
func (m *MLP) Layers() int { return len(m.Sizes) - 1 }

// W returns layer l's weight view (in×out, row-major) into Params.
func (m *MLP) W(l int) []float32 {
	return m.Params[m.offW[l] : m.offW[l]+m.Sizes[l]*m.Sizes[l+1]]
}

// B returns layer l's bias view into Params.
func (m *MLP) B(l int) []float32 { return m.Params[m.offB[l] : m.offB[l]+m.Sizes[l+1]] }

// GW returns the gradient view matching W(l).
func (m *MLP) GW(l int) []float32 {
	return m.Grads[m.offW[l] : m.offW[l]+m.Sizes[l]*m.Sizes[l+1]]
}

// GB returns the gradient view matching B(l).
func (m *MLP) GB(l int) []float32 { return m.Grads[m.offB[l] : m.offB[l]+m.Sizes[l+1]] }

// Clone returns a deep copy with the same backend.
func (m *MLP) Clone() *MLP {
	c := NewMLPActs(m.Sizes, m.Acts)
	copy(c.Params, m.Params)
	copy(c.Grads, m.Grads)
	c.mm = m.mm
	return c
}

// ZeroGrad clears the gradients.
func (m *MLP) ZeroGrad() { clear(m.Grads) }

// InitTorchDefault initialises like torch.nn.Linear's reset_parameters:
// weights and biases uniform in ±1/sqrt(fan_in) (kaiming_uniform with
// a = sqrt(5) reduces to this bound). SB3's off-policy algorithms (SAC,
// DDPG, DQN) keep this default.
func (m *MLP) InitTorchDefault(r *rand.Rand) {
	for l := 0; l < m.Layers(); l++ {
		bound := 1 / math.Sqrt(float64(m.Sizes[l]))
		for i, w := 0, m.W(l); i < len(w); i++ {
			w[i] = float32((2*r.Float64() - 1) * bound)
		}
		for i, b := 0, m.B(l); i < len(b); i++ {
			b[i] = float32((2*r.Float64() - 1) * bound)
		}
	}
}

// InitOrthogonal initialises every weight matrix to a random orthogonal
// matrix scaled by gains[l] and every bias to zero, as torch.nn.init.
// orthogonal_ does and SB3's on-policy algorithms use (gain sqrt(2) for
// hidden layers, 0.01 for the policy output, 1 for the value output).
func (m *MLP) InitOrthogonal(r *rand.Rand, gains []float64) {
	if len(gains) != m.Layers() {
		panic(fmt.Sprintf("nn: InitOrthogonal got %d gains for %d layers", len(gains), m.Layers()))
	}
	for l := 0; l < m.Layers(); l++ {
		Orthogonal(r, m.Sizes[l], m.Sizes[l+1], gains[l], m.W(l))
		clear(m.B(l))
	}
}

// Orthogonal fills dst (rows×cols, row-major) with a random matrix whose
// rows (if rows <= cols) or columns (otherwise) are orthonormal, times gain.
// Following torch.nn.init.orthogonal_: QR of a standard normal matrix with
// the signs of R's diagonal folded into Q so the result is Haar-distributed.
func Orthogonal(r *rand.Rand, rows, cols int, gain float64, dst []float32) {
	tall := rows >= cols
	n, k := rows, cols // n >= k: factor an n×k matrix
	if !tall {
		n, k = cols, rows
	}
	a := mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			a.Set(i, j, r.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var q, rr mat.Dense
	qr.QTo(&q)
	qr.RTo(&rr)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			v := q.At(i, j)
			if rr.At(j, j) < 0 {
				v = -v
			}
			v *= gain
			if tall {
				dst[i*cols+j] = float32(v)
			} else {
				dst[j*cols+i] = float32(v)
			}
		}
	}
}

// matvec is the optional BLAS SGEMV used for batch-1 forward passes.
type matvec interface {
	Sgemv(tA blas.Transpose, m, n int, alpha float32, a []float32, lda int, x []float32, incX int, beta float32, y []float32, incY int)
}

// Workspace holds the activations of one forward pass, needed by the
// matching backward pass, and scratch space. Its buffers grow to the
// largest batch seen and are then reused, so steady-state passes do not
// allocate. A Workspace serves one MLP shape.
type Workspace struct {
	batch  int
	in     []float32   // copy of the input, batch×Sizes[0]
	x      []float32   // the input Backward uses: in, or the caller's (ForwardShared)
	act    [][]float32 // act[l]: output of layer l after activation
	d0, d1 []float32   // backward scratch, batch×max width
	dIn    []float32   // gradient w.r.t. the input
}

// NewWorkspace returns a workspace for m.
func (m *MLP) NewWorkspace() *Workspace {
	return &Workspace{act: make([][]float32, m.Layers())}
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

func (m *MLP) prepare(ws *Workspace, batch int) {
	if len(ws.act) != m.Layers() {
		ws.act = make([][]float32, m.Layers())
	}
	ws.batch = batch
	maxW := 0
	for l := range ws.act {
		ws.act[l] = grow(ws.act[l], batch*m.Sizes[l+1])
	}
	for _, s := range m.Sizes {
		maxW = max(maxW, s)
	}
	ws.d0 = grow(ws.d0, batch*maxW)
	ws.d1 = grow(ws.d1, batch*maxW)
}

// Forward runs a batch of inputs x (batch×In(), row-major) through the
// network and returns the outputs (batch×Out()). The returned slice belongs
// to ws and is valid until ws is used again. x is copied, so the caller may
// reuse it before Backward.
func (m *MLP) Forward(ws *Workspace, x []float32, batch int) []float32 {
	return m.forward(ws, x, batch, true)
}

// ForwardShared is Forward without the copy of x: ws refers to x until the
// matching Backward, so the caller must not change x before it. Training
// loops whose minibatch stays put save a pass over the input (1 MB per
// network at PPO's 980 inputs and batch 256).
func (m *MLP) ForwardShared(ws *Workspace, x []float32, batch int) []float32 {
	return m.forward(ws, x, batch, false)
}

func (m *MLP) forward(ws *Workspace, x []float32, batch int, copyIn bool) []float32 {
	if len(x) != batch*m.Sizes[0] {
		panic(fmt.Sprintf("nn: Forward input has %d values, want batch %d × %d", len(x), batch, m.Sizes[0]))
	}
	m.prepare(ws, batch)
	ws.x = x
	if copyIn {
		ws.in = grow(ws.in, batch*m.Sizes[0])
		copy(ws.in, x)
		ws.x = ws.in
	}
	in := ws.x
	_, fused := m.mm.(f32.Impl)
	for l := 0; l < m.Layers(); l++ {
		ni, no := m.Sizes[l], m.Sizes[l+1]
		y := ws.act[l]
		b := m.B(l)
		if fused {
			// y = act(x·W + b) in one pass: the bias and the activation
			// are applied to each tile of y as it is computed.
			f32.Gemm(false, false, batch, no, ni, 1, in, ni, m.W(l), no, 0, y, no, b, fusedAct[m.Acts[l]])
			in = y
			continue
		}
		// Broadcast the bias into y, then accumulate x·W on top (beta = 1):
		// one pass over y instead of two.
		for r := 0; r < batch; r++ {
			copy(y[r*no:(r+1)*no], b)
		}
		if gv, ok := m.mm.(matvec); ok && batch == 1 && batch1Gemv {
			// One observation (a controller acting every RTT): y = Wᵀx as a
			// matrix-vector product, which avoids gonum's goroutine fan-out
			// for GEMM (measured 70 µs vs 110 µs at 980-256-256-1).
			gv.Sgemv(blas.Trans, ni, no, 1, m.W(l), no, in, 1, 1, y, 1)
		} else {
			m.mm.Sgemm(blas.NoTrans, blas.NoTrans, batch, no, ni, 1, in, ni, m.W(l), no, 1, y, no)
		}
		activate(m.Acts[l], y)
		in = y
	}
	return ws.act[m.Layers()-1]
}

// fusedAct maps an Activation to f32's fused epilogue.
var fusedAct = [...]f32.Act{Identity: f32.Identity, ReLU: f32.ReLU, Tanh: f32.TanhAct}

// activate applies a to y for the non-fused backends. Tanh is f32.Tanh32
// (float32, a few ulps from the exact value) on every backend and batch
// size, so the gonum and OpenBLAS builds compute the same function as the
// fused path.
func activate(a Activation, y []float32) {
	switch a {
	case ReLU:
		// Branch-free: a data-dependent branch here mispredicts about half
		// the time and cost 10% of a SAC update in profiles. Clearing every
		// bit when the sign bit is set maps negatives (and −0) to +0.
		for i, v := range y {
			b := math.Float32bits(v)
			y[i] = math.Float32frombits(b &^ uint32(int32(b)>>31))
		}
	case Tanh:
		f32.Tanh(y)
	}
}

// Activations returns layer l's output (after its activation) from the
// last Forward on ws: batch×Sizes[l+1] values owned by ws. gSDE uses the
// last hidden layer as its state-dependent features.
func (m *MLP) Activations(ws *Workspace, l int) []float32 { return ws.act[l] }

// Backward takes dy = dL/d(output) for the batch of the last Forward on ws,
// adds dL/dθ to m.Grads, and returns dL/d(input) (batch×In(), owned by ws)
// if wantInput is true, else nil. dy is not modified.
func (m *MLP) Backward(ws *Workspace, dy []float32, wantInput bool) []float32 {
	return m.backward(ws, dy, wantInput, true, 0)
}

// BackwardInput returns dL/d(input) for dy = dL/d(output) without touching
// m.Grads: the pass an actor loss needs through a critic whose parameters
// it does not train (saves the weight-gradient products).
func (m *MLP) BackwardInput(ws *Workspace, dy []float32) []float32 {
	return m.backward(ws, dy, true, false, 0)
}

// BackwardInputCols is BackwardInput restricted to input columns
// [from, In()): it returns a batch×(In()−from) gradient. A critic taking
// [observation | action] needs only the action columns for the actor's
// loss, which skips most of the first layer's product when observations
// are wide (MARLIN's 980 inputs).
func (m *MLP) BackwardInputCols(ws *Workspace, dy []float32, from int) []float32 {
	if from < 0 || from >= m.In() {
		panic(fmt.Sprintf("nn: BackwardInputCols from %d outside [0, %d)", from, m.In()))
	}
	return m.backward(ws, dy, true, false, from)
}

func (m *MLP) backward(ws *Workspace, dy []float32, wantInput, wantParams bool, from int) []float32 {
	batch := ws.batch
	if len(dy) != batch*m.Out() {
		panic(fmt.Sprintf("nn: Backward got %d gradients, want batch %d × %d", len(dy), batch, m.Out()))
	}
	cur, next := ws.d0, ws.d1
	copy(cur, dy)
	for l := m.Layers() - 1; l >= 0; l-- {
		ni, no := m.Sizes[l], m.Sizes[l+1]
		dz := cur[:batch*no]
		y := ws.act[l]
		// Derivatives written in terms of the stored output y = act(z):
		// ReLU'(z) = [y > 0], tanh'(z) = 1 - y^2.
		biasDone := false
		switch m.Acts[l] {
		case ReLU:
			if wantParams {
				// Mask and bias gradient in one pass over dz.
				f32.ReLUBackward(dz, y, batch, no, m.GB(l))
				biasDone = true
			} else {
				f32.ReLUBackward(dz, y, batch, no, nil)
			}
		case Tanh:
			// dz·(1 − y²) and the bias gradient in one pass.
			if wantParams {
				f32.TanhBackward(dz, y, batch, no, m.GB(l))
				biasDone = true
			} else {
				f32.TanhBackward(dz, y, batch, no, nil)
			}
		}
		x := ws.x
		if l > 0 {
			x = ws.act[l-1]
		}
		if wantParams {
			// dW += xᵀ·dz (in×out), db += column sums of dz.
			m.mm.Sgemm(blas.Trans, blas.NoTrans, ni, no, batch, 1, x, ni, dz, no, 1, m.GW(l), no)
			if !biasDone {
				gb := m.GB(l)
				for r := 0; r < batch; r++ {
					row := dz[r*no : (r+1)*no]
					for j, v := range row {
						gb[j] += v
					}
				}
			}
		}
		if l == 0 && !wantInput {
			return nil
		}
		// dx = dz·Wᵀ (batch×in); for the first layer only columns
		// [from, in), i.e. rows [from, in) of W.
		dx, w := next[:batch*ni], m.W(l)
		if l == 0 {
			ni -= from
			w = w[from*no:]
			ws.dIn = grow(ws.dIn, batch*ni)
			dx = ws.dIn
		}
		m.mm.Sgemm(blas.NoTrans, blas.Trans, batch, ni, no, 1, dz, no, w, no, 0, dx, ni)
		cur, next = next, cur
	}
	return ws.dIn
}
