package cubic

import "github.com/cclab/cclab/core/units"

// UndoTimeout takes back a retransmission timeout found spurious: Linux's
// CUBIC undoes as Reno does (cubictcp_undo_cwnd is tcp_reno_undo_cwnd); the
// curve's state, reset by the timeout, stays reset, as in Linux where
// bictcp_reset ran on entering the loss state.
func (cu *Cubic) UndoTimeout(cwnd, ssthresh units.Bytes) {
	cu.reno.UndoTimeout(cwnd, ssthresh)
}
