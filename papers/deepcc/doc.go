// Package deepcc builds DeepCC ("DeepCC: Bridging the Gap
// Between Congestion Control and Applications via Multi-Objective
// Optimization") on cclab: a goal-conditioned DDPG agent whose input holds
// the network state, a measurement vector m_t = (throughput, -delay, -loss)
// and a goal vector g_t on the simplex, trained with the reward g_t · m_t
// and a random goal per episode so that one agent covers the trade-off
// space; an online goal tuner (package deepcc/tuner) that steers g_t to meet
// an application's target; and the paper's evaluation: throughput against
// 95th-percentile queueing delay for several goals on held-out cellular
// traces against CUBIC, BBR, Vegas and NewReno, and the Target Completion
// Ratio (TCR).
//
// Files, one job each:
//
//	goal.go      the goal vector and its sampling
//	measure.go   the measurement vector and the reward
//	features.go  the state features and the bandwidth filter
//	link.go      links (traces, fixed rates) and the training sampler
//	env.go       the environment (rl/env.Env)
//	train.go     DDPG training
//	run.go       one evaluation run: DeepCC (fixed goal or tuned) or a classic controller
//	eval.go      the multi-objective evaluation and the TCR study
//	tcr.go       application targets and the completion ratio
//
// docs/deepcc.md documents the design choices, how to run it and the
// results.
package deepcc

import (
	// The controllers DeepCC runs: external (the agent's) and the
	// classic baselines.
	_ "github.com/cclab/cclab/cc/all"
)
