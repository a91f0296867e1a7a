package buffer

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cclab/cclab/learn/rl/checkpoint"
)

func TestReplayRingAndSample(t *testing.T) {
	r := NewReplay(5, 2, 1)
	for i := 0; i < 8; i++ {
		f := float32(i)
		r.Add([]float32{f, -f}, []float32{10 * f}, float64(i), []float32{f + 1, -f - 1}, i%3 == 0)
	}
	if r.Len() != 5 {
		t.Fatalf("Len = %d, want 5", r.Len())
	}
	// Transitions 3..7 remain; every sample must be one of them, intact.
	rng := rand.New(rand.NewPCG(1, 1))
	b := r.NewBatch(2000)
	r.Sample(rng, b)
	counts := map[float32]int{}
	for k := 0; k < b.N; k++ {
		f := b.Obs[2*k]
		if f < 3 || f > 7 || b.Obs[2*k+1] != -f || b.Act[k] != 10*f || b.Rew[k] != f || b.Next[2*k] != f+1 {
			t.Fatalf("sample %d is not a stored transition: obs %v act %v rew %v next %v", k, b.Obs[2*k:2*k+2], b.Act[k], b.Rew[k], b.Next[2*k:2*k+2])
		}
		wantDone := float32(0)
		if int(f)%3 == 0 {
			wantDone = 1
		}
		if b.Done[k] != wantDone {
			t.Fatalf("transition %v done = %v, want %v", f, b.Done[k], wantDone)
		}
		counts[f]++
	}
	// Uniform: each of 5 has p = 0.2; 2000 draws give sd ≈ 18, allow ±5 sd.
	for f, c := range counts {
		if c < 400-90 || c > 400+90 {
			t.Errorf("transition %v drawn %d times of 2000, want ≈ 400", f, c)
		}
	}
}

func TestReplaySaveLoad(t *testing.T) {
	r := NewReplay(4, 1, 1)
	for i := 0; i < 6; i++ {
		r.Add([]float32{float32(i)}, []float32{1}, 2, []float32{3}, false)
	}
	path := filepath.Join(t.TempDir(), "ck")
	if err := checkpoint.Save(path, "test", func(e *checkpoint.Encoder) error { r.Save(e); return nil }); err != nil {
		t.Fatal(err)
	}
	q := NewReplay(4, 1, 1)
	if err := checkpoint.Load(path, "test", func(d *checkpoint.Decoder) error { q.Load(d); return d.Err() }); err != nil {
		t.Fatal(err)
	}
	if q.pos != r.pos || q.size != r.size {
		t.Fatalf("restored pos/size %d/%d, want %d/%d", q.pos, q.size, r.pos, r.size)
	}
	for i := range r.obs {
		if q.obs[i] != r.obs[i] {
			t.Fatalf("obs[%d] = %g, want %g", i, q.obs[i], r.obs[i])
		}
	}
	// Adding after restore overwrites the same slot in both.
	r.Add([]float32{9}, []float32{1}, 2, []float32{3}, true)
	q.Add([]float32{9}, []float32{1}, 2, []float32{3}, true)
	for i := range r.obs {
		if q.obs[i] != r.obs[i] || q.done[i] != r.done[i] {
			t.Fatalf("after Add, slot %d differs: %g/%g vs %g/%g", i, q.obs[i], q.done[i], r.obs[i], r.done[i])
		}
	}
	bad := NewReplay(8, 1, 1)
	if err := checkpoint.Load(path, "test", func(d *checkpoint.Decoder) error { bad.Load(d); return d.Err() }); err == nil {
		t.Errorf("loading into a buffer of another capacity succeeded")
	}
}

