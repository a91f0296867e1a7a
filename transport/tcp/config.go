// Package tcp is cclab's reliable transport: a TCP-like sender and receiver
// with MSS segments, cumulative ACKs with SACK blocks (or without, NewReno
// style), optional delayed ACKs with Linux's quick-ACK mode (and, as an
// option, the immediate ACKs of Linux's receive-window growth), loss detection
// by RACK-TLP (RFC 8985) alone as Linux 6.18 does it, or by RFC 6675's
// DupThresh rule with NewReno's partial ACKs (Config.NoRACK), RFC 6675
// recovery with PRR, F-RTO (RFC 5682), retransmission timeouts with
// back-off (Linux's RTO estimator and timeout marking, or RFC 6298's),
// pacing, delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation)
// and any cc.Algorithm for congestion control.
//
// Endpoints take time as an argument and arm timers through a
// clock.Scheduler, so they run unchanged in the simulator and on a real
// clock. Packets come from a packet.Pool and leave through a
// packet.Receiver; nothing is allocated per packet in steady state.
package tcp

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/cclab/cclab/core/units"
)

// Config holds the transport settings of one flow. The zero value of each
// field means the default in brackets, chosen to match Linux (and the ns-3
// reference runs in bench/ns3, which override ns-3's own defaults to match).
type Config struct {
	// MSS is the payload bytes per segment [1448: 1500-byte IP packets with
	// TCP timestamps].
	MSS units.Bytes
	// Header is the TCP/IP header bytes per packet [52].
	Header units.Bytes
	// RecvWindow caps the bytes in flight, as an advertised receive window
	// would [0: unlimited].
	RecvWindow units.Bytes
	// PendingQueue, if positive, bounds the payload bytes the sender holds
	// for the application, unacknowledged plus taken but not yet sent, as
	// a socket send buffer does: new data goes out only while the bytes
	// from the first unacknowledged one to the next new one stay within
	// it, so it caps the sequence span in flight, SACKed holes included
	// [0: unlimited]. It is the scenario's pending_queue (see
	// docs/scenarios.md for how it relates to Mockets' pending packet
	// queue).
	PendingQueue units.Bytes
	// InitialRTO is the RTO before the first RTT sample [1s, RFC 6298].
	InitialRTO time.Duration
	// MinRTO floors the RTO [200ms, Linux; RFC 6298 says 1s].
	MinRTO time.Duration
	// MaxRTO caps the backed-off RTO [60s].
	MaxRTO time.Duration
	// NoSACK turns selective acknowledgements off: the receiver sends
	// cumulative ACKs only, and the sender recovers as NewReno does (RFC
	// 6582): DupThresh duplicate ACKs retransmit the first unacknowledged
	// segment, each partial ACK the next one, and every duplicate ACK
	// counts as one segment that left the network (Linux's
	// tcp_add_reno_sack), so PRR keeps sending during recovery.
	NoSACK bool
	// PacketTimers gives every unacknowledged segment its own
	// retransmission timeout, as Mockets does (mockets.go), instead of one
	// RFC 6298 timer with back-off, and turns off SACK-based and RACK loss
	// detection. The controller is not told about timeouts.
	PacketTimers bool
	// NoTLP turns off Tail Loss Probes (tlp.go, RFC 8985 §7; on by
	// default, as Linux's tcp_early_retrans=3).
	NoTLP bool
	// NoRACK turns off RACK's time-based loss detection of original
	// transmissions (racktime.go, RFC 8985 §6; on by default, as in Linux,
	// where it replaced RFC 6675's detection for SACK connections in 4.18
	// and is the only one since 2025's removal of that code). Without it loss is detected as RFC
	// 6675 and RFC 6582 do it (DupThresh SACKed segments above a hole, a
	// partial ACK during recovery) and a timeout marks every outstanding
	// segment lost, as ns-3 and Linux before 4.18; with it RACK alone
	// marks losses, and a timeout spares the segments sent within the last
	// RTT (scoreboard.go's markTimedOut). Lost retransmissions are detected
	// either way.
	NoRACK bool
	// RFC6298RTO computes the RTO as RFC 6298 does, max(SRTT + 4 RTTVAR,
	// MinRTO), and restarts the timer on cumulative ACKs only. The default
	// is Linux's: SRTT + max(4 RTTVAR, MinRTO), and the timer restarts
	// when the first unacknowledged segment is retransmitted (rto.go).
	RFC6298RTO bool
	// NoFRTO turns off F-RTO's detection of spurious timeouts and the
	// undo of their window reduction (frto.go, RFC 5682; on by default, as
	// Linux's tcp_frto=2).
	NoFRTO bool
	// ECN makes the connection ECN-capable (ecn.go): ECNRFC3168 as
	// Linux's net.ipv4.tcp_ecn = 1 on both ends (new data segments carry
	// ECT, the receiver echoes CE with ECE until a segment carries CWR,
	// and an ECE in the open state starts a window reduction, Linux's CWR
	// state: the controller's reduction paced by PRR, no retransmission,
	// at most one per window of data), or ECNDCTCP, which also puts ECT
	// on retransmissions and makes the receiver echo each segment's CE
	// state exactly (tcp_dctcp.c dctcp_ece_ack_update: an ACK for the data
	// before a change of CE state goes out at once with the old echo). A
	// sender whose controller needs ECN (cc.ECNObserver) uses ECNDCTCP, as
	// Linux for modules with TCP_CONG_NEEDS_ECN; the network gives its
	// receiver the same. Among the hot fields because every send and ACK
	// tests it.
	ECN ECNMode
	// LinuxReceiveWindow models Linux 6.18's receive window on the
	// receiver (rcvbuf.go): receive-buffer autotuning raises the window
	// clamp once per receiver RTT (tcp_rcv_space_adjust, tcp_rcvbuf_grow),
	// rcv_ssthresh grows by two segments per data segment up to it
	// (tcp_grow_window), and each segment that grows it is acknowledged
	// at once (icsk_ack.quick |= 1), so the receiver acknowledges every
	// segment through most of slow start. The sender then echoes the
	// latest ACK's timestamp on its data segments (TSecr), from which the
	// receiver takes its RTT. Every ACK advertises the window Linux would
	// (tcp_select_window, rwnd.go), and the sender keeps new data within
	// it (tcp_snd_wnd_test), besides RecvWindow. Ignored with
	// AckInterval. Off by default: the receiver models no receive buffer
	// and advertises no window.
	// Among the hot fields because the sender reads it on every ACK (to
	// keep the timestamp it echoes).
	LinuxReceiveWindow bool
	// (The fields above are the ones a sender reads on every ACK, kept
	// within its hot cache lines: configHotBytes.)

	// DupThresh is the number of SACKed segments above a hole (duplicate
	// ACKs without SACK) that mark it lost with NoRACK or NoSACK [3, RFC
	// 6675]; with RACK, the SACKed segments after which RACK's reordering
	// window closes until reordering is seen (Linux's tp->reordering).
	DupThresh int32
	// NoHandshake starts sending data at once instead of after a SYN /
	// SYN-ACK exchange. The handshake costs one RTT, as in real TCP and
	// ns-3, and gives the first RTT sample, without which a path whose RTT
	// exceeds the initial RTO (1 s: a satellite link) times out spuriously.
	NoHandshake bool
	// HandshakeAck sends the handshake's final ACK, a header-only packet
	// the receiver discards, before the first data segment, as TCP (and
	// ns-3) does; it delays that segment by its transmission time. By
	// default the first data segment completes the handshake. Read only
	// at the handshake, so not among the hot fields.
	HandshakeAck bool
	// RACKRetransmissions judges retransmissions by RACK's time rule, as
	// Linux does (one send-ordered list for originals and retransmissions,
	// tcp_rack_detect_loss): lost once a segment sent after it has been
	// delivered and the latest RTT plus the reordering window has passed,
	// with the reordering timer armed while one waits. By default a
	// retransmission is lost once a segment sent a quarter of the minimum
	// RTT after it has been delivered, which finds no loss when only
	// segments sent just after it arrive, so a timeout repairs it. Needs
	// RACK and SACK; rack.go. Read only while retransmissions are out,
	// so it is not among the hot fields.
	RACKRetransmissions bool
	// OldestRTTSample times the RTO estimator (SRTT, the variance, and so
	// the RTO and the loss probe's timeout) from the oldest segment each
	// ACK newly acknowledges, as Linux does (tcp_clean_rtx_queue's
	// seq_rtt: the oldest cumulatively acknowledged original segment, none
	// when a retransmitted one is cumulatively acknowledged too, else the
	// oldest newly SACKed original, else the timestamp echo), and the
	// minimum RTT from the newest (ca_rtt). With delayed ACKs the oldest
	// segment's RTT includes its wait for the segment that completes the
	// pair, or for the receiver's timer, so Linux's SRTT and probe timeout
	// are longer than the newest segment's samples give, and a flow with a
	// window of two or three segments sends fewer spurious loss probes. By
	// default the newest segment's RTT feeds the estimator. The
	// controller's samples and the flow's RTT statistics are the newest
	// segment's either way. Read once, by InitSender.
	OldestRTTSample bool
	// LinuxPRR paces fast recovery's window reduction as Linux 6.18 does
	// (tcp_cwnd_reduction) instead of as RFC 6937 writes it: the
	// proportional part divides by the congestion window when recovery
	// began (prior_cwnd), not the data in flight then; the slow-start part
	// adds its extra segment only for an ACK that advances SND.UNA and
	// marks nothing newly lost; an ACK (or RACK timer) that delivers
	// nothing leaves the window where it was, so segments it marks lost
	// free room; and recovery entered by RACK's timer counts one segment
	// delivered. Read only in recovery, so not among the hot fields.
	LinuxPRR bool
	// LinuxRACKTimer arms RACK's reordering timer as Linux 6.18 does
	// (tcp_rack_mark_lost, tcp_rack_reo_timeout; RFC 8985 §6.2's
	// timeout = max(remaining, timeout)): for the latest deadline among
	// the segments waiting, plus TimeoutMin, at most the RTO ahead, so
	// one expiry marks every segment that waited; and the timer does not
	// re-arm itself when it fires (Linux arms the retransmission timer
	// then). By default it is armed for the earliest deadline, marks the
	// segments due by then and re-arms for the next. Read only when a
	// segment waits or the timer fires, so not among the hot fields.
	LinuxRACKTimer bool
	// LinuxWindowGrowth lets the controller grow its window only as
	// Linux 6.18's tcp_cong_control calls cong_avoid: on an ACK that newly
	// acknowledges data cumulatively (tcp_may_raise_cwnd's
	// FLAG_DATA_ACKED), not on one that only SACKs it (cc.Ack.HoldWindow),
	// and it reports Linux's Disorder state, the open state with SACKed,
	// lost or retransmitted data outstanding, entered and left as
	// tcp_fastretrans_alert's tcp_try_keep_open does (cc.Ack.Disorder;
	// disorder.go). Linux also grows on SACKs once it has measured
	// reordering beyond three segments (tp->reordering); the sender does
	// not measure its degree and holds the window then too. By default
	// every ACK that delivers data, cumulatively or by SACK, may grow the
	// window, and the open state has no Disorder. Read once, by
	// InitSender.
	LinuxWindowGrowth bool
	// LinuxCwndLimited decides whether the window was used, which the
	// controller's growth rules read (cc.Ack.CwndLimited), as Linux 6.18's
	// tcp_cwnd_validate and tcp_is_cwnd_limited do (cwndlimited.go): a
	// send that fills the window keeps it "used" for the window of data
	// sent by then, whatever stops the sends after it (the peer's window,
	// Nagle's rule, the pacer), and in slow start the window counts as
	// used while it is below twice the packets out. By default the sender
	// reports why its latest send stopped. Read once, by InitSender.
	LinuxCwndLimited bool
	// LinuxTLPTimer times the tail loss probe as Linux 6.18 does when the
	// RTO would come before it (tlp.go): Linux keeps one retransmission
	// timer, on which tcp_schedule_loss_probe arms the probe at the earlier
	// of its PTO and the RTO, which after a send it counts from the first
	// unacknowledged segment's transmission (tcp_rto_delta_us); the probe
	// then goes in the RTO's place and the RTO is armed afresh from it.
	// As in Linux, no probe is armed in Disorder (SACKed, lost or
	// retransmitted data out in the open state), and an ACK that
	// acknowledges or SACKs nothing new leaves a pending probe where it
	// was. By default an RTO due first fires, and no probe is sent; the
	// probe may go in Disorder, and every ACK re-arms it. It matters on
	// paths whose SRTT exceeds the RTO's margin over it (a few hundred ms,
	// or data centres with a small min_rto). Read once, by InitSender.
	LinuxTLPTimer bool
	// NoDelayedAck makes the receiver acknowledge every segment instead of
	// every second one.
	NoDelayedAck bool
	// NoQuickAck turns off Linux's quick-ACK mode (quickack.go): with it
	// on [default], the receiver acknowledges every segment for the first
	// 16 after the connection starts, after an idle gap longer than its
	// RTO, and after a duplicate segment.
	NoQuickAck bool
	// AckFirst acknowledges the connection's first data segment at once
	// even when quick-ACK mode is off, and delays later ones as usual:
	// ns-3.37's TcpSocketBase does this ("always respond to first data
	// packet to speed up the connection", m_delAckCount preset to
	// m_delAckMaxCount). It sets which segments are paired in every
	// later delayed ACK, so it moves the RTT samples of ns-3's TcpVegas.
	AckFirst bool
	// SendBufferLinux bounds the payload the sender holds
	// unacknowledged by Linux's autotuned send buffer (sndbuf.go) instead
	// of a fixed PendingQueue: twice (the controller's
	// cc.SendBufferSizer: BBR three times) the larger of TCP_INIT_CWND
	// and the window, grown (never shrunk) after each ACK that frees data
	// while the window has room, as tcp_new_space and tcp_sndbuf_expand
	// do, so that it follows the largest window so far, up to
	// tcp_wmem[2]. The sender keeps the buffer's current size in its copy
	// of PendingQueue, which must be unset here. Off by default (no
	// bound).
	SendBufferLinux bool
	// LinuxPacing paces the sends of a controller Linux paces inside TCP
	// (cc.InternallyPaced: BBR; others keep the per-segment pacer) as
	// Linux 6.18's internal pacing does (linuxpacing.go): in sends of
	// tcp_tso_segs segments that leave together (a millisecond of data at
	// the pacing rate, at least BBR's two, one below 1.2 Mbit/s; more on
	// a path whose minimum RTT is under 16 ms), each followed by the
	// payload's time at the pacing rate less
	// up to half of it for the time the send came late
	// (tcp_update_skb_after_send), the first ten segments unpaced, and a
	// send of fewer segments than that deferred to the next ACK while the
	// window has little room (tcp_tso_should_defer). By default each
	// segment waits for the previous one's whole packet, headers
	// included, at the pacing rate. Read only when the controller paces,
	// so not among the hot fields.
	LinuxPacing bool
	// LinuxRecoveryStart starts fast recovery as Linux 6.18 does
	// (tcp_fastretrans_alert's tcp_time_to_recover: lost_out != 0): on
	// any ACK in the open state while a segment marked lost has not been
	// delivered, not only on one that marks a segment lost. Segments
	// sent during a recovery and lost are marked while it runs, above its
	// recovery point, so when the recovery point is acknowledged Linux
	// starts the next recovery on the same ACK, with its own congestion
	// response (a controller that keeps its window in recovery, as BBR,
	// sees one recovery continue), and the end of a timeout's loss state
	// likewise. A timeout's loss state also turns into fast recovery, as
	// in Linux, when RACK finds a retransmission lost
	// (FLAG_LOST_RETRANS) or its reordering timer marks a segment
	// (tcp_rack_reo_timeout), with SACK and RACK on. By default the
	// sender stays open until an ACK marks a new loss and leaves the loss
	// state only at its recovery point. Not with PacketTimers (Mockets'
	// loss detection is not Linux's). Linux's F-RTO undo also clears the
	// lost marks of retransmitted segments, which the sender keeps until
	// they are delivered; with this rule a recovery could start on them
	// where Linux's would not. Read only outside fast recovery with
	// segments marked lost, so not among the hot fields.
	LinuxRecoveryStart bool
	// DelAckTimeout bounds how long an ACK may be delayed [40ms, Linux's
	// minimum delayed-ACK timer].
	DelAckTimeout time.Duration
	// TimeoutMin is Linux's TCP_TIMEOUT_MIN, two ticks of the kernel's
	// clock, which the tail loss probe's timeout adds to 2 SRTT when more
	// than one segment is out [2ms: HZ=1000; at HZ=250, Debian's and this
	// machine's kernel, 8ms]. At most 1s. Read once, by InitSender.
	TimeoutMin time.Duration
	// AckInterval, if positive, makes the receiver acknowledge on a timer
	// only: a selective acknowledgement every AckInterval while new data
	// keeps arriving, never per segment. This is the Mockets style ("SACK
	// transmission timeout"), used by the MARLIN partnering protocol.
	AckInterval time.Duration
	// SynOptions is the bytes a SYN or SYN-ACK carries beyond Header [8:
	// Linux's MSS, SACK-permitted and window-scale options; ns-3 sends no
	// MSS option, 4].
	SynOptions units.Bytes
	// Bytes is the transfer size; 0 means a bulk flow that never ends.
	Bytes units.Bytes
}

