package cubic

import (
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Detection methods of hybrid slow start, as Linux's hystart_detect bits.
const (
	// HystartACKTrain ends slow start when a train of closely spaced ACKs
	// lasts longer than half the minimum delay.
	HystartACKTrain = 1
	// HystartDelay ends slow start when the round's minimum RTT exceeds the
	// path's minimum by clamp(delay_min/8, 4 ms, 16 ms).
	HystartDelay = 2
)

// Linux tcp_cubic.c constants of the delay detector.
const (
	hystartMinSamples = 8                     // HYSTART_MIN_SAMPLES
	hystartDelayMin   = 4 * time.Millisecond  // HYSTART_DELAY_MIN
	hystartDelayMax   = 16 * time.Millisecond // HYSTART_DELAY_MAX
)

// hystart is Linux's hybrid slow start (Ha and Rhee, "Taming the Elephants:
// New TCP Slow Start", 2011; tcp_cubic.c hystart_update): it looks for the
// point where the pipe is full by ACK-train length and by a rise in delay,
// and ends slow start there instead of at the first loss. It only decides;
// the controller acts on its verdict.
type hystart struct {
	detect    int           // HystartACKTrain | HystartDelay
	lowWindow units.Bytes   // no detection below this window (Linux: 16 segments)
	ackDelta  time.Duration // max ACK spacing within a train (Linux: 2 ms)

	found              bool
	roundStart         clock.Time    // first ACK of the current round
	lastACK            clock.Time    // last ACK that continued the train
	currRTT            time.Duration // min RTT sample this round
	samples            int
	nextRoundDelivered units.Bytes
}

// reset forgets the detection result and the current round (Linux
// bictcp_hystart_reset plus found = 0 on TCP_CA_Loss).
func (h *hystart) reset() {
	h.found = false
	h.nextRoundDelivered = 0
	h.samples = 0
	h.currRTT = 0
}

// update feeds one RTT sample taken in slow start and reports whether the
// exit point was found with it. delayMin is the connection's minimum delay.
// A round begins with the first ACK for data sent after the previous round
// began: Linux compares snd_una with the snd_nxt recorded at the round's
// start (end_seq); the interface gives the equivalent in delivered bytes,
// priorDelivered >= the delivered count at the round's start.
func (h *hystart) update(now clock.Time, rtt, delayMin time.Duration, cwnd, priorDelivered, delivered units.Bytes) bool {
	if priorDelivered >= h.nextRoundDelivered {
		h.roundStart, h.lastACK = now, now
		h.nextRoundDelivered = delivered
		h.currRTT = 0
		h.samples = 0
	}
	// Linux hystart_update: "hystart triggers when cwnd is larger than
	// some threshold".
	if cwnd < h.lowWindow {
		return false
	}
	if h.detect&HystartACKTrain != 0 && now.Sub(h.lastACK) <= h.ackDelta {
		h.lastACK = now
		// Linux: the train must outlast delay_min/2 for an unpaced sender
		// (CUBIC does not pace here). Linux adds a TSO/GRO cushion of at
		// most 1 ms before halving; there is no TSO here, so none.
		if now.Sub(h.roundStart) > delayMin/2 {
			h.found = true
		}
	}
	if h.detect&HystartDelay != 0 {
		if h.currRTT == 0 || rtt < h.currRTT {
			h.currRTT = rtt
		}
		if h.samples < hystartMinSamples {
			h.samples++
		} else if h.currRTT > delayMin+min(max(delayMin/8, hystartDelayMin), hystartDelayMax) {
			h.found = true
		}
	}
	return h.found
}
