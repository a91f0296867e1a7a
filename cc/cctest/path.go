package cctest

import (
	"container/heap"
	"slices"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/estimate"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// PathConfig describes a single-bottleneck path for Path.
type PathConfig struct {
	// Rate is the bottleneck rate, bits/s. Required.
	Rate units.Bandwidth
	// BaseRTT is the two-way propagation delay, excluding serialisation
	// and queueing. Required.
	BaseRTT time.Duration
	// QueueLimit is the drop-tail buffer, bytes, counting the packet being
	// serialised. Zero means unlimited.
	QueueLimit units.Bytes
	// MSS is the segment size, bytes. Default 1448.
	MSS units.Bytes
	// AckEvery is the number of in-order segments per delayed ACK (RFC
	// 5681 §4.2: at least every second full-sized segment). Default 2.
	AckEvery int
	// DelayedAckTimeout is the receiver's delayed-ACK timer. Default 40 ms
	// (Linux TCP_DELACK_MIN).
	DelayedAckTimeout time.Duration
	// Drop, if set, is asked about every transmission before it enters the
	// queue (sendIdx counts transmissions from 0, retransmissions
	// included); returning true drops it. It must be deterministic.
	Drop func(sendIdx int64, now clock.Time) bool
}

// Observation is what Path hands its probe after each ACK. It must not be
// retained or modified.
type Observation struct {
	// Now is the ACK's arrival time at the sender.
	Now clock.Time
	// Ack is the ACK given to the controller.
	Ack *cc.Ack
	// QueueBytes is the bottleneck backlog, bytes, at Now.
	QueueBytes units.Bytes
	// Cwnd and PacingRate are the controller's outputs after the ACK.
	Cwnd       units.Bytes
	PacingRate units.Bandwidth
}

// PathStats counts what happened on a Path. Segment counts are
// transmissions; bytes are payload.
type PathStats struct {
	// Sent counts transmissions (Retransmitted of them retransmissions),
	// Dropped those lost at the bottleneck or by Drop, Received those that
	// reached the receiver.
	Sent, Retransmitted, Dropped, Received int64
	// Delivered is the number of distinct bytes acknowledged.
	Delivered units.Bytes
	// CongestionEvents and Timeouts count the controller calls.
	CongestionEvents, Timeouts int
}

// RandomDrop returns a PathConfig.Drop that drops each transmission with
// probability p, independently, decided by a hash of its index
// (splitmix64), so that a run is repeatable and two controllers face the
// same draw for their n-th transmissions.
func RandomDrop(p float64) func(sendIdx int64, now clock.Time) bool {
	return func(i int64, _ clock.Time) bool {
		x := uint64(i)*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
		x ^= x >> 31
		x *= 0xBF58476D1CE4E5B9
		x ^= x >> 29
		return float64(x>>11)/float64(1<<53) < p
	}
}

// Path is a minimal event-driven single-bottleneck path with a bulk sender:
// the sender transmits whenever the window (and the pacing rate, if any)
// allows; packets queue at a FIFO drop-tail bottleneck; the receiver ACKs
// every AckEvery in-order segments, immediately on out-of-order data, and
// reports exactly which transmissions it received (an idealised SACK). The
// sender declares a segment lost when three segments sent after it have been
// delivered (RFC 6675 DupThresh), runs one recovery episode per window (RFC
// 6582), retransmits lost segments first, and fires an RFC 6298 RTO (200 ms
// floor) with exponential back-off, after which ACKs report InRecovery until
// the data sent before the timeout is delivered (as the Driver and
// tcp.Sender do). Events at the same instant run in the order they were
// scheduled.
type Path struct {
	tb    testing.TB
	alg   cc.Algorithm
	cfg   PathConfig
	probe func(*Observation)

	now    clock.Time
	events eventHeap
	evSeq  int64

	// sender
	nextSeq       int64
	nextSendIdx   int64
	flight        []packet
	lost          []packet
	pipe          units.Bytes
	pendingLost   units.Bytes
	est           estimator
	seqDelivered  []bool
	cumDelivered  int64 // lowest segment not yet delivered
	inRecovery    bool  // fast recovery
	lossPhase     bool  // recovering from a timeout
	recoveryPoint int64
	cwndBlocked   bool
	nextSendTime  clock.Time
	sendArmed     bool
	rtoGen        int64
	rtoArmed      bool
	backoff       int

	// bottleneck: departure times and sizes of packets in the queue
	departures []departure

	// receiver
	rcvNext     int64
	ooo         map[int64]bool
	pending     []int64 // transmissions received since the last ACK
	inOrderPend int
	delackGen   int64

	stats PathStats
}

type departure struct {
	at   clock.Time
	size units.Bytes
}

// NewPath returns a path at time 0 driving alg. probe, if not nil, sees
// every ACK.
func NewPath(tb testing.TB, alg cc.Algorithm, cfg PathConfig, probe func(*Observation)) *Path {
	tb.Helper()
	if cfg.Rate <= 0 || cfg.BaseRTT <= 0 {
		tb.Fatalf("cctest.NewPath: need Rate > 0 and BaseRTT > 0, got %v and %v", cfg.Rate, cfg.BaseRTT)
	}
	if cfg.MSS == 0 {
		cfg.MSS = 1448
	}
	if cfg.AckEvery == 0 {
		cfg.AckEvery = 2
	}
	if cfg.DelayedAckTimeout == 0 {
		cfg.DelayedAckTimeout = 40 * time.Millisecond
	}
	return &Path{tb: tb, alg: alg, cfg: cfg, probe: probe, ooo: map[int64]bool{}, backoff: 1, est: newEstimator()}
}

// Now is the path's current time.
func (p *Path) Now() clock.Time { return p.now }

// Stats returns the counters so far.
func (p *Path) Stats() PathStats {
	s := p.stats
	s.Delivered = p.est.rate.Delivered()
	return s
}

// InFlight is the sender's pipe, bytes.
func (p *Path) InFlight() units.Bytes { return p.pipe }

// QueueBytes is the bottleneck backlog at the current time.
func (p *Path) QueueBytes() units.Bytes {
	var b units.Bytes
	for _, d := range p.departures {
		if d.at > p.now {
			b += d.size
		}
	}
	return b
}

// BDP is the path's bandwidth-delay product at the base RTT, bytes.
func (p *Path) BDP() units.Bytes { return p.cfg.Rate.BytesIn(p.cfg.BaseRTT) }

// Run advances the simulation by d, processing every event up to and
// including now+d.
func (p *Path) Run(d time.Duration) {
	end := p.now.Add(d)
	if p.nextSendIdx == 0 {
		p.trySend()
	}
	for len(p.events) > 0 && p.events[0].at <= end {
		ev := heap.Pop(&p.events).(event)
		p.now = ev.at
		switch ev.kind {
		case evSend:
			p.sendArmed = false
			p.trySend()
		case evRecv:
			p.receive(ev.dataSeq, ev.sendIdx)
		case evAck:
			p.onAck(ev.acked)
		case evDelack:
			if ev.gen == p.delackGen && len(p.pending) > 0 {
				p.sendAck()
			}
		case evRTO:
			if ev.gen == p.rtoGen && p.rtoArmed {
				p.onRTO()
			}
		}
	}
	p.now = end
}

type evKind int

const (
	evSend evKind = iota
	evRecv
	evAck
	evDelack
	evRTO
)

type event struct {
	at      clock.Time
	seq     int64 // tie-break: scheduling order
	kind    evKind
	gen     int64
	dataSeq int64
	sendIdx int64
	acked   []int64
}

func (p *Path) schedule(ev event) {
	ev.seq = p.evSeq
	p.evSeq++
	heap.Push(&p.events, ev)
}

// eventHeap orders events by (time, scheduling order): deterministic.
type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// trySend transmits while the window and the pacing rate allow.
func (p *Path) trySend() {
	mss := p.cfg.MSS
	for {
		if p.pipe+mss > p.alg.CongestionWindow() {
			p.cwndBlocked = true
			return
		}
		if rate := p.alg.PacingRate(); rate > 0 && p.now < p.nextSendTime {
			if !p.sendArmed {
				p.sendArmed = true
				p.schedule(event{at: p.nextSendTime, kind: evSend})
			}
			return
		}
		var pk packet
		retrans := false
		if len(p.lost) > 0 {
			pk = p.lost[0]
			p.lost = p.lost[1:]
			retrans = true
		} else {
			pk = packet{seq: p.nextSeq, size: mss}
			p.nextSeq++
			p.seqDelivered = append(p.seqDelivered, false)
		}
		p.transmit(pk, retrans)
		if rate := p.alg.PacingRate(); rate > 0 {
			// Pace from now when idle so that no burst credit accumulates.
			p.nextSendTime = max(p.now, p.nextSendTime).Add(rate.TxTime(pk.size))
		}
	}
}

func (p *Path) transmit(pk packet, retrans bool) {
	pk.retrans = retrans
	pk.sendIdx = p.nextSendIdx
	pk.laterAcked = 0
	p.nextSendIdx++
	p.est.onSend(&pk, p.now, p.pipe)
	p.flight = append(p.flight, pk)
	p.pipe += pk.size
	p.stats.Sent++
	if retrans {
		p.stats.Retransmitted++
	}
	p.alg.OnPacketSent(p.now, pk.size, p.pipe, retrans)
	if !p.rtoArmed {
		p.armRTO()
	}
	p.enqueue(pk)
}

// enqueue puts a transmission into the bottleneck, or drops it.
func (p *Path) enqueue(pk packet) {
	if p.cfg.Drop != nil && p.cfg.Drop(pk.sendIdx, p.now) {
		p.stats.Dropped++
		return
	}
	// Forget packets that have left the bottleneck.
	i := 0
	for i < len(p.departures) && p.departures[i].at <= p.now {
		i++
	}
	p.departures = append(p.departures[:0], p.departures[i:]...)
	var backlog units.Bytes
	last := p.now
	for _, d := range p.departures {
		backlog += d.size
		last = d.at
	}
	if p.cfg.QueueLimit > 0 && backlog+pk.size > p.cfg.QueueLimit {
		p.stats.Dropped++
		return
	}
	at := last.Add(p.cfg.Rate.TxTime(pk.size))
	p.departures = append(p.departures, departure{at: at, size: pk.size})
	p.schedule(event{at: at.Add(p.cfg.BaseRTT / 2), kind: evRecv, dataSeq: pk.seq, sendIdx: pk.sendIdx})
}

// receive is the receiver's segment arrival (RFC 5681 §4.2 ACK policy).
func (p *Path) receive(seq, sendIdx int64) {
	p.stats.Received++
	p.pending = append(p.pending, sendIdx)
	switch {
	case seq == p.rcvNext:
		hole := len(p.ooo) > 0
		p.rcvNext++
		for p.ooo[p.rcvNext] {
			delete(p.ooo, p.rcvNext)
			p.rcvNext++
		}
		p.inOrderPend++
		// RFC 5681 §4.2: ACK at least every second segment, and
		// immediately when a segment fills a gap.
		if hole || p.inOrderPend >= p.cfg.AckEvery {
			p.sendAck()
			return
		}
		if p.inOrderPend == 1 {
			// The timer runs from the first unacknowledged segment.
			p.delackGen++
			p.schedule(event{at: p.now.Add(p.cfg.DelayedAckTimeout), kind: evDelack, gen: p.delackGen})
		}
	case seq > p.rcvNext:
		p.ooo[seq] = true
		p.sendAck() // RFC 5681 §4.2: out-of-order data is ACKed at once
	default:
		p.sendAck() // duplicate
	}
}

func (p *Path) sendAck() {
	acked := p.pending
	p.pending = nil
	p.inOrderPend = 0
	p.delackGen++
	p.schedule(event{at: p.now.Add(p.cfg.BaseRTT / 2), kind: evAck, acked: acked})
}

// onAck is the sender's ACK processing.
func (p *Path) onAck(acked []int64) {
	prior := p.pipe
	var rs estimate.Sample
	var ackedBytes units.Bytes
	var maxIdx int64 = -1
	progress := false
	for _, idx := range acked {
		maxIdx = max(maxIdx, idx)
		pk, ok := p.takeFlight(idx)
		if !ok {
			pk, ok = p.takeLost(idx)
			if !ok {
				continue
			}
		} else {
			p.pipe -= pk.size
		}
		if p.seqDelivered[pk.seq] {
			continue // a duplicate of data already delivered
		}
		p.seqDelivered[pk.seq] = true
		progress = true
		ackedBytes += pk.size
		p.est.onDeliver(&rs, &pk, p.now)
	}
	for p.cumDelivered < int64(len(p.seqDelivered)) && p.seqDelivered[p.cumDelivered] {
		p.cumDelivered++
	}
	// RFC 6675 IsLost with DupThresh 3, counted in segments delivered after
	// each outstanding one.
	var newlyLost units.Bytes
	kept := p.flight[:0]
	for i := range p.flight {
		pk := p.flight[i]
		if pk.sendIdx < maxIdx {
			for _, idx := range acked {
				if idx > pk.sendIdx {
					pk.laterAcked++
				}
			}
			if pk.laterAcked >= 3 {
				newlyLost += pk.size
				p.pipe -= pk.size
				p.lost = append(p.lost, pk)
				continue
			}
		}
		kept = append(kept, pk)
	}
	p.flight = kept
	if newlyLost > 0 {
		p.pendingLost += newlyLost
		p.est.lostTotal += newlyLost
		if !p.inRecovery && !p.lossPhase {
			p.inRecovery = true
			p.recoveryPoint = p.nextSeq - 1
			p.stats.CongestionEvents++
			p.alg.OnCongestionEvent(p.now, &cc.LossEvent{PriorInFlight: prior, LostBytes: newlyLost})
		}
	}
	if progress {
		p.backoff = 1
		if len(p.flight) > 0 || len(p.lost) > 0 {
			p.armRTO()
		} else {
			p.rtoArmed = false
		}
	}
	if ackedBytes > 0 {
		a := cc.Ack{AckedBytes: ackedBytes, PriorInFlight: prior}
		p.est.finish(&rs, &a.Rate)
		a.LostBytes = p.pendingLost
		p.pendingLost = 0
		a.InFlight = p.pipe
		a.RTT = rs.RTT
		a.MinRTT = p.est.rtt.Min()
		a.SRTT = p.est.rtt.SRTT()
		a.CwndLimited = p.cwndBlocked
		p.cwndBlocked = false
		a.TotalDelivered = p.est.rate.Delivered()
		if (p.inRecovery || p.lossPhase) && p.cumDelivered > p.recoveryPoint {
			if p.inRecovery {
				p.alg.OnRecoveryEnd(p.now)
			}
			p.inRecovery, p.lossPhase = false, false
		}
		a.InRecovery = p.inRecovery || p.lossPhase
		a.InLoss = p.lossPhase
		p.alg.OnAck(p.now, &a)
		if p.probe != nil {
			p.probe(&Observation{Now: p.now, Ack: &a, QueueBytes: p.QueueBytes(), Cwnd: p.alg.CongestionWindow(), PacingRate: p.alg.PacingRate()})
		}
	}
	p.trySend()
}

func (p *Path) takeFlight(idx int64) (packet, bool) {
	i, ok := slices.BinarySearchFunc(p.flight, idx, func(pk packet, t int64) int {
		return cmpInt64(pk.sendIdx, t)
	})
	if !ok {
		return packet{}, false
	}
	pk := p.flight[i]
	p.flight = slices.Delete(p.flight, i, i+1)
	return pk, true
}

func (p *Path) takeLost(idx int64) (packet, bool) {
	for i := range p.lost {
		if p.lost[i].sendIdx == idx {
			pk := p.lost[i]
			p.lost = slices.Delete(p.lost, i, i+1)
			return pk, true
		}
	}
	return packet{}, false
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (p *Path) armRTO() {
	p.rtoGen++
	p.rtoArmed = true
	p.schedule(event{at: p.now.Add(p.est.rtt.RTO(time.Second, 60*time.Second) * time.Duration(p.backoff)), kind: evRTO, gen: p.rtoGen})
}

// onRTO is RFC 6298 §5.4-5.6: everything outstanding is presumed lost,
// retransmission restarts from the oldest segment and the timer backs off.
func (p *Path) onRTO() {
	p.stats.Timeouts++
	p.lost = append(p.lost, p.flight...)
	p.flight = p.flight[:0]
	slices.SortFunc(p.lost, func(a, b packet) int { return cmpInt64(a.seq, b.seq) })
	p.pipe = 0
	p.inRecovery = false
	p.lossPhase = true
	p.recoveryPoint = p.nextSeq - 1
	p.alg.OnRetransmissionTimeout(p.now, 0)
	p.backoff = min(p.backoff*2, 64)
	p.armRTO()
	p.trySend()
}
