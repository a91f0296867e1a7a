package marlin

// Reward is equation 1 of the MARLIN paper:
//
//	r_t = - target_t [1 + r (1 - loss_c)] / (target_t + acked_t)
//
// target_t is the payload the flow could have delivered since the start of
// the episode to fully use the link (capacity minus the competing traffic's
// influx, see Env.linkLeft), acked_t the payload acknowledged since the
// start, both in KB (the paper's
// "kilobytes"; only their ratio matters); r is the number of
// retransmissions in the step and lossC the link's current random-loss
// probability. The reward is in [-(1+r), 0): close to -1/2 when the flow
// keeps up with its share, lower when it falls behind or retransmits, and it
// forgives retransmissions in proportion to the link's random loss, which
// the agent cannot avoid.
func Reward(targetKB, ackedKB float64, retransmissions int, lossC float64) float64 {
	if targetKB+ackedKB <= 0 {
		// Before anything could have been delivered the formula is 0/0;
		// its limit along target = 0 is 0.
		return 0
	}
	return -targetKB * (1 + float64(retransmissions)*(1-lossC)) / (targetKB + ackedKB)
}
