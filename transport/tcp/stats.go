package tcp

import (
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/units"
)

// Stats are a sender's counters.
type Stats struct {
	// SegmentsSent counts data segments sent, retransmissions included.
	SegmentsSent int64
	// BytesSent counts payload bytes sent, retransmissions included.
	BytesSent units.Bytes
	// Retransmissions counts retransmitted segments.
	Retransmissions int64
	// RTOs counts retransmission timeouts.
	RTOs int64
	// FastRecoveries counts entries into fast recovery.
	FastRecoveries int64
	// MarkedLost counts segments marked lost (by SACK or timeout).
	MarkedLost int64
	// TLPs counts tail loss probes sent; TLPRecoveries those that
	// repaired a loss.
	TLPs, TLPRecoveries int64
	// SpuriousRTOs counts timeouts F-RTO found spurious and undid.
	SpuriousRTOs int64
	// BytesAcked is the cumulatively acknowledged payload.
	BytesAcked units.Bytes
}

// FlowState is a copyable snapshot of a sender, for probes, time series and
// learning observations. Probes must not mutate the sender.
type FlowState struct {
	// Cwnd is the congestion window, bytes.
	Cwnd units.Bytes
	// InFlight is the RFC 6675 pipe, bytes.
	InFlight units.Bytes
	// PacingRate is the controller's pacing rate, bits/s (0 = unpaced).
	PacingRate units.Bandwidth
	// SRTT, RTTVar, MinRTT and LatestRTT are the RTT estimates.
	SRTT, RTTVar, MinRTT, LatestRTT time.Duration
	// RTO is the current retransmission timeout including back-off.
	RTO time.Duration
	// SndUna and SndNxt are the first unacknowledged and next new byte.
	SndUna, SndNxt int64
	// Delivered is the count of delivered bytes (C.delivered).
	Delivered units.Bytes
	// InRecovery is true during fast recovery or after a timeout.
	InRecovery bool
	// Stats are the counters.
	Stats Stats
	// RTOsInRecovery and RTOsInLoss are Sender.TimeoutStates.
	RTOsInRecovery, RTOsInLoss int64
	// LostRetransmits is Sender.LostRetransmits.
	LostRetransmits int64
	// ECNReductions is Sender.ECNReductions.
	ECNReductions int64
	// ECEDelivered is Sender.ECEDelivered.
	ECEDelivered int64
	// CC is the controller's own snapshot, if it has one.
	CC cc.State
}

// Stats returns the counters.
func (s *Sender) Stats() Stats { return s.stats }

// State returns a snapshot.
func (s *Sender) State() FlowState {
	st := FlowState{
		Cwnd:       s.cc.CongestionWindow(),
		InFlight:   s.InFlight(),
		PacingRate: s.cc.PacingRate(),
		SRTT:       s.rtt.SRTT(), RTTVar: s.rtt.RTTVar(), MinRTT: s.rtt.Min(), LatestRTT: s.rtt.Latest(),
		RTO:    s.currentRTO(),
		SndUna: s.una, SndNxt: s.nxt,
		Delivered:  s.rate.Delivered(),
		InRecovery: s.phase != open,
		Stats:      s.stats,
	}
	st.RTOsInRecovery, st.RTOsInLoss = s.TimeoutStates()
	st.LostRetransmits = s.LostRetransmits()
	st.ECNReductions = s.ECNReductions()
	st.ECEDelivered = s.ECEDelivered()
	if in, ok := s.cc.(cc.Inspector); ok {
		st.CC = in.State()
	}
	return st
}
