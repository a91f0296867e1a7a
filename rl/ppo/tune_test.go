package ppo

import (
	"fmt"
	"os"
	"testing"

	"github.com/cclab/cclab/rl"
	"github.com/cclab/cclab/rl/env"
	"github.com/cclab/cclab/rl/pendulum"
	"github.com/cclab/cclab/rl/policy"
)

func TestTune(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	type variant struct {
		name string
		k    int
		norm bool
		cfg  Config
	}
	vs := []variant{
		{"base4", 4, true, Config{NSteps: 1024, Gamma: 0.9, GAELambda: 0.95, LearningRate: 1e-3}},
		{"k8n512", 8, true, Config{NSteps: 512, Gamma: 0.9, GAELambda: 0.95, LearningRate: 1e-3}},
		{"k4bs256", 4, true, Config{NSteps: 1024, BatchSize: 256, Gamma: 0.9, GAELambda: 0.95, LearningRate: 1e-3, NEpochs: 20}},
		{"relu256", 4, true, Config{NSteps: 1024, Gamma: 0.9, GAELambda: 0.95, LearningRate: 3e-4, Hidden: []int{256, 256}}},
		{"nonorm", 4, false, Config{NSteps: 1024, Gamma: 0.9, GAELambda: 0.95, LearningRate: 1e-3}},
		{"g95", 4, true, Config{NSteps: 1024, Gamma: 0.95, GAELambda: 0.95, LearningRate: 1e-3}},
	}
	for _, v := range vs {
		for seed := uint64(1); seed <= 3; seed++ {
			envs := make([]env.Env, v.k)
			for i := range envs {
				envs[i] = pendulum.New()
			}
			var ve env.VecEnv
			vv, _ := env.NewVec(envs, 1)
			ve = vv
			if v.norm {
				ve, _ = env.NewVecNormalize(vv, true, true, v.cfg.Gamma)
			}
			cfg := v.cfg
			cfg.Seed = seed
			p, err := New(ve, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			train(t, p, 200000)
			pol, _ := p.Policy(policy.Meta{})
			ev, _ := rl.Evaluate(pol, pendulum.New(), 10, 1000000+1000*seed)
			fmt.Printf("%s seed %d: %.1f ± %.1f\n", v.name, seed, ev.Mean, ev.Std)
		}
	}
}
