package tcp

import (
	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
)

// Whether the window was used. A controller grows its window only while
// sending uses it (cc.Ack.CwndLimited; RFC 7661's concern, Linux's
// tcp_is_cwnd_limited in every cong_avoid), so a flow that the peer's
// window, the application or the pacer holds back does not build up a
// window it never tested.
//
// By default the sender reports why its latest send stopped: the
// congestion window (or PRR) stopped it; the peer's window stopped it in
// slow start while the window was below twice the data in flight; or it
// ran out of data. With Config.LinuxCwndLimited it follows Linux 6.18's
// tcp_cwnd_validate, called at the end of each tcp_write_xmit that sent
// new data or found the window full (in_flight >= cwnd, or a stop at
// it): the verdict is latched for a window of data, so one send that
// filled the window keeps it "used" until SND.UNA passes what was sent
// by then (cwnd_usage_seq), whatever stops the sends after it; a send
// that did not fill it replaces the verdict only after that point, or
// while the flow sends more than it had out (max_packets_out).
// tcp_is_cwnd_limited then adds slow start's allowance: used while cwnd
// is below twice max_packets_out, the packets out (SACKed and lost ones
// included) when the verdict was last taken.

// cwndUse is the sender's byte of this state, in its first line.
type cwndUse uint8

const (
	// cwndFull: the controller's next ACK sees the window used. During a
	// pass with cwndLinux, whether the window (or PRR, or a deferral to
	// the next ACK) stopped the pass.
	cwndFull cwndUse = 1 << iota
	// cwndLinux: Config.LinuxCwndLimited.
	cwndLinux
)

// cwndLatch is Linux's per-window state (tcp_sock's is_cwnd_limited,
// max_packets_out and cwnd_usage_seq), in the sender's rare record.
type cwndLatch struct {
	limited  bool
	maxOut   int32 // packets out when the verdict was taken
	usageSeg int64 // the verdict holds until SND.UNA reaches this segment
}

// trySendLinux is trySend with Config.LinuxCwndLimited: one pass, then
// tcp_cwnd_validate's verdict and tcp_is_cwnd_limited's answer for the
// next ACK. Only a pass that sent new data or found the window full takes
// a verdict (tcp_write_xmit; Linux's retransmissions go out through
// tcp_xmit_retransmit_queue, which takes none).
func (s *Sender) trySendLinux(now clock.Time) {
	newBefore := s.stats.SegmentsSent - s.stats.Retransmissions
	s.cwndUse &^= cwndFull
	s.sendPass(now)
	stopped := s.cwndUse&cwndFull != 0
	mss := s.cfg.MSS
	cwnd := int64(max(s.cc.CongestionWindow(), mss) / mss)
	inFlight := int64((s.InFlight() + mss - 1) / mss)
	full := stopped || inFlight >= cwnd
	l := &s.rare.cwnd
	if full || s.stats.SegmentsSent-s.stats.Retransmissions != newBefore {
		l.validate(full, s.unaSeg, s.nxtSeg(), s.n)
	}
	s.cwndUse &^= cwndFull
	if l.limited || cwnd < 2*int64(l.maxOut) && s.slowStart() {
		s.cwndUse |= cwndFull
	}
}

// validate takes a send's verdict, full, as tcp_cwnd_validate does: it
// replaces the one held once SND.UNA (segment una) has passed the data
// sent when that was taken, when the window was full, or, while the one
// held is "not used", when more packets are out (out, with nxt the next
// segment to send).
func (l *cwndLatch) validate(full bool, una, nxt int64, out int32) {
	if una >= l.usageSeg || full || (!l.limited && out > l.maxOut) {
		l.limited, l.maxOut, l.usageSeg = full, out, nxt
	}
}

// slowStart reports whether the controller is in slow start (cwnd below
// ssthresh, or no ssthresh yet); false for one that does not say.
func (s *Sender) slowStart() bool {
	in, ok := s.cc.(cc.Inspector)
	if !ok {
		return false
	}
	st := in.State()
	return st.Ssthresh == 0 || st.Cwnd < st.Ssthresh
}
