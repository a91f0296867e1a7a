package newreno

import "github.com/cclab/cclab/core/units"

// UndoTimeout takes back a retransmission timeout found spurious (the
// transport's F-RTO): the window and threshold become at least what they
// were before it, as Linux's tcp_reno_undo_cwnd and
// tcp_undo_cwnd_reduction.
func (r *Reno) UndoTimeout(cwnd, ssthresh units.Bytes) {
	r.cwnd = max(r.cwnd, cwnd)
	r.ssthresh = max(r.ssthresh, ssthresh)
}
