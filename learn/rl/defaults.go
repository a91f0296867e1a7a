package rl

import "math"

// The algorithms' configurations (sac, ddpg, dqn, ppo, a2c) all fill their
// defaults the same way: a zero field takes the default, cmp.Or for
// integers and Default for floats. Where zero is a meaningful setting it
// can still be asked for: floats with Zero (Gamma: rl.Zero is a discount of
// 0, a learner that looks one reward ahead; GAELambda: rl.Zero is TD(0)
// advantages), LearningStarts with the NoLearningStarts flag.

// Zero is a float hyper-parameter's explicit zero: negative zero, which
// compares equal to 0 but is told apart from the zero value by its sign,
// and which Default turns into a plain 0.
var Zero = math.Copysign(0, -1)

// Default returns v, def when v is the zero value, and 0 when v is Zero.
func Default(v, def float64) float64 {
	switch {
	case v != 0:
		return v
	case math.Signbit(v):
		return 0
	}
	return def
}
