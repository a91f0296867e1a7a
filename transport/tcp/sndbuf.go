package tcp

import (
	"math/bits"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Linux's send buffer (Config.SendBufferLinux). A bulk application keeps
// its socket's send buffer full, so the buffer bounds the data a Linux
// sender holds unacknowledged: without SACK a long NewReno recovery, which
// repairs one hole per round trip, would otherwise keep sending new data
// past the holes for as long as duplicate ACKs come back. Linux sizes the
// buffer for the window and grows it as the window grows
// (net/ipv4/tcp_input.c):
//
//   - tcp_sndbuf_expand sets sk_sndbuf to 2 * nr_segs * per_mss (3 * for
//     BBR, whose sndbuf_expand asks for it), nr_segs the largest of
//     TCP_INIT_CWND, the window in segments and tp->reordering + 1, at
//     most tcp_wmem[2]; when the connection is established
//     (tcp_init_buffer_space) and from tcp_new_space;
//   - tcp_new_space, called after an ACK has freed data while the writer
//     waits for room, expands only while the packets in flight are fewer
//     than the window (tcp_should_expand_sndbuf); as Linux's sends leave
//     the window room after nearly every ACK (sndbufExpand), the buffer
//     follows twice the largest window so far; it never shrinks.
//
// per_mss is the worst case of one segment per buffer: the MSS with the
// kernel's headers and skb_shared_info, rounded up to a power of two, plus
// the sk_buff. The buffer counts that memory, so it holds sk_sndbuf /
// per_mss segments at the least. On this machine's kernel (Linux 6.18.44,
// x86-64) per_mss is 2304 bytes for a 1448-byte MSS: a new connection's
// SO_SNDBUF is 46,080 = 2 * 10 * 2304, and every value sampled later is a
// multiple of 2304 (`cclab emu --out`, tcp_info.csv). What a full buffer
// holds depends on its skbs (sndbufState): one segment per skb, 1448/2304
// = 0.63 of sk_sndbuf in payload; on 100 flows without SACK the kernel's
// held 0.55-0.78 (1.29-1.82 bytes of buffer per byte, median 1.43), and
// Hybla with thousands of segments out on a 600 ms path about 1.0 (2,946
// segments in 4 MiB). The model charges each skb of new data its payload
// and per_mss less the MSS.

const (
	// linuxWmemMax is net.ipv4.tcp_wmem[2], the largest buffer autotuning
	// sets [4 MiB].
	linuxWmemMax = 4 << 20
	// linuxSkbHead is what per_mss adds to the MSS before rounding up to a
	// power of two: the timestamp option the MSS leaves out (mss_clamp is
	// 12 bytes larger), MAX_TCP_HEADER and the aligned skb_shared_info. It
	// depends on the kernel's configuration; on the measured kernel it
	// keeps a 1448-byte MSS within 2048 bytes.
	linuxSkbHead = 12 + 576
	// linuxSkbStruct is SKB_DATA_ALIGN(sizeof(struct sk_buff)).
	linuxSkbStruct = 256
)

// linuxPerMSS is tcp_sndbuf_expand's per_mss for a given MSS.
func linuxPerMSS(mss units.Bytes) int64 {
	n := uint64(mss) + linuxSkbHead
	return int64(1)<<bits.Len64(n-1) + linuxSkbStruct
}

// linuxSndbufBytes is sk_sndbuf once tcp_sndbuf_expand has sized it for a
// window of cwnd segments, windows times over: the kernel's bytes.
func linuxSndbufBytes(mss units.Bytes, cwnd int64, dupThresh int32, windows int64) int64 {
	return linuxSndbufSegs(mss, cwnd, dupThresh, windows) * linuxPerMSS(mss)
}

// linuxSndSkbOverhead is what one skb costs the send buffer beyond its
// payload: per_mss less the MSS, so that a buffer of one-segment skbs holds
// sk_sndbuf / per_mss segments, tcp_sndbuf_expand's worst case.
func linuxSndSkbOverhead(mss units.Bytes) int64 { return linuxPerMSS(mss) - int64(mss) }

// sndbufState is the send buffer's account with Config.SendBufferLinux, in
// the sender's rare record. The kernel charges each skb its payload and
// its own overhead (sk_wmem_queued adds skb->truesize), so what a buffer
// holds depends on how many segments its skbs carry: a send that left
// several segments at once left them in one skb (tcp_sendmsg fills skbs
// of tcp_tso_autosize's size goal, a millisecond at the pacing rate, and
// tcp_write_xmit splits one only where the send stops, tso_fragment),
// while the one or two segments an ACK lets out each cost an skb. A flow
// that opens its window by thousands of segments at once holds about a
// byte of payload per byte of buffer (the kernel's Hybla on a 600 ms path:
// 2,946 segments in 4 MiB), one paced out by ACKs 0.6-0.8. The account
// keeps the first segment of each outstanding skb of new data, as sent;
// the splits of retransmissions and SACK processing are not modelled.
type sndbufState struct {
	bytes  int64   // sk_sndbuf
	starts []int64 // first segment of each outstanding skb, in order
	head   int     // starts[:head] are freed
	last   clock.Time
	cur    int64 // segments in the skb being filled
	goal   int64 // segments per skb at the current send
}

// skbs is the number of outstanding skbs.
func (sb *sndbufState) skbs() int { return len(sb.starts) - sb.head }

// sndbufSent accounts new segment k, sent at now: it starts an skb when it
// is the first of a send (another instant) or its skb holds the size goal.
func (s *Sender) sndbufSent(now clock.Time, k int64) {
	sb := s.rare.sndbuf
	if now != sb.last || sb.cur >= sb.goal || sb.skbs() == 0 {
		if now != sb.last {
			sb.goal = s.sndbufGoal()
		}
		sb.starts = append(sb.starts, k)
		sb.cur = 0
		s.sndbufPayload()
	}
	sb.last = now
	sb.cur++
}

// sndbufAcked frees the skbs SND.UNA has passed: an skb goes once the
// next one's first segment is acknowledged, or with everything.
func (s *Sender) sndbufAcked() {
	sb := s.rare.sndbuf
	for sb.skbs() > 0 && (s.n == 0 || sb.skbs() > 1 && sb.starts[sb.head+1] <= s.unaSeg) {
		sb.head++
	}
	// Reuse the slice: from its start once nothing is out, else once
	// most of it is freed.
	if sb.head == len(sb.starts) || sb.head > 64 && sb.head*2 > len(sb.starts) {
		sb.starts = append(sb.starts[:0], sb.starts[sb.head:]...)
		sb.head = 0
	}
	s.sndbufPayload()
}

// sndbufGoal is tcp_xmit_size_goal's segments per skb: tcp_tso_autosize at
// Linux's pacing rate for a controller that does not pace
// (tcp_update_pacing_rate: the window, or the packets out if more, per
// SRTT, 200% of it in slow start below half ssthresh and 120% after), or
// at the controller's own.
func (s *Sender) sndbufGoal() int64 {
	rate := s.cc.PacingRate()
	if rate == 0 {
		srtt := s.rtt.SRTT()
		if srtt <= 0 {
			return minTSOSegs
		}
		cwnd := int64(max(s.cc.CongestionWindow(), s.cfg.MSS) / s.cfg.MSS)
		ratio := int64(120)
		if in, ok := s.cc.(cc.Inspector); ok {
			if st := in.State(); st.Ssthresh == 0 || st.Cwnd < st.Ssthresh/2 {
				ratio = 200
			}
		}
		segs := max(cwnd, int64(s.n))
		rate = units.Bandwidth(float64(8*int64(s.cfg.MSS)*segs*ratio/100) / srtt.Seconds())
	}
	return max(s.tsoSegs(rate), 1)
}

// linuxSndbufSegs is sk_sndbuf in per_mss units once tcp_sndbuf_expand
// has sized it for a window of cwnd segments, windows times over (2, or
// the controller's cc.SendBufferSizer): the one-segment skbs it holds.
func linuxSndbufSegs(mss units.Bytes, cwnd int64, dupThresh int32, windows int64) int64 {
	nr := max(linuxInitCwnd, cwnd, int64(dupThresh)+1)
	segs := linuxWmemMax / linuxPerMSS(mss)
	if nr <= segs/windows { // compared before multiplying: a window may be near MaxInt64
		segs = windows * nr
	}
	return segs
}

// sndbufInit is tcp_init_buffer_space's sizing, when the connection is
// established: tcp_init_transfer initialises the controller first, so the
// buffer is sized for the controller's initial window where that exceeds
// TCP_INIT_CWND (Hybla's hybla_init sets it to rho, its RTT over 25 ms:
// 40 segments on a 1 s path, which a buffer sized for 10 would cut to 20).
// It never shrinks the buffer.
func (s *Sender) sndbufInit() {
	s.sndbufGrow(int64(s.cc.CongestionWindow() / s.cfg.MSS))
}

// sndbufGrow sizes the buffer for a window of cwnd segments
// (tcp_sndbuf_expand), never smaller than it is, and sets the payload it
// holds.
func (s *Sender) sndbufGrow(cwnd int64) {
	r := s.counts()
	if r.sndbuf == nil {
		r.sndbuf = new(sndbufState)
	}
	sb := r.sndbuf
	sb.bytes = max(sb.bytes, linuxSndbufBytes(s.cfg.MSS, cwnd, s.cfg.DupThresh, sndbufWindows(s.cc)))
	s.sndbufPayload()
}

// sndbufPayload sets what the buffer lets the sender hold unacknowledged,
// in payload (Config.PendingQueue): the buffer less each outstanding skb's
// overhead (sndbufState).
func (s *Sender) sndbufPayload() {
	sb := s.rare.sndbuf
	s.cfg.PendingQueue = max(units.Bytes(sb.bytes-linuxSndSkbOverhead(s.cfg.MSS)*int64(sb.skbs())), s.cfg.MSS)
}

// sndbufWindows is how many windows the controller's send buffer holds:
// tcp_sndbuf_expand's sndmem factor, the controller's sndbuf_expand or 2
// ("Cubic needs 1.7 factor, rounded to 2").
func sndbufWindows(alg cc.Algorithm) int64 {
	if z, ok := alg.(cc.SendBufferSizer); ok {
		return max(z.SendBufferWindows(), 1)
	}
	return 2
}

// sndbufExpand is tcp_new_space after an ACK that freed data, before the
// ACK's own sends: if the window has room (fewer segments in flight than
// it allows), the buffer grows for the current window, and the sends that
// follow may use it.
//
// Linux checks after its push (tcp_data_snd_check: tcp_push_pending_frames,
// then tcp_check_space), yet its buffer follows the window up: sampled on
// this machine's kernel every 10 ms (testdata/kernel-sndbuf-2026-12-05.tsv),
// sk_sndbuf was 2 * per_mss (BBR: 3 *) times the largest window so far
// at every sample after the first second, with unsent data queued
// throughout (tcpi_notsent_bytes) and no send-buffer-limited time
// (tcpi_sndbuf_limited 0). So the push leaves the window room when
// tcp_should_expand_sndbuf looks, which by our reading of tcp_output.c is
// TSO deferral (tcp_tso_should_defer) and TCP small queues holding part
// of the send for later; which of them was not measured. This sender's
// own sends always fill the window: checking after them grew the buffer
// only once it had held sending back, and on cellular left it at twice
// an earlier window of 245 segments when the first loss came (Linux's
// twice 461), so fast recovery's span filled it and the repair let out
// some 300 segments at once.
func (s *Sender) sndbufExpand() {
	s.sndbufAcked()
	mss := s.cfg.MSS
	inFlight := s.InFlight()
	var cwnd units.Bytes
	if s.reducing() && s.prr != nil {
		// Linux's window in recovery is what PRR lets out
		// (tcp_cwnd_reduction: snd_cwnd = in flight + sndcnt).
		if s.prrAllow <= 0 {
			return
		}
		cwnd = inFlight + units.Bytes(s.prrAllow)*mss
	} else {
		cwnd = max(s.cc.CongestionWindow(), mss)
		if inFlight+mss > cwnd {
			return
		}
	}
	s.sndbufGrow(int64(cwnd / mss))
}
