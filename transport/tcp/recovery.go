package tcp

import (
	"math"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

type phase uint8

// The order is Linux's (tcp_ca_state): belowRecovery and reducing test
// it with one comparison each.
const (
	open      phase = iota
	cwr             // an ECN window reduction (ecn.go)
	recovery        // fast recovery (RFC 6675)
	lossPhase       // after a retransmission timeout
)

// prrTarget is implemented by controllers whose window reduction the
// transport paces with PRR: the target is their slow-start threshold.
type prrTarget interface {
	Ssthresh() units.Bytes
}

// segs converts bytes to whole segments, rounding up.
func (s *Sender) segs(b units.Bytes) int64 {
	return (int64(b) + int64(s.cfg.MSS) - 1) / int64(s.cfg.MSS)
}

// detectLoss marks lost every un-SACKed segment with at least DupThresh
// SACKed segments above it (RFC 6675 §4 IsLost, counting full segments).
func (s *Sender) detectLoss() {
	if s.highSacked < s.unaSeg {
		return
	}
	count := int32(0)
	bound := int64(-1)
	for k := s.highSacked; k >= s.unaSeg && k >= s.lostFront; k-- {
		if s.seg(k).sacked {
			count++
			if count == s.cfg.DupThresh {
				bound = k
				break
			}
		}
	}
	if bound < 0 {
		return
	}
	for k := max(s.lostFront, s.unaSeg); k < bound; k++ {
		if g := s.seg(k); !g.sacked && !g.lost {
			s.markLost(k, g)
		}
	}
	s.lostFront = max(s.lostFront, bound)
}

// renoAck is NewReno's loss detection without SACK (RFC 6582 §3.2 with
// RFC 5681's duplicate-ACK threshold): it counts duplicate ACKs, marks the
// first unacknowledged segment lost at DupThresh of them, and credits each
// duplicate as a segment that left the network until a cumulative ACK
// covers it (Linux tcp_add_reno_sack / tcp_remove_reno_sacks). Partial ACKs
// are partialAck's, as with SACK.
//
// It also keeps Linux's delivery count: a credited duplicate delivered one
// segment, returned as dup for PRR, and a cumulative ACK delivers only
// the segments no duplicate stood for (at least the hole), returned as
// the bytes to take off acked. Without this the ACK that fills a hole
// hands the controller the whole run of segments the receiver had
// buffered, and Reno grows its window on each recovery by what Linux
// counted, but did not grow on, during it.
func (s *Sender) renoAck(advanced bool, ackNo int64, acked units.Bytes) (dup, credited units.Bytes) {
	mss := s.cfg.MSS
	if advanced {
		s.dupAcks = 0
		// The first newly acknowledged segment is the hole; the others
		// are the ones the duplicates stood for.
		if acked > mss {
			credited = min(s.renoSacked, acked-mss)
		}
		s.renoSacked -= credited
		if s.n == 0 || s.belowRecovery() || s.una >= s.recoveryPoint {
			// Recovery is over: every hole is filled (Linux
			// tcp_reset_reno_sack).
			s.renoSacked = 0
		}
		return 0, credited
	}
	if ackNo != s.una || s.n == 0 {
		return 0, 0
	}
	if s.renoHold() {
		// Linux resets its duplicate count on every ACK of the hold and
		// neither counts nor acts on them (tcp_fastretrans_alert returns
		// after tcp_try_undo_recovery).
		s.renoSacked = 0
		return 0, 0
	}
	if s.dupAcks < math.MaxInt32 {
		s.dupAcks++ // saturates: only the count up to DupThresh matters
	}
	if s.renoSacked+mss <= s.outBytes-s.lost-mss {
		s.renoSacked += mss
		dup = mss
	}
	if s.dupAcks == s.cfg.DupThresh && s.belowRecovery() {
		if g := s.seg(s.unaSeg); !g.lost && !g.retrans {
			s.markLost(s.unaSeg, g)
			s.lostFront = max(s.lostFront, s.unaSeg+1)
		}
	}
	return dup, 0
}

// renoHold reports the state Linux keeps a connection without SACK in
// when SND.UNA has reached the recovery point exactly: recovery (or the
// timeout's loss state) ends only when something above it is
// acknowledged, and duplicate ACKs meanwhile do not start a new fast
// retransmit (RFC 6582 §3.2 step 4's "avoid false fast retransmits"; Linux
// tcp_try_undo_recovery). So a lost first segment after the recovery
// point is repaired by the retransmission timer, as in Linux.
func (s *Sender) renoHold() bool {
	return s.cfg.NoSACK && !s.belowRecovery() && s.una == s.recoveryPoint && s.n > 0
}

// partialAck applies RFC 6582 §3.2 step 5 to an ACK that advanced SND.UNA
// during fast recovery without reaching the recovery point: the first
// unacknowledged segment is lost too. Without it, a hole with fewer than
// DupThresh SACKed segments above it (the tail of a window) waits for the
// retransmission timer; ns-3 does the same. It runs without SACK or
// without RACK only: Linux with SACK gets there by RACK's time order, and
// marking the head at every partial ACK resends segments that are only
// queued behind it (a link switch to a slower radio, where the queue
// drains for seconds).
func (s *Sender) partialAck() {
	if s.phase != recovery || s.una >= s.recoveryPoint || s.n == 0 {
		return
	}
	if g := s.seg(s.unaSeg); !g.sacked && !g.lost && !g.retrans {
		s.markLost(s.unaSeg, g)
		s.lostFront = max(s.lostFront, s.unaSeg+1)
	}
}

// updateRecovery leaves recovery once the recovery point is acknowledged,
// and enters fast recovery when an ACK in the open state reveals new loss:
// one congestion response per window of data (RFC 6675 §5 step
// (4.1)-(4.2), RFC 6582). With LinuxRecoveryStart it enters as Linux 6.18
// does: from the open state on any ACK with a segment marked lost and not
// yet delivered, and from a timeout's loss state when leaveLoss says the
// event marked a segment lost as Linux's do that leave it: an ACK on
// which RACK found a retransmission lost (tcp_fastretrans_alert's
// FLAG_LOST_RETRANS) or RACK's reordering timer marking any segment
// (tcp_rack_reo_timeout). acked is what the ACK delivered and advanced
// whether it moved SND.UNA, and ece whether it echoed a CE mark on an ECN
// connection (ecn.go): in the open state it starts an ECN reduction.
func (s *Sender) updateRecovery(now clock.Time, priorInFlight units.Bytes, newlyLost int64, acked units.Bytes, advanced, leaveLoss, ece bool) {
	// An ECN reduction lasts until something above its point is
	// acknowledged, so that the CWR flag has reached the receiver.
	if s.phase != open && s.una >= s.recoveryPoint && !s.renoHold() && (s.phase != cwr || s.una > s.recoveryPoint) {
		if s.phase != lossPhase {
			s.cc.OnRecoveryEnd(now)
		}
		s.phase = open
	}
	entered := false
	if s.belowRecovery() && (newlyLost > 0 || s.lost > 0 && s.cfg.LinuxRecoveryStart) ||
		s.phase == lossPhase && leaveLoss && s.cfg.LinuxRecoveryStart && !s.cfg.NoSACK && !s.cfg.NoRACK {
		// From an ECN reduction, recovery keeps its point and PRR's
		// count and makes no second reduction (tcp_enter_recovery
		// inits a reduction only outside one).
		inCWR := s.phase == cwr
		s.phase = recovery
		s.stats.FastRecoveries++
		if !inCWR {
			s.initReduction(priorInFlight)
		}
		ev := &s.scr().lossEv
		*ev = cc.LossEvent{PriorInFlight: priorInFlight, LostBytes: units.Bytes(newlyLost) * s.cfg.MSS, InCWR: inCWR}
		s.cc.OnCongestionEvent(now, ev)
		entered = !inCWR
	} else if ece && s.phase == open {
		s.phase = cwr
		s.counts().ecnReductions++
		s.initReduction(priorInFlight)
		ev := &s.scr().lossEv
		*ev = cc.LossEvent{PriorInFlight: priorInFlight, ECN: true}
		s.cc.OnCongestionEvent(now, ev)
		entered = true
	}
	if s.reducing() && s.prr != nil {
		if s.cfg.LinuxPRR {
			s.prrLinux(priorInFlight, newlyLost, acked, advanced, entered)
		} else {
			s.prrUpdate(acked)
		}
	}
}

// initReduction starts a window reduction, a recovery's or an ECN echo's
// (tcp_init_cwnd_reduction): its point, PRR's counts, and, on an ECN
// connection, CWR on the next new data segment.
func (s *Sender) initReduction(priorInFlight units.Bytes) {
	s.recoveryPoint = s.nxt
	s.prrDelivered, s.prrOut, s.prrRecoverFS = 0, 0, s.segs(priorInFlight)
	if s.cfg.LinuxPRR {
		// Linux's divisor is the window, read before the controller
		// reduces it (tcp_init_cwnd_reduction's prior_cwnd), in whole
		// segments as its packet-counted window.
		s.prrRecoverFS = max(int64(s.cc.CongestionWindow())/int64(s.cfg.MSS), 1)
	}
	if s.cfg.ECN != ECNOff {
		s.cwrPending = true
	}
}

// prrLinux is prrUpdate as Linux 6.18's tcp_cwnd_reduction computes it
// (Config.LinuxPRR). Linux sets its window to the flight plus the
// segments it allows, so the allowance is the room under that window:
// when an event delivers nothing the window stays, and what it marked
// lost left the flight and adds to the room.
func (s *Sender) prrLinux(priorInFlight units.Bytes, newlyLost int64, delivered units.Bytes, advanced, entered bool) {
	pipe := s.segs(s.InFlight())
	d := s.segs(delivered)
	if d <= 0 {
		if entered {
			// Still the window from before the loss (prrRecoverFS).
			s.prrAllow = s.prrRecoverFS - pipe
		} else {
			s.prrAllow += s.segs(priorInFlight) - pipe
		}
		return
	}
	s.prrDelivered += d
	ssth := max(int64(s.prr.Ssthresh())/int64(s.cfg.MSS), 1)
	var sndcnt int64
	if pipe > ssth {
		sndcnt = (s.prrDelivered*ssth+s.prrRecoverFS-1)/s.prrRecoverFS - s.prrOut
	} else {
		// Slow-start Reduction Bound, with its extra segment only when
		// the ACK made progress without revealing more loss.
		sndcnt = max(s.prrDelivered-s.prrOut, d)
		if advanced && newlyLost == 0 {
			sndcnt++
		}
		sndcnt = min(ssth-pipe, sndcnt)
	}
	// Never below the flight (Linux: max(sndcnt, prr_out ? 0 : 1)), and
	// the fast retransmission goes at once.
	if s.prrOut == 0 {
		sndcnt = max(sndcnt, 1)
	}
	s.prrAllow = max(sndcnt, 0)
}

// prrUpdate computes how many segments may be sent in reaction to an ACK
// that delivered delivered bytes during fast recovery (RFC 6937 §3.1 with
// Slow Start Reduction Bound, in packets as Linux tcp_cwnd_reduction).
func (s *Sender) prrUpdate(delivered units.Bytes) {
	d := s.segs(delivered)
	s.prrDelivered += d
	pipe := s.segs(s.InFlight())
	ssth := max(int64(s.prr.Ssthresh())/int64(s.cfg.MSS), 1)
	var sndcnt int64
	if pipe > ssth {
		// Reduce proportionally: prr_delivered * ssthresh / RecoverFS.
		sndcnt = (s.prrDelivered*ssth+s.prrRecoverFS-1)/max(s.prrRecoverFS, 1) - s.prrOut
	} else {
		// Slow-start back up to ssthresh, at most one more than delivered.
		sndcnt = min(ssth-pipe, max(s.prrDelivered-s.prrOut, d)+1)
	}
	if s.prrOut == 0 {
		sndcnt = max(sndcnt, 1) // the fast retransmission goes at once
	}
	s.prrAllow = max(sndcnt, 0)
}

// prrSent counts a segment sent under PRR.
func (s *Sender) prrSent() {
	if s.reducing() && s.prr != nil {
		s.prrAllow--
		s.prrOut++
	}
}
