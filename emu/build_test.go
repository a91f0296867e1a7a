package emu

import (
	"fmt"
	"math"
	"testing"

	"github.com/cclab/cclab/core/rng"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/netsim/loss"
)

// TestLossHops: a flow's loss_hops erase packets on that many hops in
// series, 1-(1-q)^hops end to end, each hop drawing only for the packets
// the previous ones passed, from the simulator's streams.
func TestLossHops(t *testing.T) {
	r := rng.New(7)
	l := scenario.Loss{Model: "bernoulli", P: 0.1}
	first, err := buildLoss(r, l, "flow/a/lasthop")
	if err != nil {
		t.Fatal(err)
	}
	hops := lossHops{first}
	for h := 2; h <= 4; h++ {
		m, err := buildLoss(r, l, fmt.Sprintf("flow/a/lasthop/%d", h))
		if err != nil {
			t.Fatal(err)
		}
		hops = append(hops, m)
	}
	var _ loss.Model = hops
	want := 1 - math.Pow(0.9, 4)
	if got := hops.Rate(); math.Abs(got-want) > 1e-12 {
		t.Errorf("Rate %v, want %v", got, want)
	}
	const n = 200000
	lost := 0
	for range n {
		if hops.Lose() {
			lost++
		}
	}
	if got := float64(lost) / n; math.Abs(got-want) > 0.005 {
		t.Errorf("lost %.4f of packets, want %.4f", got, want)
	}
}
