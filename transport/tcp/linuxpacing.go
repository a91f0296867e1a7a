package tcp

import (
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Linux 6.18's internal pacing (Config.LinuxPacing), for the controllers
// Linux paces inside TCP (cc.InternallyPaced: BBR; without the fq qdisc,
// which paces by other rules): tcp_write_xmit builds each send
// (an skb) of up to tcp_tso_segs segments, tcp_pacing_check holds a send
// until the pacing timestamp tcp_wstamp_ns, and tcp_update_skb_after_send
// moves that timestamp on by the skb's payload time at the pacing rate.
// Segments of one skb leave back to back, so a BBR flow at a few Mbit/s
// sends pairs, and after an ACK that frees two segments its data in
// flight is back at the window at once, where one segment at a time
// leaves it a segment short for half the gap.

const (
	// pacingShift is sk_pacing_shift: tcp_tso_autosize sizes a send for
	// about 1 ms (2^-10 s) of data at the pacing rate.
	pacingShift = 10
	// gsoMaxSize is the device's sk_gso_max_size (GSO_LEGACY_MAX_SIZE,
	// veth's and most NICs' default).
	gsoMaxSize = 65536
	// tsoRTTLog is net.ipv4.tcp_tso_rtt_log: a path whose minimum RTT is
	// below 2^(tsoRTTLog+5) µs (16 ms) gets larger sends
	// (gso_max_size >> (min_rtt_us >> tsoRTTLog) more bytes).
	tsoRTTLog = 9
	// minTSOSegs is net.ipv4.tcp_min_tso_segs, for controllers that do not
	// set their own.
	minTSOSegs = 2
	// unpacedSegs is the number of segments Linux sends before pacing
	// starts ("Original sch_fq does not pace first 10 MSS").
	unpacedSegs = 10
	// deferSlack is how long after the pacing timestamp a send may still
	// be deferred (tcp_tso_should_defer: "only if the last write was
	// recent (1 ms)").
	deferSlack = time.Millisecond
	// tsoWinDivisor is net.ipv4.tcp_tso_win_divisor: a send is not
	// deferred once a third of the window is free.
	tsoWinDivisor = 3
)

// tsoSegs is tcp_tso_segs: the most segments one send carries at the
// pacing rate.
func (s *Sender) tsoSegs(rate units.Bandwidth) int64 {
	bytes := int64(rate/8) >> pacingShift
	if m := s.rtt.Min(); m > 0 {
		if r := m.Microseconds() >> tsoRTTLog; r < 32 {
			bytes += gsoMaxSize >> r
		}
	}
	bytes = min(bytes, gsoMaxSize)
	least := int64(minTSOSegs)
	if z, ok := s.cc.(cc.InternallyPaced); ok {
		least = z.MinTSOSegs()
	}
	return max(bytes/int64(s.cfg.MSS), least)
}

// linuxPace is trySend's pacer with LinuxPacing, for segment k: it
// reports whether k may go now, as the next segment of the current send
// (*burst of them left) or as the first of a new one the pacer allows;
// otherwise the pacer is armed or the send deferred to the next ACK.
func (s *Sender) linuxPace(now clock.Time, rate units.Bandwidth, cwnd, pipe units.Bytes, k int64, retx bool, burst *int) bool {
	if *burst == 0 {
		if now < s.nextSend {
			s.pacerT.Reset(s.nextSend)
			return false
		}
		if *burst = s.linuxSend(now, rate, cwnd, pipe, k, retx); *burst == 0 {
			s.cwndUse |= cwndFull // deferred to the next ACK
			return false
		}
	}
	*burst--
	return true
}

// linuxSend starts one paced send at now, which the pacer allows, for
// segment k: it returns how many segments the send carries (the caller
// sends them back to back) and moves the pacing timestamp on by their
// payload's time; or 0 when Linux would defer the send to the next ACK.
// cwnd and pipe are the window and the data in flight, pipe + MSS <= cwnd.
func (s *Sender) linuxSend(now clock.Time, rate units.Bandwidth, cwnd, pipe units.Bytes, k int64, retx bool) int {
	if retx {
		s.charge(now, rate, s.seg(k).len, 1)
		return 1
	}
	mss := int64(s.cfg.MSS)
	q := s.tsoSegs(rate)
	left := max(s.total-s.nxt, 1)
	if s.deferSend(now, cwnd, pipe, q, left) {
		return 0
	}
	// tcp_cwnd_test: at most half the window in one send ("ensure we have
	// at least 2 GSO packets in flight"), and what it has room for.
	room := int64(cwnd-pipe) / mss
	half := max(int64(cwnd)/mss>>1, 1)
	segsLeft := left / mss // rounded up below; left+mss-1 would overflow for a bulk flow
	if left%mss != 0 {
		segsLeft++
	}
	n := max(min(q, half, room, segsLeft), 1)
	s.charge(now, rate, units.Bytes(min(n*mss, left)), n)
	return int(n)
}

// charge moves the pacing timestamp on for a send of n segments and
// payload bytes at now (tcp_update_skb_after_send).
func (s *Sender) charge(now clock.Time, rate units.Bandwidth, payload units.Bytes, n int64) {
	prior := s.nextSend
	s.nextSend = max(s.nextSend, now)
	if s.stats.SegmentsSent+n >= unpacedSegs {
		gap := rate.TxTime(payload)
		// "take into account OS jitter": a send that comes late (the
		// timestamp had passed) shortens the next gap, by at most half.
		gap -= min(gap/2, s.nextSend.Sub(prior))
		s.nextSend = s.nextSend.Add(gap)
	}
}

// sendOutside sends segment k outside trySend's loop: the timeout's
// retransmission of the head, a loss probe. The pacer does not hold
// them back; with LinuxPacing it charges them as Linux's does every
// transmission.
func (s *Sender) sendOutside(now clock.Time, k int64, retx bool) {
	if s.cfg.LinuxPacing {
		if rate := s.cc.PacingRate(); rate > 0 {
			payload := s.newLen()
			if retx {
				payload = s.seg(k).len
			}
			s.charge(now, rate, payload, 1)
		}
	}
	s.send(now, k, retx, 0, s.InFlight())
}

// deferSend is tcp_tso_should_defer for a send of new data that could
// carry q segments (left bytes remain to send): Linux waits for the next
// ACK rather than send fewer than q while the window has less than a
// third of itself free (of the smaller of the congestion and the peer's
// windows), the pacing timestamp passed less than 1 ms ago,
// and the oldest unacknowledged segment went out at least half an SRTT
// ago (its ACK is not about to come). Not in recovery or after a
// timeout, and not for a send of one segment.
func (s *Sender) deferSend(now clock.Time, cwnd, pipe units.Bytes, q, left int64) bool {
	mss := s.cfg.MSS
	if q <= 1 || !s.belowRecovery() || now.Sub(s.nextSend) > deferSlack {
		return false
	}
	limit, chunk := cwnd-pipe, cwnd
	if s.cfg.LinuxReceiveWindow && s.hasSndWnd {
		limit = min(limit, units.Bytes(s.una+s.sndWnd-s.nxt))
		chunk = min(chunk, units.Bytes(s.sndWnd))
	}
	if int64(limit) >= q*int64(mss) || int64(limit) >= left {
		return false
	}
	if limit >= chunk/tsoWinDivisor {
		return false
	}
	if s.n == 0 || now.Sub(s.seg(s.unaSeg).sentAt) < s.rtt.SRTT()/2 {
		return false
	}
	return true
}
