package datacenter

import (
	"context"
	"fmt"
	"slices"

	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/ppo"
)

// OnlineLR is the paper's learning rate during evaluation ("evaluate it
// online with a learning rate of 1e-4").
const OnlineLR = 1e-4

// OnlineEvaluate evaluates pol while it keeps learning, the paper's online
// evaluation: one PPO learner whose actor starts from pol (observations
// normalised with pol's frozen statistics, a fresh critic) plays the
// episodes of seeds in order, one episode per update at learning rate lr,
// so every episode is played by the policy as updated by the ones before.
// It returns each episode's metrics. The actor samples its actions (PPO
// learns from its own stochastic policy), where a frozen evaluation takes
// the policy's mode; a continuous policy's exploration noise starts at a
// standard deviation of e^-2 ≈ 0.14 of the action range's half-width.
func OnlineEvaluate(ctx context.Context, cfg Config, pol *policy.Policy, lr float64, seeds []uint64) ([]Metrics, error) {
	if !(lr > 0 && lr < 1) {
		return nil, fmt.Errorf("datacenter: online learning rate %g must be in (0, 1)", lr)
	}
	if len(seeds) == 0 {
		return nil, fmt.Errorf("datacenter: no evaluation episodes")
	}
	if pol.Members != nil {
		// Online learning continues one actor's weights; an ensemble has
		// several.
		return nil, fmt.Errorf("datacenter: online evaluation continues one policy's training; an ensemble of %d cannot be, evaluate a member", len(pol.Members))
	}
	if err := CheckPolicies(cfg, []*policy.Policy{pol}); err != nil {
		return nil, err
	}
	mv, err := NewMultiVec(cfg, 1, 1)
	if err != nil {
		return nil, err
	}
	var out []Metrics
	mv.episodeSeeds = slices.Clone(seeds)
	mv.onEnd = func(st *EpisodeStats) { out = append(out, st.Metrics()) }
	nv, err := env.NewVecNormalize(mv, pol.Norm != nil, false, 0.8)
	if err != nil {
		return nil, err
	}
	if pol.Norm != nil {
		nv.Obs = pol.Norm.Clone()
	}
	nv.Training = false
	sizes := pol.Net.Sizes
	ent := 0.0
	if cfg.Action == Discrete {
		ent = 0.01
	}
	rows := mv.NumEnvs()
	l, err := ppo.New(nv, ppo.Config{Seed: seeds[0], LearningRate: lr, NSteps: cfg.Steps, BatchSize: cfg.Steps * rows, NEpochs: 10,
		Gamma: 0.8, GAELambda: 0.9, EntCoef: ent, Hidden: slices.Clone(sizes[1 : len(sizes)-1])}, nil)
	if err != nil {
		return nil, err
	}
	if len(l.AC.Pi.Params) != len(pol.Net.Params) {
		return nil, fmt.Errorf("datacenter: the policy's network (%v) does not fit a PPO actor", sizes)
	}
	copy(l.AC.Pi.Params, pol.Net.Params)
	for i := range l.AC.LogStd {
		l.AC.LogStd[i] = -2
	}
	for len(out) < len(seeds) {
		if err := l.Iterate(ctx); err != nil {
			return nil, err
		}
	}
	return out[:len(seeds)], nil
}
