// Package cc defines the congestion-control interface shared by every sender
// in cclab: the simulator's TCP-like transport, the Mockets-style transport,
// learning agents, and the real-socket transport that transport/ also
// holds. Controllers live in subpackages
// (cc/newreno, cc/cubic, cc/vegas, cc/bbr, cc/dctcp, cc/hybla, cc/westwood,
// cc/fixed, cc/external) and register
// themselves here; import cc/all to get all of them.
//
// The interface is event-named: the transport reports what happened (a
// segment was sent, an ACK arrived with a rate sample, loss was detected, the
// retransmission timer fired) with the event time as an argument, and reads
// back the outputs (congestion window, pacing rate). A controller owns its
// state and never reaches into the transport; loss detection, recovery, RTT
// estimation and pacing are the transport's job.
package cc

import (
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Algorithm is a congestion controller. Methods are called from one goroutine;
// implementations need no locking and must not read the wall clock.
//
// For each ACK the transport calls, in order: OnRecoveryEnd (if the ACK ends
// fast recovery), OnCongestionEvent (if it reveals a new loss outside
// recovery), then OnAck (if it acknowledges data). OnPacketSent follows for
// each segment the ACK lets it send.
type Algorithm interface {
	// OnPacketSent is called for every segment sent, new or retransmitted.
	// inFlight is the transport's estimate of bytes in the network after the
	// send (RFC 6675 "pipe").
	OnPacketSent(now clock.Time, bytes units.Bytes, inFlight units.Bytes, retransmission bool)
	// OnAck is called for every ACK that newly acknowledges data, cumulatively
	// or selectively. The Ack is only valid during the call.
	OnAck(now clock.Time, ack *Ack)
	// OnCongestionEvent is called once when the transport detects loss and
	// enters fast recovery (RFC 6582: at most once per window of data).
	OnCongestionEvent(now clock.Time, ev *LossEvent)
	// OnRecoveryEnd is called when fast recovery ends: the recovery point
	// (the highest sequence sent when loss was detected) is acknowledged.
	OnRecoveryEnd(now clock.Time)
	// OnRetransmissionTimeout is called when the retransmission timer fires
	// and the transport falls back to retransmitting from the first
	// unacknowledged segment. inFlight is what the transport still counts
	// in flight once the timed-out segments are marked lost: zero when it
	// marks every outstanding segment, more when, as Linux since 4.18
	// (tcp_timeout_mark_lost), it spares those sent within the last RTT. A
	// controller following Linux's tcp_enter_loss sets its window to
	// inFlight plus one segment, so that the first retransmission fits.
	OnRetransmissionTimeout(now clock.Time, inFlight units.Bytes)
	// CongestionWindow is the number of bytes the transport may have in
	// flight.
	CongestionWindow() units.Bytes
	// PacingRate is the rate at which the transport should space segments,
	// or 0 to send as fast as the window allows.
	PacingRate() units.Bandwidth
}

// Ack describes the effect of one arriving ACK, after the transport has
// updated its scoreboard and RTT estimates.
type Ack struct {
	// AckedBytes is the number of bytes newly acknowledged by this ACK,
	// cumulatively or by SACK.
	AckedBytes units.Bytes
	// LostBytes is the number of bytes newly marked lost while processing it.
	LostBytes units.Bytes
	// PriorInFlight and InFlight are the bytes in flight before and after
	// processing the ACK.
	PriorInFlight, InFlight units.Bytes
	// RTT is the round-trip sample taken from this ACK, or 0 if it gave none
	// (Karn's rule: only segments never retransmitted are timed).
	RTT time.Duration
	// MinRTT is the smallest RTT sample seen on the connection, SRTT the
	// RFC 6298 smoothed RTT; both 0 before the first sample.
	MinRTT, SRTT time.Duration
	// InRecovery reports whether the transport is in fast recovery after
	// processing this ACK (not after a retransmission timeout, when the
	// window grows again by slow start).
	InRecovery bool
	// CWR reports whether the transport is in an ECN window reduction
	// (Linux's CWR state, LossEvent.ECN) after processing this ACK: the
	// window does not grow, as in fast recovery, but the rules of fast
	// recovery itself (BBR's packet conservation) do not apply.
	CWR bool
	// InLoss reports whether the transport is in a retransmission
	// timeout's loss state (Linux's TCP_CA_Loss) after processing this
	// ACK: the window grows by slow start, as in the open state, but a
	// controller that follows Linux's set_state hook may behave
	// differently there (Hybla grows by Reno's rules outside the open
	// state).
	InLoss bool
	// Disorder reports Linux's TCP_CA_Disorder after processing this ACK:
	// the open state with SACKed, lost or retransmitted data outstanding
	// (tcp_try_keep_open). Only a transport that models it reports it
	// (tcp.Config.LinuxWindowGrowth); a controller that follows Linux's
	// set_state hook may behave differently there (Hybla grows by Reno's
	// rules outside the open state, Vegas pauses).
	Disorder bool
	// HoldWindow reports an ACK on which Linux would not call the
	// controller's cong_avoid: it acknowledged no new data cumulatively,
	// only SACKed it (tcp_may_raise_cwnd's FLAG_DATA_ACKED). The
	// controller's per-ACK bookkeeping (RTT samples, HyStart's delay
	// samples, bandwidth estimates: Linux's pkts_acked and ACK events)
	// still runs; its window does not grow. Only a transport that models it
	// reports it (tcp.Config.LinuxWindowGrowth).
	HoldWindow bool
	// CwndLimited reports whether sending was limited by the congestion
	// window (rather than by the application or the receiver) since the
	// previous ACK. Window-growth rules apply only when it is true (Linux
	// tcp_is_cwnd_limited; RFC 7661), so an idle or application-limited
	// sender does not inflate its window.
	CwndLimited bool
	// TotalDelivered is the connection's running count of delivered bytes
	// (draft-cheng-iccrg-delivery-rate-estimation C.delivered).
	TotalDelivered units.Bytes
	// Rate is the delivery-rate sample for this ACK.
	Rate RateSample
}

// RateSample is a delivery-rate sample as defined by
// draft-cheng-iccrg-delivery-rate-estimation, section 3.3.
type RateSample struct {
	// DeliveryRate is Delivered/Interval, or 0 when the sample is invalid.
	DeliveryRate units.Bandwidth
	// Delivered is the number of bytes delivered over Interval.
	Delivered units.Bytes
	// Interval is max(send elapsed, ack elapsed) for the sampled packet.
	Interval time.Duration
	// PriorDelivered is C.delivered when the most recently sent of the
	// newly delivered packets was sent; BBR counts rounds with it.
	PriorDelivered units.Bytes
	// RTT is the RTT of that packet, 0 if it was retransmitted.
	RTT time.Duration
	// IsAppLimited reports whether the sampled packet was sent while the
	// application had nothing to send, so the rate underestimates capacity.
	IsAppLimited bool
}

// Valid reports whether the sample carries a usable rate.
func (r *RateSample) Valid() bool { return r.Interval > 0 && r.Delivered > 0 }

// LossEvent describes the loss that started a fast recovery episode.
type LossEvent struct {
	// PriorInFlight is the bytes in flight when loss was detected.
	PriorInFlight units.Bytes
	// LostBytes is the number of bytes marked lost by the detection; 0
	// when the recovery starts for segments marked lost earlier (a
	// transport that starts recovery as Linux does, on any segment marked
	// lost and not yet delivered).
	LostBytes units.Bytes
	// ECN reports that the event is an ECN-Echo, not a loss: the
	// transport reduces the window as for a loss (RFC 3168 §6.1.2) but
	// retransmits nothing, and OnRecoveryEnd ends the reduction once the
	// data in flight at the echo is acknowledged (Linux's CWR state).
	ECN bool
	// InCWR reports a loss found during an ECN reduction: Linux's
	// tcp_enter_recovery makes no second reduction then (the window is
	// already on its way down: no ssthresh call), so a loss-based
	// controller keeps the reduction it made for the echo; a controller
	// with its own loss response (DCTCP's halving, BBR's conservation)
	// applies it.
	InCWR bool
}

// ECNObserver is implemented by controllers that need ECN and read every
// ACK's echo before the transport reacts to it: DCTCP, whose estimate of
// the fraction of marked data is updated in Linux's in_ack_event hook,
// ahead of the window reduction the same ACK may start. A transport that
// finds the interface on its controller turns ECN on (Linux's
// TCP_CONG_NEEDS_ECN) whatever its configuration says.
type ECNObserver interface {
	// OnAckECN is called for every ACK, before OnCongestionEvent: ece
	// reports whether it echoed CE, una and nxt are the sender's SND.UNA
	// after it and SND.NXT (byte offsets).
	OnAckECN(now clock.Time, una, nxt int64, ece bool)
}

// State is a copyable snapshot of a controller's state, for probes, logs,
// plots and learning observations. Probes must not mutate the controller.
type State struct {
	// Cwnd is the congestion window, bytes.
	Cwnd units.Bytes
	// Ssthresh is the slow-start threshold, bytes; 0 when not applicable.
	Ssthresh units.Bytes
	// PacingRate is the pacing rate, bits/s; 0 when not paced.
	PacingRate units.Bandwidth
	// Mode names the controller's phase, e.g. "slow_start",
	// "congestion_avoidance", "recovery", "startup", "drain", "probe_bw",
	// "probe_rtt", "fixed".
	Mode string
}

// Inspector is implemented by controllers that can report their state.
type Inspector interface {
	State() State
}

// Tunable is implemented by controllers whose parameters can be changed while
// they run (by a link schedule, an NSGA-II candidate or an RL agent).
type Tunable interface {
	// SetParam sets the named parameter; it returns an error naming the
	// accepted parameters and range if the name or value is not accepted.
	SetParam(name string, value float64) error
}

// Establisher is implemented by controllers that take the handshake's
// measurements when the connection is established, as Linux initialises a
// controller (tcp_init_transfer -> tcp_init_congestion_control, the ca's
// init) once the SYN-ACK has given the socket its first RTT sample: BBR
// starts its min-RTT filter and its pacing rate from it. srtt and minRTT
// are 0 when the handshake gave no sample.
type Establisher interface {
	OnEstablished(now clock.Time, srtt, minRTT time.Duration)
}

// SendBufferSizer is implemented by controllers that ask Linux's send
// buffer to hold more than twice their window (tcp_congestion_ops'
// sndbuf_expand, read by tcp_sndbuf_expand): BBR asks for three windows,
// "since BBR may slow-start even during recovery". Only a transport
// modelling Linux's send buffer reads it.
type SendBufferSizer interface {
	SendBufferWindows() int64
}

// InternallyPaced is implemented by controllers that Linux paces inside
// TCP (the modules that set sk_pacing_status to SK_PACING_NEEDED: BBR),
// so that a transport modelling Linux's pacing applies it to them and
// not to controllers whose pacing rate stands for an application's or an
// agent's (the fixed and external controllers). MinTSOSegs is the module's
// min_tso_segs, the fewest segments tcp_tso_segs puts in one paced send
// (BBR: one below 1.2 Mbit/s, else two).
type InternallyPaced interface {
	MinTSOSegs() int64
}

// WindowSetter is implemented by controllers whose window can be set from
// outside at any time (the fixed window and the external controller).
type WindowSetter interface {
	SetCongestionWindow(now clock.Time, w units.Bytes)
}

// PacingSetter is implemented by controllers whose pacing rate can be set
// from outside (the external controller).
type PacingSetter interface {
	SetPacingRate(now clock.Time, r units.Bandwidth)
}
