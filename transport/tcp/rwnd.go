package tcp

import (
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// The peer's receive window (Config.LinuxReceiveWindow). Linux's receiver
// advertises a window that autotuning grows one receiver RTT late
// (rcvbuf.go), and its sender keeps new data within snd_una + snd_wnd
// (tcp_snd_wnd_test). On a cellular trace the kernel's sender spends a
// tenth of a second of its slow start there (tcpi_rwnd_limited), which
// slows its window's growth; without the limit cclab's sender overshot
// further into its first loss episode.

// updateWindow is tcp_ack_update_window for a peer that sends no data: the
// SYN-ACK sets the window; an ACK replaces it when it acknowledges new data
// or, acknowledging nothing new, offers more (tcp_may_update_window); an
// older ACK is ignored.
func (s *Sender) updateWindow(kind packet.Kind, ackNo, w int64) {
	switch {
	case kind == packet.SynAck:
		if !s.established {
			s.sndWnd, s.hasSndWnd = w, true
		}
	case !s.hasSndWnd,
		ackNo > s.una && ackNo <= s.nxt,
		ackNo == s.una && w > s.sndWnd:
		s.sndWnd, s.hasSndWnd = w, true
	}
}

// rwndStop records that sending stopped at the window's edge. The window,
// not the congestion window, limited sending, so the controller's growth
// rules see the window as used only where Linux's tcp_is_cwnd_limited
// would: in slow start, while cwnd is below twice what is in flight.
//
// With Config.LinuxCwndLimited the pass only records that the congestion
// window did not stop it; trySendLinux applies Linux's rule.
func (s *Sender) rwndStop(now clock.Time, cwnd, pipe units.Bytes) {
	s.cwndUse &^= cwndFull
	if s.cwndUse&cwndLinux == 0 && cwnd < 2*pipe && s.slowStart() {
		s.cwndUse |= cwndFull
	}
	if !s.rwndLimited {
		s.rwndLimited, s.rwndLimSince = true, now
	}
}

// RwndLimited returns how long sending has waited for the peer's receive
// window up to now, an open period included (Linux's tcpi_rwnd_limited);
// ok is false unless the flow models Linux's receive window
// (Config.LinuxReceiveWindow), whose receiver advertises one.
func (s *Sender) RwndLimited(now clock.Time) (d time.Duration, ok bool) {
	if !s.cfg.LinuxReceiveWindow {
		return 0, false
	}
	d = s.rwndLimitedFor
	if s.rwndLimited {
		d += now.Sub(s.rwndLimSince)
	}
	return d, true
}

// rwndEnd ends a receive-window-limited period when sending stops for any
// other reason (tcp_chrono_stop of TCP_CHRONO_RWND_LIMITED).
func (s *Sender) rwndEnd(now clock.Time) {
	if s.cfg.LinuxReceiveWindow && s.rwndLimited {
		s.rwndLimitedFor += now.Sub(s.rwndLimSince)
		s.rwndLimited = false
	}
}
