package datacenter

import (
	"github.com/cclab/cclab/learn/rl/ppo"
)

// The paper's consensus penalty (§III, multi-agent learning): "In our fully
// cooperative learning setting, all RL agents share the same reward
// function meanwhile optimizing the team-average reward. The difference in
// value estimation between an RL agent and its neighbors is included as a
// penalty term in its value function update." The paper gives no formula
// and no coefficient; this is the penalty that sentence describes, added to
// PPO's loss (ppo.Penalty) for agent i on each minibatch of B samples:
//
//	L_i = L_clip + c1·L_VF − c2·H + c_cons · (1/B) Σ_b (1/|N_i|) Σ_{j∈N_i} (V_i(o_i,b) − V̂_j,b)²
//
// with, in code:
//   - c_cons: TrainConfig.Consensus (`dc train --consensus`);
//   - b: a minibatch sample, ppo.Minibatch.Rows[b], a time step t of one
//     simulation e (the same row in every agent's rollout, the agents
//     stepping the simulations in lockstep);
//   - V_i(o_i,b): agent i's critic on its own observation, under the
//     parameters being updated (ppo.Minibatch.Values);
//   - N_i: the neighbours, every other agent of the simulation (the K agents
//     share one ToR link, so all are connected);
//   - V̂_j,b: agent j's value estimate of the same step and simulation from
//     its own observation o_j,b, as recorded when the rollout was collected
//     (ppo.PPO.RolloutValues): the estimates the agents exchange at the end
//     of each rollout, held fixed during the update (no gradient reaches
//     them, as the sentence puts the term in agent i's own update).
//
// All agents' critics estimate the same quantity, the team-average return
// from the current state of the data centre, each from its partial
// observation, so the penalty asks them to agree on it. Its gradient,
//
//	∂L_i/∂V_i(o_i,b) += 2·c_cons/(B·|N_i|) · Σ_{j∈N_i} (V_i(o_i,b) − V̂_j,b),
//
// enters PPO's backward pass through the critic only (the actor is
// untouched), before the joint gradient-norm clipping. It is added to the
// loss with its own coefficient, not scaled by vf_coef.
//
// With parameter sharing (Shared mode) there is one critic, but its
// estimates from different agents' observations of the same step still
// differ; the same penalty then compares row e·K+i with rows e·K+j of the
// same step of the one learner's rollout.
type consensus struct {
	coef float64
	k    int
	// vals[j] is agent j's rollout values (independent learners, copied
	// after every joint Collect); nil in Shared mode, where own is read.
	vals [][]float32
	own  *ppo.PPO
}

// penalty returns agent i's penalty (independent learners) or, with i < 0,
// the shared learner's.
func (c *consensus) penalty(i int) ppo.Penalty {
	return func(mb *ppo.Minibatch) float64 { return c.eval(i, mb) }
}

// share copies every learner's rollout values after a joint Collect, so
// that the concurrent updates read a fixed table.
func (c *consensus) share(ls []*ppo.PPO) {
	if c.vals == nil {
		c.vals = make([][]float32, len(ls))
	}
	for j, l := range ls {
		c.vals[j] = append(c.vals[j][:0], l.RolloutValues()...)
	}
}

func (c *consensus) eval(i int, mb *ppo.Minibatch) float64 {
	B := len(mb.Rows)
	n := float64(c.k - 1)
	if B == 0 || n < 1 {
		return 0
	}
	var own []float32
	if c.vals == nil {
		own = c.own.RolloutValues()
	}
	g := 2 * c.coef / (float64(B) * n)
	var loss float64
	for b, row := range mb.Rows {
		v := float64(mb.Values[b])
		var sq, diff float64
		for j := range c.k {
			var vj float64
			if c.vals != nil {
				if j == i {
					continue
				}
				vj = float64(c.vals[j][row])
			} else {
				// Shared: rows e·K+0 … e·K+K−1 of a step are the agents of
				// simulation e.
				me := row % c.k
				if j == me {
					continue
				}
				vj = float64(own[row-me+j])
			}
			d := v - vj
			sq += d * d
			diff += d
		}
		loss += sq
		mb.DValues[b] += float32(g * diff)
	}
	return c.coef * loss / (float64(B) * n)
}
