package env_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/pendulum"
	"github.com/cclab/cclab/learn/rl/space"
)

// counter is a deterministic test environment: the observation is
// [seed mod 100, step], reward = action, and it terminates after `term`
// steps if term > 0.
type counter struct {
	seed uint64
	t    int
	term int
	obs  [2]float32
}

func (c *counter) ObservationSpace() space.Space { return space.Uniform(0, 1000, 2) }
func (c *counter) ActionSpace() space.Space      { return space.Uniform(-10, 10, 1) }
func (c *counter) Reset(seed uint64) ([]float32, env.Info) {
	c.seed, c.t = seed, 0
	c.obs = [2]float32{float32(seed % 100), 0}
	return c.obs[:], nil
}
func (c *counter) Step(a []float32) ([]float32, float64, bool, bool, env.Info) {
	c.t++
	c.obs[1] = float32(c.t)
	return c.obs[:], float64(a[0]), c.term > 0 && c.t >= c.term, false, nil
}

func TestVecAutoResetAndEpisodes(t *testing.T) {
	envs := []env.Env{env.NewTimeLimit(&counter{}, 3), &counter{term: 2}}
	v, err := env.NewVec(envs, 1)
	if err != nil {
		t.Fatal(err)
	}
	v.Reset(5)
	var eps []env.Episode
	for step := 1; step <= 6; step++ {
		b := v.Step([]float32{1, 2})
		// Env 0 truncates every 3 steps, env 1 terminates every 2.
		if got, want := b.Truncated[0], step%3 == 0; got != want {
			t.Fatalf("step %d: env 0 truncated = %v, want %v", step, got, want)
		}
		if got, want := b.Terminated[1], step%2 == 0; got != want {
			t.Fatalf("step %d: env 1 terminated = %v, want %v", step, got, want)
		}
		if b.Done(0) {
			if b.FinalObs[1] != 3 || b.Obs[1] != 0 {
				t.Fatalf("step %d: env 0 final obs step %g (want 3), new obs step %g (want 0)", step, b.FinalObs[1], b.Obs[1])
			}
		}
		eps = v.Episodes(eps)
	}
	want := []env.Episode{
		{Env: 1, Return: 4, Length: 2}, {Env: 0, Return: 3, Length: 3, Truncated: true},
		{Env: 1, Return: 4, Length: 2}, {Env: 0, Return: 3, Length: 3, Truncated: true}, {Env: 1, Return: 4, Length: 2},
	}
	if len(eps) != len(want) {
		t.Fatalf("episodes %+v, want %+v", eps, want)
	}
	for i := range want {
		if eps[i] != want[i] {
			t.Errorf("episode %d = %+v, want %+v", i, eps[i], want[i])
		}
	}
}

// TestVecDeterministicAcrossWorkers steps 7 pendulums with 1, 3 and 7
// goroutines and requires identical batches, including the episode seeds
// drawn at automatic resets.
func TestVecDeterministicAcrossWorkers(t *testing.T) {
	run := func(workers int) []byte {
		envs := make([]env.Env, 7)
		for i := range envs {
			envs[i] = env.NewTimeLimit(&pendulumNoLimit{}, 13)
		}
		v, err := env.NewVec(envs, workers)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		v.Reset(11)
		acts := make([]float32, 7)
		for s := 0; s < 60; s++ {
			for i := range acts {
				acts[i] = float32(math.Sin(float64(s*7 + i)))
			}
			b := v.Step(acts)
			for _, x := range b.Obs {
				out.WriteString(string(rune(math.Float32bits(x) % 60000)))
			}
		}
		return out.Bytes()
	}
	a := run(1)
	for _, w := range []int{3, 7} {
		if !bytes.Equal(a, run(w)) {
			t.Errorf("%d workers gave different observations from 1 worker", w)
		}
	}
}

type pendulumNoLimit struct{ pendulum.Env }

func TestNewVecRejectsMismatchedSpaces(t *testing.T) {
	if _, err := env.NewVec([]env.Env{&counter{}, pendulum.New()}, 1); err == nil {
		t.Errorf("NewVec accepted environments with different spaces")
	}
	if _, err := env.NewVec(nil, 1); err == nil {
		t.Errorf("NewVec accepted no environments")
	}
}