// TestReplayGuide: a guided buffer samples each transition's guide with
// it (also across the ring's wrap and a checkpoint), refuses a missing or
// misshaped guide, and an unguided buffer refuses one and samples none;
// a checkpoint loads only into a buffer of the same guide setting.
func TestReplayGuide(t *testing.T) {
	r := NewReplay(5, 1, 2)
	r.EnableGuide()
	for i := 0; i < 8; i++ {
		f := float32(i)
		r.AddGuided([]float32{f}, []float32{f, f}, []float32{-f, 2 * f}, 0, []float32{f}, 0)
	}
	path := filepath.Join(t.TempDir(), "ck")
	if err := checkpoint.Save(path, "test", func(e *checkpoint.Encoder) error { r.Save(e); return nil }); err != nil {
		t.Fatal(err)
	}
	q := NewReplay(5, 1, 2)
	q.EnableGuide()
	if err := checkpoint.Load(path, "test", func(d *checkpoint.Decoder) error { q.Load(d); return d.Err() }); err != nil {
		t.Fatal(err)
	}
	for _, buf := range []*Replay{r, q} {
		b := buf.NewBatch(200)
		buf.Sample(rand.New(rand.NewPCG(2, 2)), b)
		for k := 0; k < b.N; k++ {
			f := b.Obs[k]
			if f < 3 || b.Guide[2*k] != -f || b.Guide[2*k+1] != 2*f {
				t.Fatalf("sample %d: obs %g with guide %v, want [%g %g]", k, f, b.Guide[2*k:2*k+2], -f, 2*f)
			}
		}
	}
	unguided := NewReplay(5, 1, 2)
	if err := checkpoint.Load(path, "test", func(d *checkpoint.Decoder) error { unguided.Load(d); return d.Err() }); err == nil {
		t.Errorf("an unguided buffer loaded a checkpoint with guides")
	}
	unguided = NewReplay(5, 1, 2)
	if b := unguided.NewBatch(3); b.Guide != nil {
		t.Errorf("an unguided buffer's batch has guides")
	}
	guidedFromPlain := NewReplay(4, 1, 1)
	guidedFromPlain.EnableGuide()
	plainPath := filepath.Join(t.TempDir(), "plain")
	plain := NewReplay(4, 1, 1)
	plain.Add([]float32{1}, []float32{1}, 0, []float32{1}, false)
	if err := checkpoint.Save(plainPath, "test", func(e *checkpoint.Encoder) error { plain.Save(e); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.Load(plainPath, "test", func(d *checkpoint.Decoder) error { guidedFromPlain.Load(d); return d.Err() }); err == nil {
		t.Errorf("a guided buffer loaded a checkpoint without guides")
	}
	for name, add := range map[string]func(){
		"guided without guide":  func() { r.AddGuided([]float32{1}, []float32{1, 1}, nil, 0, []float32{1}, 0) },
		"guide of wrong size":   func() { r.AddGuided([]float32{1}, []float32{1, 1}, []float32{1}, 0, []float32{1}, 0) },
		"unguided with a guide": func() { unguided.AddGuided([]float32{1}, []float32{1, 1}, []float32{1, 1}, 0, []float32{1}, 0) },
		"enable when not empty": func() { plain.EnableGuide() },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			add()
		}()
	}
}

// naiveGAE computes advantages from the definition A_t = Σ_l (γλ)^l δ_{t+l},
// summing forward within the episode.
func naiveGAE(r *Rollout, lastVal []float32, lastDone []bool, gamma, lambda float64) []float64 {
	adv := make([]float64, r.T*r.K)
	for k := 0; k < r.K; k++ {
		delta := make([]float64, r.T)
		endsAfter := make([]bool, r.T) // episode ends after step t
		for t := 0; t < r.T; t++ {
			i := t*r.K + k
			var next float64
			var ends bool
			if t == r.T-1 {
				next, ends = float64(lastVal[k]), lastDone[k]
			} else {
				next, ends = float64(r.Val[i+r.K]), r.EpStart[i+r.K]
			}
			endsAfter[t] = ends
			if ends {
				next = 0
			}
			delta[t] = float64(r.Rew[i]) + gamma*next - float64(r.Val[i])
		}
		for t := 0; t < r.T; t++ {
			var s, w float64 = 0, 1
			for l := t; l < r.T; l++ {
				s += w * delta[l]
				if endsAfter[l] {
					break
				}
				w *= gamma * lambda
			}
			adv[t*r.K+k] = s
		}
	}
	return adv
}

func TestGAEMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const T, K = 13, 3
	r := NewRollout(T, K, 1, 1)
	for s := 0; s < T; s++ {
		i := r.Step()
		for k := 0; k < K; k++ {
			j := i*K + k
			r.Rew[j] = float32(rng.NormFloat64())
			r.Val[j] = float32(rng.NormFloat64())
			r.EpStart[j] = s == 0 || rng.IntN(4) == 0
		}
	}
	lastVal := []float32{0.5, -1, 2}
	lastDone := []bool{false, true, false}
	for _, p := range [][2]float64{{0.99, 0.95}, {0.9, 1}, {0.99, 0}} {
		r.ComputeGAE(lastVal, lastDone, p[0], p[1])
		want := naiveGAE(r, lastVal, lastDone, p[0], p[1])
		for i := range want {
			if math.Abs(float64(r.Adv[i])-want[i]) > 1e-5*(1+math.Abs(want[i])) {
				t.Fatalf("γ=%g λ=%g: adv[%d] = %g, want %g", p[0], p[1], i, r.Adv[i], want[i])
			}
			if got := r.Ret[i] - r.Val[i]; math.Abs(float64(got-r.Adv[i])) > 1e-5 {
				t.Fatalf("ret − val = %g, want adv %g", got, r.Adv[i])
			}
		}
	}
}

func TestPermutationCoversAll(t *testing.T) {
	r := NewRollout(4, 2, 1, 1)
	for !r.Full() {
		r.Step()
	}
	idx := r.Permutation(rand.New(rand.NewPCG(3, 3)), nil)
	seen := make([]bool, 8)
	for _, i := range idx {
		if seen[i] {
			t.Fatalf("index %d appears twice in %v", i, idx)
		}
		seen[i] = true
	}
	if len(idx) != 8 {
		t.Fatalf("permutation has %d entries, want 8", len(idx))
	}
}
