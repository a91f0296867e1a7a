package bbr

import (
	"math/rand/v2"
	"testing"

	"github.com/cclab/cclab/core/units"
)

// bruteMax is the reference: the maximum of all samples whose round is
// within window of the latest round.
type bruteMax struct {
	rounds []uint64
	vals   []units.Bandwidth
}

func (r *bruteMax) add(round uint64, v units.Bandwidth) {
	r.rounds = append(r.rounds, round)
	r.vals = append(r.vals, v)
}

func (r *bruteMax) get(window int) units.Bandwidth {
	if len(r.rounds) == 0 {
		return 0
	}
	cur := r.rounds[len(r.rounds)-1]
	var best units.Bandwidth
	for i, rd := range r.rounds {
		if cur-rd <= uint64(window) {
			best = max(best, r.vals[i])
		}
	}
	return best
}

func TestMaxFilterMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := range 20 {
		window := 1 + rng.IntN(20)
		f := NewMaxFilter(window)
		var ref bruteMax
		round := uint64(0)
		for step := range 2000 {
			// Several samples per round, sometimes skipped rounds (no
			// valid sample in a round), occasionally a window change.
			switch x := rng.IntN(100); {
			case x < 30:
				round++
			case x < 33:
				round += uint64(1 + rng.IntN(15))
			case x < 34:
				window = 1 + rng.IntN(MaxWindowRounds)
				f.SetWindow(window)
			}
			v := units.Bandwidth(rng.IntN(1000)) * units.Kbps
			f.Update(round, v)
			ref.add(round, v)
			// Older than MaxWindowRounds cannot matter: windows are capped.
			if got, want := f.Get(), ref.get(window); got != want {
				t.Fatalf("trial %d step %d (round %d, window %d): Get() = %v, want %v", trial, step, round, window, got, want)
			}
		}
	}
}

func TestMaxFilterWindowSemantics(t *testing.T) {
	f := NewMaxFilter(10)
	f.Update(0, 100)
	f.Update(5, 50)
	f.Update(10, 40)
	if got := f.Get(); got != 100 {
		t.Errorf("sample of round 0 at round 10 with window 10: Get() = %v, want 100 (retained through round r+window)", got)
	}
	f.Update(11, 30)
	if got := f.Get(); got != 50 {
		t.Errorf("at round 11: Get() = %v, want 50 (round 0 expired)", got)
	}
	// Shrinking drops samples at once; growing brings retained ones back.
	f.SetWindow(3)
	if got := f.Get(); got != 40 {
		t.Errorf("window 3 at round 11: Get() = %v, want 40", got)
	}
	f.SetWindow(MaxWindowRounds)
	if got := f.Get(); got != 100 {
		t.Errorf("window %d at round 11: Get() = %v, want 100 (round 0 still held)", MaxWindowRounds, got)
	}
	f.SetWindow(0)
	if got := f.Window(); got != 1 {
		t.Errorf("SetWindow(0) gives window %d, want 1 (clamped)", got)
	}
}
