package rng

import "testing"

func draws(s Source, name string, n int) []uint64 {
	r := s.Stream(name)
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.Uint64()
	}
	return out
}

func equal(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

func TestStreams(t *testing.T) {
	const n = 64
	a := draws(New(1), "loss/bottleneck", n)
	if !equal(a, draws(New(1), "loss/bottleneck", n)) {
		t.Errorf("the same seed and name gave different streams")
	}
	// Creating other streams first must not change a stream's draws.
	s := New(1)
	draws(s, "flow/1", 1000)
	if !equal(a, draws(s, "loss/bottleneck", n)) {
		t.Errorf("drawing from another stream changed this one")
	}
	for _, other := range [][]uint64{
		draws(New(2), "loss/bottleneck", n),
		draws(New(1), "loss/bottleneck2", n),
		draws(New(1), "flow/1", n),
	} {
		same := 0
		for i := range a {
			if a[i] == other[i] {
				same++
			}
		}
		if same > 0 {
			t.Errorf("streams of different seeds or names share %d of %d draws", same, n)
		}
	}
}

// TestNearbySeedsUncorrelated checks that seeds 1..200 give first draws
// spread over the unit interval (a weak mixing test: poor mixing of nearby
// seeds shows up as clustering).
func TestNearbySeedsUncorrelated(t *testing.T) {
	var bins [10]int
	for seed := uint64(1); seed <= 200; seed++ {
		bins[int(New(seed).Stream("x").Float64()*10)]++
	}
	for i, c := range bins {
		// Expected 20 per bin; 5 and 40 are far outside binomial noise.
		if c < 5 || c > 40 {
			t.Errorf("bin %d holds %d of 200 first draws: %v", i, c, bins)
		}
	}
}
