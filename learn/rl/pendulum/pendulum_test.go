package pendulum

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cclab/cclab/learn/rl/env"
)

// TestMatchesGymnasiumGolden replays transitions computed by an independent
// numpy transcription of Gymnasium's PendulumEnv.step
// (testdata/gen_golden.py) from arbitrary states, including actions beyond
// the torque limit and speeds that hit the clip. Observations are float32
// in both, so they must agree exactly up to float32 rounding of cos/sin
// (1 ulp); rewards to 1e-12.
func TestMatchesGymnasiumGolden(t *testing.T) {
	f, err := os.Open("testdata/pendulum_golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 7 {
			t.Fatalf("line %d: %d fields, want 7", n+1, len(fs))
		}
		v := make([]float64, 7)
		for i, s := range fs {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatalf("line %d field %d: %v", n+1, i, err)
			}
		}
		e := &Env{Theta: v[0], ThetaDot: v[1]}
		obs, r, term, trunc, _ := e.Step([]float32{float32(v[2])})
		for i := 0; i < 3; i++ {
			if d := math.Abs(float64(obs[i]) - v[3+i]); d > 1e-6 {
				t.Errorf("line %d obs[%d] = %.9g, want %.9g", n+1, i, obs[i], v[3+i])
			}
		}
		if math.Abs(r-v[6]) > 1e-12*(1+math.Abs(v[6])) {
			t.Errorf("line %d reward = %.17g, want %.17g", n+1, r, v[6])
		}
		if term || trunc {
			t.Errorf("line %d: untimed pendulum reported terminated=%v truncated=%v", n+1, term, trunc)
		}
		n++
	}
	if n != 200 {
		t.Fatalf("read %d golden transitions, want 200", n)
	}
}

func TestAngleNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{0, 0}, {math.Pi, -math.Pi}, {-math.Pi, -math.Pi}, {3 * math.Pi / 2, -math.Pi / 2},
		{-3 * math.Pi / 2, math.Pi / 2}, {7, 7 - 2*math.Pi}, {-20, -20 + 6*math.Pi},
	} {
		if got := AngleNormalize(tc.in); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("AngleNormalize(%g) = %g, want %g", tc.in, got, tc.want)
		}
	}
}

func TestTimeLimitAndReset(t *testing.T) {
	e := New()
	obs, _ := e.Reset(42)
	th := math.Atan2(float64(obs[1]), float64(obs[0]))
	if math.Abs(th) > math.Pi || math.Abs(float64(obs[2])) > 1 {
		t.Errorf("start state θ=%g θ̇=%g outside [−π,π]×[−1,1]", th, obs[2])
	}
	first := append([]float32(nil), obs...)
	for i := 1; i <= MaxEpisodeSteps; i++ {
		_, r, term, trunc, _ := e.Step([]float32{0})
		if term {
			t.Fatalf("step %d terminated; Pendulum never terminates", i)
		}
		if trunc != (i == MaxEpisodeSteps) {
			t.Fatalf("step %d truncated = %v, want %v", i, trunc, i == MaxEpisodeSteps)
		}
		// Minimum reward: −(π² + 0.1·8² + 0.001·2²) = −16.2736044.
		if r > 0 || r < -16.2736045 {
			t.Fatalf("step %d reward %g outside [−16.2736, 0]", i, r)
		}
	}
	again, _ := e.Reset(42)
	for i := range first {
		if again[i] != first[i] {
			t.Fatalf("Reset(42) twice gave %v then %v", first, again)
		}
	}
	other, _ := e.Reset(43)
	if other[0] == first[0] && other[2] == first[2] {
		t.Errorf("Reset(43) gave the same start as Reset(42)")
	}
}

func TestStateRoundTrip(t *testing.T) {
	a := New()
	a.Reset(5)
	for range 17 {
		a.Step([]float32{0.3})
	}
	st, err := a.(env.Stateful).AppendState(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := New()
	if err := b.(env.Stateful).RestoreState(st); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		oa, ra, _, ta, _ := a.Step([]float32{-1})
		ob, rb, _, tb, _ := b.Step([]float32{-1})
		if oa[0] != ob[0] || oa[2] != ob[2] || ra != rb || ta != tb {
			t.Fatalf("step %d after restore: (%v %g %v) vs (%v %g %v)", i, oa, ra, ta, ob, rb, tb)
		}
		if ta {
			break
		}
	}
}
