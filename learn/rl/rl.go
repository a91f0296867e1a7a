// Package rl is cclab's learning core. This package ties the pieces
// together: the Agent interface every algorithm implements, Train (the
// training loop with periodic atomic checkpoints and resume), and Evaluate
// (mean return of a deterministic policy over fresh episodes).
//
// Subpackages, one job each:
//
//	space       observation and action spaces (Box, Discrete)
//	env         Env interface (Gymnasium semantics), vectorised runner, wrappers
//	nn          float32 MLPs on a BLAS interface, Adam/RMSprop, policy heads, losses
//	norm        running mean/variance and observation normalisation
//	buffer      replay buffer; rollout buffer with GAE
//	sac, ppo, ddpg, dqn, a2c   the algorithms (Stable-Baselines3 defaults)
//	policy      trained actors as versioned, checksummed files
//	checkpoint  atomic, checksummed training checkpoints
//	trainlog    CSV statistics and progress bar
//	pendulum, cartpole   reference tasks (Gymnasium Pendulum-v1, CartPole-v1)
//
// Determinism: every algorithm takes a seed and derives independent
// streams (initialisation, exploration, minibatch sampling, environment
// episodes) from it; the vectorised runner gathers results in environment
// order. The same seed, number of environments, BLAS backend and thread
// count give byte-identical networks.
package rl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cclab/cclab/learn/rl/checkpoint"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/policy"
)

// Agent is a learning algorithm bound to its environments.
type Agent interface {
	// Kind names the algorithm ("sac", "ppo", ...); it tags checkpoints.
	Kind() string
	// Iterate runs one iteration: collect experience and update (SAC and
	// DDPG: TrainFreq steps then gradient steps; PPO/A2C: one rollout and
	// its epochs). If ctx is already cancelled it returns ctx.Err() and
	// changes nothing; otherwise it completes the iteration, so the state
	// between iterations is always consistent for a checkpoint.
	Iterate(ctx context.Context) error
	// Steps returns the environment steps taken so far (transitions summed
	// over environments).
	Steps() int64
	// Policy snapshots the current deterministic actor.
	Policy(meta policy.Meta) (*policy.Policy, error)
	// Save and Load write and restore the complete training state:
	// networks, optimiser moments, buffers, random streams, counters and,
	// when the environments support it, their state.
	Save(e *checkpoint.Encoder) error
	Load(d *checkpoint.Decoder) error
}

// TrainConfig controls Train.
type TrainConfig struct {
	// Steps is the total number of environment steps to reach.
	Steps int64
	// CheckpointPath, if set, is where checkpoints are written, every
	// CheckpointEvery of wall time (default 5 minutes), when ctx is
	// cancelled, and at the end.
	CheckpointPath  string
	CheckpointEvery time.Duration
	// Now reads the wall clock; it only schedules checkpoints and measures
	// training wall time, never algorithm behaviour. Default time.Now.
	Now func() time.Time
	// AfterIteration, if set, runs after each iteration (evaluation,
	// learning-curve output). An error stops training.
	AfterIteration func(a Agent) error
}

// Run describes a finished (or interrupted) training run.
type Run struct {
	// WallSeconds is the training wall time, including time before a
	// resume.
	WallSeconds float64
	// Resumed reports whether training continued from a checkpoint.
	Resumed bool
}

// Train runs a until it has taken cfg.Steps environment steps. If
// checkpointing is on and resume is true and a checkpoint exists, training
// continues from it (at most one checkpoint interval of work is lost to a
// kill). Cancelling ctx writes a checkpoint and returns ctx's error.
func Train(ctx context.Context, a Agent, cfg TrainConfig, resume bool) (Run, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	every := cfg.CheckpointEvery
	if every <= 0 {
		every = 5 * time.Minute
	}
	var run Run
	if resume && cfg.CheckpointPath != "" && checkpoint.Exists(cfg.CheckpointPath) {
		wall, err := LoadCheckpoint(cfg.CheckpointPath, a)
		if err != nil {
			return run, err
		}
		run.WallSeconds, run.Resumed = wall, true
	}
	start := now()
	base := run.WallSeconds
	lastCk := start
	save := func() error {
		if cfg.CheckpointPath == "" {
			return nil
		}
		lastCk = now()
		return SaveCheckpoint(cfg.CheckpointPath, a, base+now().Sub(start).Seconds())
	}
	for a.Steps() < cfg.Steps {
		if err := ctx.Err(); err != nil {
			run.WallSeconds = base + now().Sub(start).Seconds()
			return run, errors.Join(err, save())
		}
		if err := a.Iterate(ctx); err != nil {
			run.WallSeconds = base + now().Sub(start).Seconds()
			if ctx.Err() != nil {
				// Iterate refuses to start once ctx is cancelled, leaving the
				// state as after the previous iteration: save it.
				return run, errors.Join(err, save())
			}
			return run, err
		}
		if cfg.AfterIteration != nil {
			if err := cfg.AfterIteration(a); err != nil {
				return run, err
			}
		}
		if cfg.CheckpointPath != "" && now().Sub(lastCk) >= every {
			if err := save(); err != nil {
				return run, err
			}
		}
	}
	run.WallSeconds = base + now().Sub(start).Seconds()
	return run, save()
}

// SaveCheckpoint writes a's state and the accumulated wall time to path
// atomically.
func SaveCheckpoint(path string, a Agent, wallSeconds float64) error {
	return checkpoint.Save(path, a.Kind(), func(e *checkpoint.Encoder) error {
		e.Float64("train.wall_s", wallSeconds)
		return a.Save(e)
	})
}

// LoadCheckpoint restores a from path and returns the wall time recorded.
func LoadCheckpoint(path string, a Agent) (float64, error) {
	var wall float64
	err := checkpoint.Load(path, a.Kind(), func(d *checkpoint.Decoder) error {
		wall = d.Float64("train.wall_s")
		if err := a.Load(d); err != nil {
			return err
		}
		return d.Err()
	})
	if err != nil {
		return 0, fmt.Errorf("resuming from %s: %w", path, err)
	}
	return wall, nil
}

// Evaluation summarises Evaluate.
type Evaluation struct {
	Returns []float64
	Lengths []int
	Mean    float64
	Std     float64 // population standard deviation, as SB3's evaluate_policy
}

// Evaluate runs n episodes of the deterministic policy p on the
// environment e, episode k seeded with seed+k, and returns their
// undiscounted returns (SB3's evaluate_policy with deterministic=True).
// The policy's spaces must match the environment's.
func Evaluate(p *policy.Policy, e env.Env, n int, seed uint64) (Evaluation, error) {
	if err := p.Check(e.ObservationSpace(), e.ActionSpace()); err != nil {
		return Evaluation{}, err
	}
	var ev Evaluation
	for k := 0; k < n; k++ {
		obs, _ := e.Reset(seed + uint64(k))
		var ret float64
		length := 0
		for {
			o, r, term, trunc, _ := e.Step(p.ActInto(obs))
			ret += r
			length++
			obs = o
			if term || trunc {
				break
			}
		}
		ev.Returns = append(ev.Returns, ret)
		ev.Lengths = append(ev.Lengths, length)
	}
	for _, r := range ev.Returns {
		ev.Mean += r / float64(n)
	}
	for _, r := range ev.Returns {
		ev.Std += (r - ev.Mean) * (r - ev.Mean) / float64(n)
	}
	ev.Std = math.Sqrt(ev.Std)
	return ev, nil
}