func TestStack(t *testing.T) {
	s, err := env.NewStack(&counter{}, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	if sp := s.ObservationSpace(); sp.Dim() != 6 || sp.Shape[0] != 3 || sp.Shape[1] != 2 {
		t.Fatalf("stacked space %v shape %v, want 3×2", sp, sp.Shape)
	}
	o, _ := s.Reset(42)
	if want := []float32{42, 0, 42, 0, 42, 0}; !equal(o, want) {
		t.Errorf("after reset %v, want %v (padded with the first observation)", o, want)
	}
	s.Step([]float32{0})
	o, _, _, _, _ = s.Step([]float32{0})
	if want := []float32{42, 0, 42, 1, 42, 2}; !equal(o, want) {
		t.Errorf("after 2 steps %v, want %v (oldest first)", o, want)
	}
	z, _ := env.NewStack(&counter{}, 2, true)
	o, _ = z.Reset(7)
	if want := []float32{0, 0, 7, 0}; !equal(o, want) {
		t.Errorf("zero-padded reset %v, want %v", o, want)
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestScaleRewardAndEpisodeStats(t *testing.T) {
	st := &env.EpisodeStats{Env: &env.ScaleReward{Env: &counter{term: 3}, Scale: 0.5}}
	st.Reset(1)
	for range 7 {
		_, _, term, trunc, _ := st.Step([]float32{4})
		if term || trunc {
			st.Reset(2)
		}
	}
	if len(st.Finished) != 2 || st.Finished[0].Return != 6 || st.Finished[0].Length != 3 {
		t.Errorf("episodes %+v, want two of return 6 (3 × 4 × 0.5) and length 3", st.Finished)
	}
}

// TestVecNormalize: after many steps the normalised observations have
// mean ≈ 0 and variance ≈ 1, and rewards are scaled by the return's
// spread.
func TestVecNormalize(t *testing.T) {
	envs := make([]env.Env, 4)
	for i := range envs {
		envs[i] = pendulum.New()
	}
	v, _ := env.NewVec(envs, 1)
	nv, err := env.NewVecNormalize(v, true, true, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	nv.Reset(3)
	acts := []float32{1, -1, 0.5, 2}
	var sum, sumSq [3]float64
	var rsum float64
	n := 0
	for s := 0; s < 3000; s++ {
		b := nv.Step(acts)
		if s < 1000 {
			continue
		}
		for i := 0; i < 4; i++ {
			for d := 0; d < 3; d++ {
				x := float64(b.Obs[i*3+d])
				sum[d] += x
				sumSq[d] += x * x
			}
			rsum += math.Abs(b.Reward[i])
			n++
		}
	}
	for d := 0; d < 3; d++ {
		m := sum[d] / float64(n)
		vr := sumSq[d]/float64(n) - m*m
		if math.Abs(m) > 0.3 || vr < 0.5 || vr > 1.5 {
			t.Errorf("dimension %d: normalised mean %g variance %g, want ≈ 0 and ≈ 1", d, m, vr)
		}
	}
	// Raw Pendulum rewards are −0..−16 with returns of hundreds; scaled
	// rewards must be much smaller in magnitude.
	if r := rsum / float64(n); r > 1 {
		t.Errorf("mean |scaled reward| = %g, want < 1", r)
	}
	// Saved state restores identical statistics.
	st, err := nv.AppendState(nil)
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := env.NewVec([]env.Env{pendulum.New(), pendulum.New(), pendulum.New(), pendulum.New()}, 1)
	nv2, _ := env.NewVecNormalize(v2, true, true, 0.99)
	if err := nv2.RestoreState(st); err != nil {
		t.Fatal(err)
	}
	b1, b2 := nv.Step(acts), nv2.Step(acts)
	if !equal(b1.Obs, b2.Obs) || b1.Reward[0] != b2.Reward[0] {
		t.Errorf("restored VecNormalize steps differently: %v vs %v", b1.Obs, b2.Obs)
	}
	if err := nv2.RestoreState(st[:len(st)-5]); err == nil {
		t.Errorf("truncated state restored without error")
	}
}