// ECNMode is a connection's use of ECN (Config.ECN).
type ECNMode uint8

// ECN modes.
const (
	// ECNOff: no ECN (Linux's default for connections it opens).
	ECNOff ECNMode = iota
	// ECNRFC3168 is classic ECN (RFC 3168), as Linux with tcp_ecn = 1.
	ECNRFC3168
	// ECNDCTCP is ECN as Linux runs it for DCTCP: ECT on every data
	// segment and the receiver's exact echo.
	ECNDCTCP
)

// String names the mode as scenarios and logs do.
func (m ECNMode) String() string {
	switch m {
	case ECNOff:
		return "off"
	case ECNRFC3168:
		return "rfc3168"
	case ECNDCTCP:
		return "dctcp"
	}
	return fmt.Sprintf("ECNMode(%d)", uint8(m))
}

// configHotBytes is the size of Config's first fields, the ones a Sender
// reads on every ACK (see Sender's layout).
const configHotBytes = unsafe.Offsetof(Config{}.DupThresh)

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.MSS == 0 {
		c.MSS = 1448
	}
	if c.Header == 0 {
		c.Header = 52
	}
	if c.SynOptions == 0 {
		c.SynOptions = 8
	}
	if c.InitialRTO == 0 {
		c.InitialRTO = time.Second
	}
	if c.MinRTO == 0 {
		c.MinRTO = 200 * time.Millisecond
	}
	if c.MaxRTO == 0 {
		c.MaxRTO = 60 * time.Second
	}
	if c.DupThresh == 0 {
		c.DupThresh = 3
	}
	if c.DelAckTimeout == 0 {
		c.DelAckTimeout = 40 * time.Millisecond
	}
	if c.TimeoutMin == 0 {
		c.TimeoutMin = 2 * time.Millisecond
	}
	return c
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.MSS <= 0 || c.MSS > 1<<20:
		return fmt.Errorf("mss must be in [1, 1MiB], got %d", c.MSS)
	case c.Header < 0:
		return fmt.Errorf("header must not be negative, got %d", c.Header)
	case c.Bytes < 0:
		return fmt.Errorf("bytes must not be negative, got %d", c.Bytes)
	case c.InitialRTO < 0:
		return fmt.Errorf("initial_rto must not be negative, got %v", c.InitialRTO)
	case c.MinRTO <= 0 || c.MaxRTO < c.MinRTO:
		return fmt.Errorf("need 0 < min_rto <= max_rto, got %v and %v", c.MinRTO, c.MaxRTO)
	case c.TimeoutMin <= 0 || c.TimeoutMin > time.Second:
		return fmt.Errorf("timeout_min must be in (0, 1s], got %v", c.TimeoutMin)
	case c.DupThresh < 1:
		return fmt.Errorf("dupthresh must be at least 1, got %d", c.DupThresh)
	case c.RecvWindow < 0:
		return fmt.Errorf("recv_window must not be negative, got %d", c.RecvWindow)
	case c.PendingQueue != 0 && c.PendingQueue < c.MSS:
		return fmt.Errorf("pending_queue must be 0 (unlimited) or at least one MSS (%d bytes), got %d", c.MSS, c.PendingQueue)
	case c.SendBufferLinux && c.PendingQueue != 0:
		return fmt.Errorf("send_buffer linux sizes the send buffer itself: leave pending_queue unset (got %d)", c.PendingQueue)
	}
	return nil
}
