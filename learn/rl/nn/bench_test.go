package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkUpdate measures one training update (forward, backward, Adam)
// of an MLP with ReLU hidden layers and a scalar output, the issue's
// reference workload (980 inputs, two hidden layers of 256, batch 256) and
// MARLIN's critic sizes. Run with -cpu 1,2 to compare thread counts;
// updates/s = 1e9 / ns/op.
func BenchmarkUpdate(b *testing.B) {
	for _, tc := range []struct {
		sizes []int
		batch int
	}{
		{[]int{980, 256, 256, 1}, 256},
		{[]int{981, 400, 300, 1}, 256},
		{[]int{981, 400, 300, 1}, 512},
		{[]int{4, 256, 256, 1}, 256},
		{[]int{3, 64, 64, 1}, 64},
	} {
		b.Run(fmt.Sprintf("%v/b%d", tc.sizes, tc.batch), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			m := NewMLP(tc.sizes, ReLU, Identity)
			m.InitTorchDefault(rng)
			opt := NewAdam(len(m.Params), 3e-4)
			ws := m.NewWorkspace()
			x := randSlice(rng, tc.batch*m.In(), 1)
			dy := randSlice(rng, tc.batch, 1)
			b.ReportAllocs()
			for b.Loop() {
				m.ZeroGrad()
				m.Forward(ws, x, tc.batch)
				m.Backward(ws, dy, false)
				opt.Step(m.Params, m.Grads)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}

// BenchmarkInference measures one forward pass for a single observation
// (batch 1), what a controller pays every RTT.
func BenchmarkInference(b *testing.B) {
	for _, sizes := range [][]int{{980, 256, 256, 1}, {980, 400, 300, 2}, {3, 256, 256, 2}} {
		b.Run(fmt.Sprint(sizes), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			m := NewMLP(sizes, ReLU, Identity)
			m.InitTorchDefault(rng)
			ws := m.NewWorkspace()
			x := randSlice(rng, m.In(), 1)
			b.ReportAllocs()
			for b.Loop() {
				m.Forward(ws, x, 1)
			}
		})
	}
}
