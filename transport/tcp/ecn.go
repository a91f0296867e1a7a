package tcp

import (
	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// ECN (RFC 3168) as Linux 6.18 does it, with Config.ECN.
//
// The sender puts ECT on new data segments (on every data segment with
// ECNDCTCP, as Linux for a module that needs ECN, tcp_ecn_send). An
// ACK with ECE in the open state starts a window reduction, Linux's CWR
// state (tcp_try_to_open -> tcp_enter_cwr): the controller reduces as for
// a loss (cc.LossEvent.ECN), PRR paces the flight down to the new window,
// nothing is retransmitted, and the state ends once SND.UNA passes the
// SND.NXT of the echo (strictly: the CWR flag must have reached the
// receiver, tcp_fastretrans_alert's "CWR is to be held something *above*
// high_seq is ACKed"), when the controller's OnRecoveryEnd sets the window
// to the threshold (tcp_end_cwnd_reduction). A loss found in the state
// turns it into fast recovery without a second reduction
// (cc.LossEvent.InCWR; tcp_enter_recovery). Every window reduction, a
// loss's and a timeout's too, queues CWR on the next new data segment
// (tcp_ecn_queue_cwr).
//
// The receiver (Receiver.ecnOnData) echoes a CE mark with ECE on every ACK
// until a data segment carries CWR (TCP_ECN_DEMAND_CWR,
// tcp_ecn_accept_cwr), and a CE mark that starts the echo, or a segment
// without ECT after ECT ones (a retransmission), puts it in quick-ACK mode
// for two segments (tcp_ecn_check_ce); with ECNDCTCP it
// echoes each segment's own CE state instead, acknowledging at once
// when the state changes (DCTCP, dctcp_ece_ack_update).

// ecnSend sets the ECN bits of a data segment about to be sent.
func (s *Sender) ecnSend(p *packet.Packet, retx bool) {
	if !retx || s.cfg.ECN == ECNDCTCP {
		p.ECN |= packet.ECT
	}
	if !retx && s.cwrPending {
		p.ECN |= packet.CWR
		s.cwrPending = false
	}
}

// ecnAck runs before the recovery state's update for an ACK of an ECN
// connection that newly delivered the given bytes: the controller that
// needs ECN sees the echo first (Linux's in_ack_event).
func (s *Sender) ecnAck(now clock.Time, ece bool, delivered units.Bytes) {
	if ece && delivered > 0 {
		s.counts().eceDelivered += int64(delivered)
	}
	// Only ECN connections get here: the assertion costs the others
	// nothing, and keeps the Sender in its size class.
	if o, ok := s.cc.(cc.ECNObserver); ok {
		o.OnAckECN(now, s.una, s.nxt, ece)
	}
}

// reducing reports whether PRR paces the window: fast recovery or an ECN
// reduction (Linux tcp_in_cwnd_reduction).
func (s *Sender) reducing() bool { return s.phase-cwr <= recovery-cwr }

// belowRecovery reports whether the sender is in the open state or an ECN
// reduction, the states Linux numbers below TCP_CA_Recovery, in which it
// sends loss probes, may start fast recovery and applies F-RTO to a
// timeout.
func (s *Sender) belowRecovery() bool { return s.phase <= cwr }

// ECNCapable reports whether the connection uses ECN (Config.ECN, or a
// controller that needs it).
func (s *Sender) ECNCapable() bool { return s.cfg.ECN != ECNOff }

// PeerRefusedECN turns ECN off on a connection whose peer did not agree to
// it in the handshake (RFC 3168 §6.1.1: a SYN-ACK without ECE; Linux
// clears TCP_ECN_OK), or whose path cannot carry it. Call it before the
// first data segment. A controller that needs ECN then sees no echoes and
// answers losses only, as Linux's DCTCP falls back to Reno (dctcp_init).
func (s *Sender) PeerRefusedECN() {
	s.cfg.ECN = ECNOff
	s.cwrPending = false
}

// ECEDelivered returns the bytes newly delivered (acknowledged
// cumulatively or selectively) by ACKs that carried ECE: over the bytes
// delivered, the fraction of the flow's data that met congestion, the F
// of DCTCP's alpha, for any controller.
func (s *Sender) ECEDelivered() int64 {
	if s.rare == nil {
		return 0
	}
	return s.rare.eceDelivered
}

// ECNReductions returns the number of window reductions ECN echoes started
// (entries into Linux's CWR state).
func (s *Sender) ECNReductions() int64 {
	if s.rare == nil {
		return 0
	}
	return int64(s.rare.ecnReductions)
}

// rxECN is a receiver's ECN state.
type rxECN uint8

const (
	rxECNOn     rxECN = 1 << iota // Config.ECN is on
	rxAccurate                    // ECNDCTCP: echo each segment's CE state
	rxDemandCWR                   // echo ECE on every ACK (TCP_ECN_DEMAND_CWR)
	rxCE                          // with rxAccurate: the last segment was CE (DCTCP's ce_state)
	rxSeen                        // an ECT segment has arrived (TCP_ECN_SEEN)
)

// ecnOnData applies a data segment's ECN bits before the segment is
// processed, and reports whether it must be acknowledged at once.
func (r *Receiver) ecnOnData(now clock.Time, bits packet.ECNBits) bool {
	ackNow := false
	if bits&packet.CWR != 0 {
		// tcp_ecn_accept_cwr: the sender has reduced, and its window
		// may be a segment: acknowledge at once.
		r.ecn &^= rxDemandCWR
		ackNow = true
	}
	if bits&packet.ECT == 0 {
		// A segment without ECT after ECT ones is most likely a
		// retransmission (new data only is ECT): the sender is
		// recovering, so the next two segments are acknowledged at
		// once (__tcp_ecn_check_ce's Not-ECT case). DCTCP's CE state
		// does not change (no CA event).
		if r.ecn&rxSeen != 0 {
			r.quickAck2()
		}
		return ackNow
	}
	r.ecn |= rxSeen
	ce := bits&packet.CE != 0
	if r.ecn&rxAccurate != 0 {
		// dctcp_ece_ack_update: the echo follows each segment's CE
		// state; on a change, data held for a delayed ACK is
		// acknowledged first with the old echo, and this segment at once.
		if ce != (r.ecn&rxCE != 0) {
			if r.pending > 0 {
				r.setEcho(r.ecn&rxCE != 0)
				r.sendAck(now)
			}
			r.ecn ^= rxCE
			ackNow = true
		}
		r.setEcho(ce)
		return ackNow
	}
	if ce && r.ecn&rxDemandCWR == 0 {
		// tcp_ecn_check_ce: the sender may have a small window, so the
		// next two segments are acknowledged at once.
		r.ecn |= rxDemandCWR
		r.quickAck2()
	}
	return ackNow
}

// quickAck2 is tcp_enter_quickack_mode(sk, 2): at least the next two
// segments, as many as the window's quick-ACK count allows, are
// acknowledged at once.
func (r *Receiver) quickAck2() {
	if !r.noQuickAck {
		r.qa.quick = max(r.qa.quick, min(r.quickAcks, 2))
	}
}

// setEcho sets whether the receiver's ACKs carry ECE.
func (r *Receiver) setEcho(on bool) {
	if on {
		r.ecn |= rxDemandCWR
	} else {
		r.ecn &^= rxDemandCWR
	}
}
