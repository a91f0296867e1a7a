package tcp

import (
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
)

// Tail Loss Probe (RFC 8985 §7; Linux tcp_schedule_loss_probe,
// tcp_send_loss_probe, tcp_process_tlp_ack, on by default with
// tcp_early_retrans=3). When the sender is in the open state and no ACK has
// come for a probe timeout (PTO, about two SRTT), it sends one segment (new
// data if there is any, else the highest outstanding segment again) so
// that the tail of a window that was lost produces an ACK whose SACK
// information triggers fast recovery, instead of waiting for the RTO.

// tlpState is the sender's probe state.
type tlpState struct {
	timer clock.Timer
	high  int64 // SND.NXT when the probe was sent; 0 when no probe is out
}

func (s *Sender) tlpEnabled() bool { return !s.cfg.NoTLP && !s.cfg.NoSACK && !s.cfg.PacketTimers }

// scheduleTLP (re)arms the probe timer after a send (sent) or an ACK (which
// advanced SND.UNA or not, and SACKed data first sent at sackOldest).
func (s *Sender) scheduleTLP(now clock.Time, sent, advanced bool, sackOldest clock.Time) {
	t := &s.tlp
	// The timer exists exactly when TLP is enabled (InitSender; the
	// configuration does not change after).
	if t.timer == nil {
		return
	}
	if s.cfg.LinuxTLPTimer {
		s.scheduleLinuxTLP(now, sent, advanced, sackOldest)
		return
	}
	if !s.probeMayWait() {
		t.timer.Stop()
		return
	}
	at := now.Add(s.pto())
	if d := s.rtoT.Deadline(); d != clock.Never && d <= at {
		// The RTO comes first: no probe, and the RTO handles the tail.
		t.timer.Stop()
		return
	}
	t.timer.Reset(at)
}

// xmitTimerAck reports whether an ACK re-arms the retransmission timer
// (Linux's FLAG_SET_XMIT_TIMER): it advanced SND.UNA, or SACKed original
// data sent before the first unacknowledged segment's last transmission
// (tcp_clean_rtx_queue, for a SACK RTT longer than the head's age; not
// with Config.RFC6298RTO).
func (s *Sender) xmitTimerAck(advanced bool, sackOldest clock.Time) bool {
	return advanced || (sackOldest != clock.Never && !s.cfg.RFC6298RTO && sackOldest < s.seg(s.unaSeg).sentAt)
}

// scheduleLinuxTLP is scheduleTLP with Config.LinuxTLPTimer: Linux's one
// timer, on which tcp_schedule_loss_probe arms the probe at the earlier of
// the PTO and the RTO, in the RTO's place. It refuses outside the open and
// CWR states, Disorder included, where the RTO stays armed instead; and
// tcp_ack re-arms the timer only from an ACK that acknowledged or SACKed
// data (xmitTimerAck), so any other ACK leaves a pending probe where it
// was.
func (s *Sender) scheduleLinuxTLP(now clock.Time, sent, advanced bool, sackOldest clock.Time) {
	t := &s.tlp
	if !s.probeMayWait() || s.caState == caDisorder {
		t.timer.Stop()
		return
	}
	if !sent && !s.xmitTimerAck(advanced, sackOldest) {
		return
	}
	// After an ACK the RTO is the one just re-armed from now; after a
	// send, it counts from the head's transmission (tcp_rto_delta_us),
	// and an RTO already overdue leaves the PTO.
	d := s.rtoT.Deadline()
	if sent {
		d = s.seg(s.unaSeg).sentAt.Add(s.currentRTO())
		if d <= now {
			d = clock.Never
		}
	}
	t.timer.Reset(min(now.Add(s.pto()), d))
}

// probeMayWait reports whether a loss probe may be pending, by either
// rule: the connection open (or in CWR) with data out and no probe out.
func (s *Sender) probeMayWait() bool {
	return s.belowRecovery() && s.n > 0 && s.tlp.high == 0 && s.established && !s.done
}

