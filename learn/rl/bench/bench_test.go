package bench

import (
	"bytes"
	"context"
	"io"
	"math"
	"strings"
	"testing"
)

// TestRunReproducible checks that a benchmark run is a function of its
// seed: two runs with one seed print the same curve and score, another
// seed a different one.
func TestRunReproducible(t *testing.T) {
	run := func(seed uint64) (Result, string) {
		var out bytes.Buffer
		res, err := Run(context.Background(), Config{Algo: "a2c", TaskKey: "cartpole", Task: Tasks["cartpole"], Steps: 800, Seed: seed,
			Workers: 1, EvalEpisodes: 2}, &out, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, l := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(l); len(f) == 5 && f[0] != "seed" {
				rows = append(rows, strings.Join(f[:4], " ")) // without wall time
			}
		}
		return res, strings.Join(rows, "\n")
	}
	a, curveA := run(1)
	b, curveB := run(1)
	if a.Mean != b.Mean || a.Std != b.Std || curveA != curveB || curveA == "" {
		t.Errorf("seed 1 twice: %+v %q vs %+v %q", a, curveA, b, curveB)
	}
	if c, curveC := run(2); c.Mean == a.Mean && curveC == curveA {
		t.Errorf("seeds 1 and 2 gave the same run")
	}
}

func TestSpeedRuns(t *testing.T) {
	for _, algo := range SpeedAlgos {
		n, el, _, err := Speed(context.Background(), SpeedConfig{Algo: algo, Obs: 4, Act: 1, Hidden: []int{8}, Batch: 16, Seconds: 0.01})
		if err != nil || n < 1 || el <= 0 {
			t.Errorf("%s: %d in %g s, %v", algo, n, el, err)
		}
	}
	if _, _, _, err := Speed(context.Background(), SpeedConfig{Algo: "nope", Obs: 1, Act: 1, Batch: 1, Seconds: 0.01}); err == nil {
		t.Error("unknown algorithm: no error")
	}
}

// TestFormatReturn: the curve printed NaN as the training return before
// the first episode ended.
func TestFormatReturn(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{math.NaN(), "-"}, {-921.66, "-921.7"}, {0, "0.0"}, {475, "475.0"}} {
		if got := formatReturn(tc.v); got != tc.want {
			t.Errorf("formatReturn(%g) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
