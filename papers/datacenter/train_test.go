package datacenter

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cclab/cclab/learn/rl/trainlog"
)

// smokeConfig is a tiny episode (4 steps of 20 ms) for training runs.
func smokeConfig(t *testing.T) Config {
	cfg := shortConfig(t)
	cfg.Steps = 4
	return cfg
}

// lossField returns the named field of a logger's last row.
func lossField(l *trainlog.Logger, name string) (float64, bool) {
	for _, f := range l.Last {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// TestTrainSmoke runs each algorithm (and both multi-agent modes) for a
// few hundred steps: training finishes, every network parameter and the
// last logged loss are finite, the policy differs from the same seed's
// untrained one, and the policy files record the environment settings.
func TestTrainSmoke(t *testing.T) {
	cases := []struct {
		algo, mode, loss string
		agents           int
		action           ActionKind
		steps            int64
	}{
		{"ppo", Shared, "value_loss", 1, Discrete, 256},
		{"ppo", Independent, "value_loss", 2, Discrete, 256},
		{"ppo", Shared, "value_loss", 2, Continuous, 256},
		{"a2c", Shared, "value_loss", 1, Discrete, 160},
		{"dqn", Shared, "loss", 1, Discrete, 320},
	}
	for _, c := range cases {
		t.Run(c.algo+"-"+c.mode+"-"+c.action.String(), func(t *testing.T) {
			cfg := smokeConfig(t)
			cfg.Agents = c.agents
			cfg.Action = c.action
			tc := TrainConfig{Env: cfg, Algo: c.algo, Mode: c.mode, Steps: c.steps, Envs: 2, Seed: 3}
			res, err := Train(context.Background(), tc)
			if err != nil {
				t.Fatal(err)
			}
			wantPolicies := 1
			if c.mode == Independent {
				wantPolicies = c.agents
			}
			if len(res.Policies) != wantPolicies || len(res.Learners) != wantPolicies {
				t.Fatalf("%d policies and %d learners, want %d", len(res.Policies), len(res.Learners), wantPolicies)
			}
			if res.Intervals < c.steps {
				t.Fatalf("trained %d intervals, want at least %d", res.Intervals, c.steps)
			}
			for i, p := range res.Policies {
				for _, w := range p.Net.Params {
					if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
						t.Fatalf("policy %d has a non-finite weight", i)
					}
				}
				if p.Norm == nil {
					t.Fatalf("policy %d has no observation normaliser", i)
				}
				if p.Meta.Extra["agents"] == "" || p.Meta.Extra["action"] != c.action.String() {
					t.Fatalf("policy %d metadata %v lacks the environment settings", i, p.Meta.Extra)
				}
				if err := CheckPolicies(cfg, res.Policies); err != nil {
					t.Fatal(err)
				}
			}
			for i, l := range res.Loggers {
				v, ok := lossField(l, c.loss)
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("learner %d: last %s = %v (present %v), want a finite loss", i, c.loss, v, ok)
				}
			}
			// The same seed's learner before training.
			tc.defaults()
			mv, err := NewMultiVec(cfg, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := newLearner(&tc, mv, tc.Seed, tc.Steps, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			p0, err := fresh.Policy(res.Policies[0].Meta)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Equal(p0.Net.Params, res.Policies[0].Net.Params) {
				t.Fatal("the trained policy equals the untrained one")
			}
		})
	}
}

// TestTrainLossesMove checks within one PPO run that the value loss
// changes from update to update and the policy moves away from uniform.
func TestTrainLossesMove(t *testing.T) {
	cfg := smokeConfig(t)
	var losses []float64
	var ents []float64
	tc := TrainConfig{Env: cfg, Algo: "ppo", Steps: 768, Envs: 2, Seed: 5}
	tc.defaults()
	mv, err := NewMultiVec(cfg, tc.Envs, 0)
	if err != nil {
		t.Fatal(err)
	}
	logger := &trainlog.Logger{}
	l, err := newLearner(&tc, mv, tc.Seed, tc.Steps, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	for l.Steps() < tc.Steps {
		if err := l.Iterate(context.Background()); err != nil {
			t.Fatal(err)
		}
		v, _ := lossField(logger, "value_loss")
		e, _ := lossField(logger, "entropy_loss")
		if math.IsNaN(v) || math.IsNaN(e) {
			t.Fatalf("NaN loss at step %d: value %v entropy %v", l.Steps(), v, e)
		}
		losses = append(losses, v)
		ents = append(ents, e)
	}
	if len(losses) < 3 {
		t.Fatalf("only %d updates", len(losses))
	}
	moved := false
	for _, v := range losses[1:] {
		moved = moved || v != losses[0]
	}
	if !moved {
		t.Fatalf("value loss never changed: %v", losses)
	}
	// Entropy loss is −H; H of a uniform policy over the grid is
	// ln(actions). Updates with the entropy bonus and clipping keep it
	// near, but the policy must have moved.
	uniform := -math.Log(float64(len(GridMinRTT) * len(GridBwRounds)))
	if ents[len(ents)-1] == ents[0] || ents[len(ents)-1] < uniform-1e-6 {
		t.Fatalf("entropy loss went %v → %v (uniform %v)", ents[0], ents[len(ents)-1], uniform)
	}
}

func TestTrainConfigErrors(t *testing.T) {
	cfg := smokeConfig(t)
	bad := func(tc TrainConfig, want string) {
		t.Helper()
		_, err := Train(context.Background(), tc)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want an error containing %q", err, want)
		}
	}
	bad(TrainConfig{Env: cfg, Algo: "sac"}, "unknown algorithm")
	c := cfg
	c.Action = Continuous
	bad(TrainConfig{Env: c, Algo: "dqn"}, "discrete")
	c = cfg
	c.Agents = 2
	bad(TrainConfig{Env: c, Mode: Independent, Checkpoint: "x.ckpt"}, "single learner")
	bad(TrainConfig{Env: cfg, Mode: "both"}, "multi-agent mode")
	bad(TrainConfig{Env: cfg, Hidden: []int{0}}, "hidden width")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.Agents = 2
	_, err := Train(ctx, TrainConfig{Env: c, Mode: Independent, Steps: 100, Envs: 1})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("cancelled independent training: %v", err)
	}
}

// TestTrainDeterministic: the same seed gives byte-identical policies,
// also for independent learners stepping in lockstep from goroutines and
// with several workers stepping the simulations.
func TestTrainDeterministic(t *testing.T) {
	for _, mode := range []string{Shared, Independent} {
		cfg := smokeConfig(t)
		cfg.Agents = 2
		run := func(workers int) [][]float32 {
			res, err := Train(context.Background(), TrainConfig{Env: cfg, Algo: "ppo", Mode: mode, Steps: 256, Envs: 2, Workers: workers, Seed: 8})
			if err != nil {
				t.Fatal(err)
			}
			var ps [][]float32
			for _, p := range res.Policies {
				ps = append(ps, p.Net.Params)
			}
			return ps
		}
		a, b := run(1), run(2)
		for i := range a {
			if !slices.Equal(a[i], b[i]) {
				t.Fatalf("%s: policy %d differs between two runs with seed 8", mode, i)
			}
		}
	}
}

// TestCheckpointResume: a single learner checkpoints and a second run
// continues from the checkpoint to the new budget.
func TestCheckpointResume(t *testing.T) {
	cfg := smokeConfig(t)
	ck := filepath.Join(t.TempDir(), "dc.ckpt")
	tc := TrainConfig{Env: cfg, Algo: "ppo", Steps: 256, Envs: 2, Seed: 6, Checkpoint: ck}
	if _, err := Train(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	tc.Steps, tc.Resume = 512, true
	res, err := Train(context.Background(), tc)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Run.Resumed || res.Learners[0].Steps() != 512 {
		t.Fatalf("resumed %v at %d steps, want a resumed run ending at 512", res.Run.Resumed, res.Learners[0].Steps())
	}
}
