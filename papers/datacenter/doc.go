// Package datacenter reproduces the system of "A Deep Reinforcement
// Learning Framework for Optimizing Congestion Control in Data Centers": RL
// agents that never touch the congestion window but, every interval (the
// paper's T2), set BBR's two filter windows, the RTprop (min RTT) window and
// the BtlBw (max bandwidth) window, for the flows they control, from flow
// statistics collected at the hosts.
//
// The pieces, one job each:
//
//	config.go    episode randomisation (the paper's "series of random
//	             events": capacity and path-delay changes at random times,
//	             flows joining and leaving) and the named conditions
//	action.go    BBR parameter actions: a discrete grid (DQN, and PPO/A2C
//	             by default) or a continuous log-scaled box
//	reward.go    the paper's reward (section IV-C)
//	features.go  the observation layout (host-side flow statistics reduced
//	             to order-free summaries, plus the neighbours' shared ones)
//	sim.go       Sim: one simulated data centre shared by K agents (the
//	             paper's RL-host interface: applies parameters, collects
//	             per-flow statistics, computes observations and rewards)
//	env.go       Env: the single-agent env.Env
//	multi.go     MultiVec: K agents × E simulations as one env.VecEnv
//	             (parameter sharing) or as K per-agent views stepped in
//	             lockstep (independent learners)
//	train.go     training with PPO, A2C or DQN, single- and multi-agent
//	stats.go     per-episode measurements (goodput, RTT percentiles,
//	             retransmissions, RTprop accuracy, background FCTs)
//	eval.go      baselines (default BBR, best static setting), evaluation
//	             on training and unseen conditions, traces
//	report.go    learning curves, evaluation figures and HTML report
//
// The trained policies shipped with cclab are in papers/datacenter/policy; results and
// design notes are in docs/datacenter.md.
//
// Everything simulated is deterministic: an episode depends only on its
// seed, time is the simulator's clock, and parallelism is only across
// independent simulations.
package datacenter
