package cartpole

import (
	"math"
	"testing"
)

// TestFirstStepFromRest checks one step against the equations worked by
// hand: from the upright rest state a right push gives
// temp = 10/1.1, θ̈ = −cos·temp/(0.5·(4/3 − 0.1/1.1)), ẍ = temp − 0.05·θ̈/1.1.
func TestFirstStepFromRest(t *testing.T) {
	e := &Env{}
	obs, r, term, _, _ := e.Step([]float32{1})
	temp := 10 / 1.1
	thetaAcc := -temp / (0.5 * (4.0/3.0 - 0.1/1.1))
	xAcc := temp - 0.05*thetaAcc/1.1
	want := []float64{0, 0.02 * xAcc, 0, 0.02 * thetaAcc}
	for i := range want {
		if math.Abs(float64(obs[i])-want[i]) > 1e-6 {
			t.Errorf("obs[%d] = %g, want %g", i, obs[i], want[i])
		}
	}
	if r != 1 || term {
		t.Errorf("reward %g terminated %v, want 1 false", r, term)
	}
}

func TestTerminatesAndTruncates(t *testing.T) {
	e := New()
	e.Reset(1)
	steps := 0
	for {
		_, _, term, trunc, _ := e.Step([]float32{1}) // always push right: falls quickly
		steps++
		if trunc {
			t.Fatalf("truncated at %d steps; constant pushing must terminate first", steps)
		}
		if term {
			break
		}
	}
	if steps < 5 || steps > 60 {
		t.Errorf("constant push terminated after %d steps, want 5..60", steps)
	}
}
