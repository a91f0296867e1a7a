package tcp

import "github.com/cclab/cclab/core/units"

// F-RTO (RFC 5682, SACK-enhanced as Linux's tcp_frto=2, in
// tcp_process_loss) with Linux's undo (tcp_try_undo_loss): after a
// retransmission timeout, an ACK that acknowledges (cumulatively or by SACK)
// a segment that was never retransmitted shows that the timed-out data had
// not been lost, only delayed. The timeout was spurious: the segments still
// marked lost are unmarked, so the rest of the window is not sent again,
// the sender returns to the open state and the controller gets back the
// window and threshold it had before the timeout (Linux
// tcp_undo_cwnd_reduction: cwnd = max(cwnd, prior), ssthresh = max(ssthresh,
// prior)). The first ACK after the timeout decides: a duplicate ACK, or one
// that acknowledges only retransmissions, means the loss was real (RFC 5682
// step 2a; step 2b's wait for a second ACK after sending new data is not
// modelled: such timeouts count as real).

// undoer is implemented by controllers that can take back a timeout's
// window reduction.
type undoer interface {
	UndoTimeout(cwnd, ssthresh units.Bytes)
}

// frtoState is F-RTO's state beside the sender's per-ACK flags
// (Sender.frtoActive, Sender.frtoOrigAcked).
type frtoState struct {
	priorCwnd     units.Bytes
	priorSsthresh units.Bytes
}

// frtoOnRTO runs before a timeout changes any state. As Linux
// (tcp_enter_loss), F-RTO applies to a timeout in the open state or to a
// repeated timeout, not to one during fast recovery.
func (s *Sender) frtoOnRTO() {
	f := &s.frto
	if s.cfg.NoFRTO || s.cfg.NoSACK {
		return
	}
	switch s.phase {
	case open, cwr:
		s.frtoActive, s.frtoUndo = true, true
		f.priorCwnd = s.cc.CongestionWindow()
		f.priorSsthresh = 0
		if s.prr != nil {
			f.priorSsthresh = s.prr.Ssthresh()
		}
	case lossPhase:
		s.frtoActive = true // keep the priors of the first timeout
	default:
		s.frtoActive, s.frtoUndo = false, false
	}
}

// frtoAck examines an ACK after a timeout.
func (s *Sender) frtoAck() {
	f := &s.frto
	orig := s.frtoOrigAcked
	s.frtoOrigAcked = false
	if !s.frtoActive {
		return
	}
	if s.phase != lossPhase {
		s.frtoActive = false
		return
	}
	if !orig {
		// Only retransmissions acknowledged, or a duplicate ACK.
		s.frtoActive = false
		return
	}
	s.frtoActive = false
	s.stats.SpuriousRTOs++
	for k := s.unaSeg; k < s.nxtSeg(); k++ {
		if g := s.seg(k); g.lost && !g.retrans {
			g.lost = false
			s.lost -= g.len
			s.shortPipe(g, 1)
		}
	}
	s.lostFront, s.rackFront, s.rackScan = s.unaSeg, s.unaSeg, s.unaSeg
	s.resetRetxHint()
	s.phase = open
	if u, ok := s.cc.(undoer); ok && s.frtoUndo {
		u.UndoTimeout(f.priorCwnd, f.priorSsthresh)
	}
	s.frtoUndo = false
}