// pto is the probe timeout: two SRTT, plus the worst-case delayed ACK for
// a lone segment (RFC 8985's WCDelAckT; Linux adds its minimum RTO) or
// Linux's TCP_TIMEOUT_MIN (Config.TimeoutMin) otherwise, and at least
// SRTT plus a timed receiver's ACK interval; the initial RTO before the
// first RTT sample.
func (s *Sender) pto() time.Duration {
	srtt := s.rtt.SRTT()
	var p time.Duration
	switch {
	case srtt == 0:
		return s.cfg.InitialRTO
	case s.n == 1:
		p = 2*srtt + s.cfg.MinRTO
	default:
		p = 2*srtt + time.Duration(s.tlpSlack)
	}
	// A receiver on a timer (AckInterval) holds each ACK up to the
	// interval, which the RTT samples leave out: the probe must outwait
	// SRTT plus the hold, or on a path shorter than the interval it fires
	// before nearly every ACK. Where SRTT is at least the interval, as on
	// MARLIN's paths, 2 SRTT already does and p is unchanged.
	if a := s.cfg.AckInterval; a > 0 {
		p = max(p, srtt+a+time.Duration(s.tlpSlack))
	}
	return p
}

// onPTO sends the probe.
func (s *Sender) onPTO(now clock.Time) { s.sendProbe(now) }

// sendProbe sends the loss probe and reports whether it did.
func (s *Sender) sendProbe(now clock.Time) bool {
	t := &s.tlp
	if s.done || !s.belowRecovery() || s.n == 0 || t.high != 0 {
		return false
	}
	if s.nxt < s.total && s.pendingRoom() && (s.cfg.RecvWindow == 0 || s.outBytes+s.cfg.MSS <= s.cfg.RecvWindow) {
		// New data, whatever the window (Linux tcp_write_xmit with
		// push_one=2).
		s.sendOutside(now, s.nxtSeg(), false)
		s.tlpRetx = false
	} else {
		k := s.nxtSeg() - 1
		for k >= s.unaSeg && s.seg(k).sacked {
			k--
		}
		if k < s.unaSeg {
			return false
		}
		s.sendOutside(now, k, true)
		s.tlpRetx = true
	}
	t.high = s.nxt
	t.timer.Stop()
	s.stats.TLPs++
	s.rtoT.Reset(now.Add(s.currentRTO()))
	return true
}

// tlpAck ends a probe episode (Linux tcp_process_tlp_ack, without DSACK: a
// duplicate ACK that carries nothing new stands for the original and the
// probe both having arrived). A retransmitted probe that repaired a loss
// reduces the window once, as Linux's entry into and exit from CWR.
func (s *Sender) tlpAck(now clock.Time, ackNo int64, advanced bool, newInfo bool) {
	t := &s.tlp
	if t.high == 0 {
		return
	}
	if !s.belowRecovery() {
		// Recovery or a timeout took over the congestion response.
		t.high = 0
		return
	}
	if ackNo < t.high {
		return
	}
	switch {
	case !s.tlpRetx:
		t.high = 0
	case ackNo > t.high || (advanced && s.n == 0):
		t.high = 0
		s.stats.TLPRecoveries++
		ev := &s.scr().lossEv
		*ev = cc.LossEvent{PriorInFlight: s.InFlight(), LostBytes: s.cfg.MSS}
		s.cc.OnCongestionEvent(now, ev)
		s.cc.OnRecoveryEnd(now)
		// Linux's reduction enters and leaves CWR at once, ending an
		// ECN reduction under way too (tcp_process_tlp_ack).
		if s.phase == cwr {
			s.phase = open
		}
		if s.cfg.ECN != ECNOff {
			s.cwrPending = true
		}
	case !advanced && !newInfo:
		t.high = 0
	}
}
