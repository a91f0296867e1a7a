package tcp

import (
	"time"

	"github.com/cclab/cclab/core/clock"
)

// maxQuickAcks is Linux's TCP_MAX_QUICKACKS.
const maxQuickAcks = 16

// quickAck is the receiver's quick-ACK mode, as Linux's icsk_ack.quick:
// while it lasts, every data segment is acknowledged at once instead of
// every second one. Linux enters it on a connection's first data segment and
// after an idle gap longer than its RTO (tcp_event_data_recv ->
// tcp_incr_quickack), and when a segment carries only data already received
// (tcp_data_queue -> tcp_enter_quickack_mode). Each ACK sent uses one
// (tcp_dec_quickack_mode). Acknowledging the start of a connection per
// segment is what lets the sender's slow start see ACK trains and grow at
// its full rate (CUBIC's HyStart relies on the spacing of those ACKs).
type quickAck struct {
	quick    int        // quick ACKs left
	synAt    clock.Time // arrival of the latest SYN, clock.Never before one
	rto      time.Duration
	lastData clock.Time // arrival of the previous data segment
	seen     bool       // a data segment has arrived
	// firstAcked: an ACK of data has been sent (Config.AckFirst).
	firstAcked bool
}

// quickAcks is how many quick ACKs one entry grants: min(rcv_wnd /
// (2 * rcv_mss), 16), at least 2 (tcp_incr_quickack); an unlimited window
// gives the cap.
func quickAcks(cfg Config) int {
	n := maxQuickAcks
	if cfg.RecvWindow > 0 {
		n = min(n, int(cfg.RecvWindow/(2*cfg.MSS)))
	}
	return max(n, 2)
}

func (r *Receiver) enterQuickAck() {
	if r.noQuickAck {
		return
	}
	r.qa.quick = max(r.qa.quick, r.quickAcks)
}

// quickAckOnData applies tcp_event_data_recv's rules to a data segment
// arriving at now; tsecr is the timestamp it echoes (0 when the sender
// echoes none).
func (r *Receiver) quickAckOnData(now, tsecr clock.Time) {
	q := &r.qa
	switch {
	case !q.seen:
		q.seen = true
		// The receiver's RTO comes from its one RTT sample, SYN-ACK to
		// first data (Linux tcp_synack_rtt_meas, then tcp_set_rto:
		// srtt + max(4 * rttvar, 200ms) with rttvar = rtt/2). It starts
		// at the latest SYN's arrival, which a resent SYN arriving after
		// the SYN-ACK the sender answered makes far too short; with
		// Config.LinuxReceiveWindow the segment echoes the timestamp of
		// the SYN-ACK it answers, which Linux uses when it has resent
		// its SYN-ACK (tcp_ack_update_rtt's TSecr sample).
		q.rto = r.initialRTO
		start := q.synAt
		if r.linuxWnd && tsecr > 0 && tsecr <= now {
			start = tsecr
		}
		if start != clock.Never && now > start {
			m := now.Sub(start)
			q.rto = m + max(2*m, r.minRTO)
			if r.sc != nil {
				r.sc.rtt = m
			}
		}
		r.enterQuickAck()
	case now.Sub(q.lastData) > q.rto:
		r.enterQuickAck()
	}
	q.lastData = now
}

// ackFirstNow reports whether Config.AckFirst asks for the segment just
// received to be acknowledged at once: no ACK of data has been sent yet
// (ns-3's preset delayed-ACK count lasts until its first ACK).
func (r *Receiver) ackFirstNow() bool { return r.ackFirst && !r.qa.firstAcked }

// inQuickAck reports whether the next segment is to be acknowledged at once.
func (r *Receiver) inQuickAck() bool { return r.qa.quick > 0 }

// quickAckSent spends one quick ACK; any ACK of data ends AckFirst.
func (r *Receiver) quickAckSent() {
	r.qa.firstAcked = true
	if r.qa.quick > 0 {
		r.qa.quick--
	}
}
