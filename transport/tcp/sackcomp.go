package tcp

import (
	"time"

	"github.com/cclab/cclab/core/clock"
)

// Linux's SACK compression constants: net.ipv4.tcp_comp_sack_nr and
// tcp_comp_sack_delay_ns, and TCP_FASTRETRANS_THRESH, the out-of-order
// segments acknowledged at once before compression starts.
const (
	compSackNr        = 44
	compSackDelay     = time.Millisecond
	compSackImmediate = 3
)

// UseSACKCompression makes the receiver compress SACKs as Linux does
// (net.ipv4.tcp_comp_sack_*, on by default since Linux 4.19): while a hole
// persists, the first three out-of-order segments are acknowledged at once
// and later ones together, one ACK after min(1 ms, RTT/20) or after 44 of
// them (sackCompress). clk times the compression. Call it after
// InitReceiver and before the first segment; a receiver without SACK
// ignores it. Like the timer wheel (Sender.UseKernelTimers) it is a
// setting of the receiving host, so it is not in Config.
func (r *Receiver) UseSACKCompression(clk clock.Scheduler) {
	if r.noSACK || r.sc != nil {
		return
	}
	r.sc = &sackCompress{rcvNxt: -1}
	r.sc.t = clk.NewTimer(r.compressedAck)
	r.compress = true
}

// sackCompress is the receiver's SACK compression (UseSACKCompression),
// as Linux's __tcp_ack_snd_check does it for a SACK connection with data
// out of order: while rcv_nxt stays where it is, the first three
// out-of-order segments are acknowledged at once, so that the sender's
// fast retransmission is not delayed; each later one joins a compressed
// ACK, sent when a high-resolution timer of min(1 ms, RTT/20) fires
// (tcp_compressed_ack_kick), when 44 have been compressed, or when any
// other ACK goes out first (tcp_event_ack_sent cancels the timer). In a
// loss episode this holds back the SACKs that clock the sender's recovery
// by up to a millisecond, which is what brings many flows started
// together through a shared queue to the kernel's behaviour
// (docs/fidelity.md, "A profile for the host").
type sackCompress struct {
	t clock.Timer
	// rtt is the handshake's RTT sample (quickack.go), 0 without one.
	rtt time.Duration
	// rcvNxt is the rcv_nxt the immediate ones were counted at
	// (tp->compressed_ack_rcv_nxt).
	rcvNxt int64
	// immediate counts the out-of-order segments acknowledged at once at
	// rcvNxt (tp->dup_ack_counter).
	immediate uint8
	// n is the out-of-order segments waiting for the compressed ACK
	// (tp->compressed_ack).
	n uint8
	// compressed counts the ACKs not sent, as Linux's TCPAckCompressed.
	compressed int64
}

// ackOutOfOrder acknowledges an out-of-order segment now or compresses the
// ACK (sackCompress).
func (r *Receiver) ackOutOfOrder(now clock.Time) {
	c := r.sc
	if r.inQuickAck() || c.n >= compSackNr {
		r.sendAck(now)
		return
	}
	if c.rcvNxt != r.rcvNxt {
		c.rcvNxt, c.immediate = r.rcvNxt, 0
	}
	if c.immediate < compSackImmediate {
		c.immediate++
		r.sendAck(now)
		return
	}
	c.n++
	if !c.t.Armed() {
		c.t.Reset(now.Add(r.compressDelay()))
	}
}

// compressDelay is Linux's compression timeout: 5% of the receiver's RTT,
// at most tcp_comp_sack_delay_ns. The receiver's RTT is its handshake
// sample (quickack.go); Linux's is its running estimate from timestamps,
// which also counts queueing (it differs only where the RTT is under
// 20 ms). Without a sample (no handshake seen) Linux's estimate is 0 too,
// and the ACK goes at once (from the timer, after this instant's events).
func (r *Receiver) compressDelay() time.Duration {
	return min(compSackDelay, r.sc.rtt/20)
}

// compressedAck is the compression timer's expiry.
func (r *Receiver) compressedAck(now clock.Time) {
	if r.sc.n > 0 {
		// The ACK now sent is not one of those compressed.
		r.sc.n--
		r.sendAck(now)
	}
}

// sackCompressed ends a compression as an ACK goes out.
func (r *Receiver) sackCompressed() {
	r.sc.compressed += int64(r.sc.n)
	r.sc.n = 0
	r.sc.t.Stop()
}

// CompressesSACKs reports whether the receiver compresses SACKs
// (UseSACKCompression).
func (r *Receiver) CompressesSACKs() bool { return r.compress }

// AcksCompressed returns how many ACKs SACK compression has saved, as
// Linux's TcpExtTCPAckCompressed counts them (0 without
// UseSACKCompression).
func (r *Receiver) AcksCompressed() int64 {
	if r.sc == nil {
		return 0
	}
	return r.sc.compressed
}
