package tcp

import (
	"math/bits"

	"github.com/cclab/cclab/cc"
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
// per_mss segments at the least; this model holds exactly that many, 2 *
// nr_segs. On this machine's kernel (Linux 6.18.44, x86-64) per_mss is
// 2304 bytes for a 1448-byte MSS: a new connection's SO_SNDBUF is 46,080 =
// 2 * 10 * 2304, and every value sampled later is a multiple of 2304 (`cclab
// emu --out`, tcp_info.csv). There, GSO buffers holding several segments
// let a full buffer hold 0.55-0.78 of sk_sndbuf in payload (1.29-1.82 bytes
// of buffer per byte, median 1.43, on 100 flows without SACK), against the
// model's 1448/2304 = 0.63.

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

// linuxSndbuf is the payload Linux's send buffer holds once
// tcp_sndbuf_expand has sized it for a window of cwnd segments, windows
// times over (2, or the controller's cc.SendBufferSizer).
func linuxSndbuf(mss units.Bytes, cwnd int64, dupThresh int32, windows int64) units.Bytes {
	nr := max(linuxInitCwnd, cwnd, int64(dupThresh)+1)
	segs := linuxWmemMax / linuxPerMSS(mss)
	if nr <= segs/windows { // compared before multiplying: a window may be near MaxInt64
		segs = windows * nr
	}
	return units.Bytes(segs) * mss
}

// sndbufInit is tcp_init_buffer_space's sizing, when the connection is
// established: tcp_init_transfer initialises the controller first, so the
// buffer is sized for the controller's initial window where that exceeds
// TCP_INIT_CWND (Hybla's hybla_init sets it to rho, its RTT over 25 ms:
// 40 segments on a 1 s path, which a buffer sized for 10 would cut to 20).
// It never shrinks the buffer.
func (s *Sender) sndbufInit() {
	cwnd := int64(s.cc.CongestionWindow() / s.cfg.MSS)
	if q := linuxSndbuf(s.cfg.MSS, cwnd, s.cfg.DupThresh, sndbufWindows(s.cc)); q > s.cfg.PendingQueue {
		s.cfg.PendingQueue = q
	}
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
	if q := linuxSndbuf(mss, int64(cwnd/mss), s.cfg.DupThresh, sndbufWindows(s.cc)); q > s.cfg.PendingQueue {
		s.cfg.PendingQueue = q
	}
}
