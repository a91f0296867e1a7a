package tcp

import (
	"math"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/core/units"
)

// segment is the scoreboard entry of one MSS-sized segment between SND.UNA
// and SND.NXT. Segment boundaries never change: retransmissions resend the
// same bytes, which lets the scoreboard be a ring indexed by segment number.
type segment struct {
	sentAt clock.Time // last (re)transmission
	// Delivery-rate snapshot at the last transmission
	// (draft-cheng-iccrg-delivery-rate-estimation §3.2).
	delivered     units.Bytes
	deliveredTime clock.Time
	firstSentTime clock.Time
	appLimited    bool

	len         units.Bytes
	sacked      bool
	lost        bool // marked lost and not yet SACKed
	retrans     bool // retransmitted since it was marked lost, still outstanding
	everRetrans bool
}

type phase uint8

const (
	open      phase = iota
	recovery        // fast recovery (RFC 6675)
	lossPhase       // after a retransmission timeout
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
	// CC is the controller's own snapshot, if it has one.
	CC cc.State
}

// Sender is the sending endpoint of one flow.
type Sender struct {
	cfg  Config
	flow int32
	clk  clock.Scheduler
	pool *packet.Pool
	out  packet.Receiver
	cc   cc.Algorithm

	rtt     RTTEstimator
	rtoT    clock.Timer
	pacerT  clock.Timer
	backoff int

	started, done bool
	established   bool
	synSentAt     clock.Time
	synRetries    int
	una, nxt      int64
	total         int64 // transfer end; math.MaxInt64 for bulk

	// Scoreboard ring: segment number k is at ring[(head + k - unaSeg) % cap].
	ring       []segment
	head, n    int
	unaSeg     int64
	outBytes   units.Bytes // bytes in [una, nxt)
	sacked     units.Bytes
	lost       units.Bytes
	retransOut units.Bytes
	highSacked int64 // highest SACKed segment number, -1 if none
	lostFront  int64 // segments below have been classified by loss detection
	retxHint   int64 // no retransmission is pending below this segment
	prevSACK   [packet.MaxSACK]packet.Block
	nPrevSACK  int

	phase         phase
	recoveryPoint int64

	// Delivery-rate estimation connection state (draft-cheng §3.1).
	delivered     units.Bytes
	deliveredTime clock.Time
	firstSentTime clock.Time
	appLimited    units.Bytes // 0, or the C.delivered value at which app-limited ends
	rackXmit      clock.Time  // latest send time of a delivered, never-retransmitted segment

	nextSend    clock.Time
	pacerLate   bool // trySend runs from a pacer timer that may have fired late
	cwndLimited bool

	// Proportional rate reduction (RFC 6937) during fast recovery, for
	// controllers that expose a slow-start threshold (the loss-based ones;
	// BBR runs its own recovery, as in Linux where PRR applies only when
	// the module has no cong_control).
	prr          prrTarget
	prrDelivered int64 // segments delivered since recovery began
	prrOut       int64 // segments sent since recovery began
	prrRecoverFS int64 // segments in flight when recovery began
	prrAllow     int64 // segments PRR lets the sender send now

	ack   cc.Ack // reused per ACK: no allocation
	stats Stats

	// OnRTT, if set, receives every RTT sample.
	OnRTT func(now clock.Time, rtt time.Duration)
	// OnDone, if set, is called when a finite transfer is fully
	// acknowledged.
	OnDone func(now clock.Time)
	// OnAck, if set, is called after each ACK is processed, for probes.
	OnAck func(now clock.Time, s *Sender)
}

// NewSender returns a sender for flow that sends through out. cfg must be
// valid (see Config.Validate).
func NewSender(cfg Config, flow int32, clk clock.Scheduler, pool *packet.Pool, out packet.Receiver, alg cc.Algorithm) *Sender {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		panic("tcp: " + err.Error())
	}
	s := &Sender{
		cfg: cfg, flow: flow, clk: clk, pool: pool, out: out, cc: alg,
		rtt:        NewRTTEstimator(cfg.InitialRTO, cfg.MinRTO, cfg.MaxRTO),
		total:      int64(cfg.Bytes),
		ring:       make([]segment, 64),
		highSacked: -1,
	}
	if s.total == 0 {
		s.total = math.MaxInt64
	}
	s.rtoT = clk.NewTimer(s.onRTO)
	s.pacerT = clk.NewTimer(s.onPacer)
	s.prr, _ = alg.(prrTarget)
	return s
}

// prrTarget is implemented by controllers whose window reduction the
// transport paces with PRR: the target is their slow-start threshold.
type prrTarget interface {
	Ssthresh() units.Bytes
}

// segs converts bytes to whole segments, rounding up.
func (s *Sender) segs(b units.Bytes) int64 {
	return (int64(b) + int64(s.cfg.MSS) - 1) / int64(s.cfg.MSS)
}

// prrUpdate computes how many segments may be sent in reaction to an ACK
// that delivered delivered bytes during fast recovery (RFC 6937 §3.1 with
// Slow Start Reduction Bound, in packets as Linux tcp_cwnd_reduction).
func (s *Sender) prrUpdate(delivered units.Bytes) {
	d := s.segs(delivered)
	s.prrDelivered += d
	pipe := s.segs(s.InFlight())
	ssth := max(int64(s.prr.Ssthresh())/int64(s.cfg.MSS), 1)
	var sndcnt int64
	if pipe > ssth {
		// Reduce proportionally: prr_delivered * ssthresh / RecoverFS.
		sndcnt = (s.prrDelivered*ssth+s.prrRecoverFS-1)/max(s.prrRecoverFS, 1) - s.prrOut
	} else {
		// Slow-start back up to ssthresh, at most one more than delivered.
		sndcnt = min(ssth-pipe, max(s.prrDelivered-s.prrOut, d)+1)
	}
	if s.prrOut == 0 {
		sndcnt = max(sndcnt, 1) // the fast retransmission goes at once
	}
	s.prrAllow = max(sndcnt, 0)
}

// CC returns the congestion controller.
func (s *Sender) CC() cc.Algorithm { return s.cc }

// Config returns the effective configuration.
func (s *Sender) Config() Config { return s.cfg }

// Stats returns the counters.
func (s *Sender) Stats() Stats { return s.stats }

// RTT returns the RTT estimator.
func (s *Sender) RTT() *RTTEstimator { return &s.rtt }

// Done reports whether a finite transfer is fully acknowledged.
func (s *Sender) Done() bool { return s.done }

// Start begins sending at now.
func (s *Sender) Start(now clock.Time) {
	if s.started {
		return
	}
	s.started = true
	s.deliveredTime, s.firstSentTime = now, now
	if s.cfg.NoHandshake {
		s.established = true
		s.trySend(now)
		return
	}
	s.sendSyn(now)
}

// sendSyn sends (or resends) the SYN: headers plus 8 bytes for the MSS,
// SACK-permitted and window-scale options, and arms the timer for it.
func (s *Sender) sendSyn(now clock.Time) {
	p := s.pool.Get()
	p.Flow = s.flow
	p.Kind = packet.Syn
	p.Size = s.cfg.Header + 8
	p.SentAt = now
	p.Retransmission = s.synRetries > 0
	s.synSentAt = now
	s.rtoT.Reset(now.Add(s.currentRTO()))
	s.out.Receive(now, p)
}

func (s *Sender) onSynAck(now, echo clock.Time) {
	if s.established {
		return
	}
	s.established = true
	// The timestamp echo says which SYN this answers, so even a
	// retransmitted SYN gives a sample (RFC 7323 §4; Linux does the same).
	s.rtt.Update(now.Sub(echo))
	s.backoff = 0
	s.rtoT.Stop()
	s.deliveredTime, s.firstSentTime = now, now
	s.trySend(now)
}

// Stop ends the flow: no more sending, timers disarmed. Packets in flight
// are still accounted by the network.
func (s *Sender) Stop() {
	s.done = true
	s.rtoT.Stop()
	s.pacerT.Stop()
}

// InFlight returns the RFC 6675 pipe: outstanding bytes not SACKed and not
// lost, plus retransmissions still outstanding.
func (s *Sender) InFlight() units.Bytes {
	return s.outBytes - s.sacked - s.lost + s.retransOut
}

// Delivered returns C.delivered.
func (s *Sender) Delivered() units.Bytes { return s.delivered }

// State returns a snapshot.
func (s *Sender) State() FlowState {
	st := FlowState{
		Cwnd:       s.cc.CongestionWindow(),
		InFlight:   s.InFlight(),
		PacingRate: s.cc.PacingRate(),
		SRTT:       s.rtt.SRTT(), RTTVar: s.rtt.RTTVar(), MinRTT: s.rtt.Min(), LatestRTT: s.rtt.Latest(),
		RTO:    s.currentRTO(),
		SndUna: s.una, SndNxt: s.nxt,
		Delivered:  s.delivered,
		InRecovery: s.phase != open,
		Stats:      s.stats,
	}
	if in, ok := s.cc.(cc.Inspector); ok {
		st.CC = in.State()
	}
	return st
}

func (s *Sender) seg(k int64) *segment {
	return &s.ring[(s.head+int(k-s.unaSeg))%len(s.ring)]
}

func (s *Sender) nxtSeg() int64 { return s.unaSeg + int64(s.n) }

func (s *Sender) segStart(k int64) int64 { return k * int64(s.cfg.MSS) }

func (s *Sender) currentRTO() time.Duration {
	rto := s.rtt.RTO()
	for i := 0; i < s.backoff && rto < s.cfg.MaxRTO; i++ {
		rto *= 2
	}
	return min(rto, s.cfg.MaxRTO)
}

// trySend sends as much as the window, the pacing rate and the data allow.
func (s *Sender) trySend(now clock.Time) {
	if !s.established || s.done {
		return
	}
	mss := s.cfg.MSS
	for {
		cwnd := max(s.cc.CongestionWindow(), mss)
		pipe := s.InFlight()
		if s.cfg.RecvWindow > 0 {
			cwnd = min(cwnd, s.cfg.RecvWindow)
		}
		if s.phase == recovery && s.prr != nil {
			if s.prrAllow <= 0 {
				s.cwndLimited = true
				return
			}
		} else if pipe+mss > cwnd {
			// Send a segment only if a whole one fits (RFC 6675 "cwnd -
			// pipe >= 1 SMSS"; Linux counts in packets, the same for full
			// segments).
			s.cwndLimited = true
			return
		}
		k, retx := s.nextSegment()
		if k < 0 {
			// Nothing to send with window available: application-limited
			// (draft-cheng §3.4).
			s.cwndLimited = false
			s.appLimited = max(s.delivered+pipe, 1)
			return
		}
		if rate := s.cc.PacingRate(); rate > 0 && now < s.nextSend {
			s.pacerT.Reset(s.nextSend)
			return
		}
		s.send(now, k, retx)
	}
}

// pacingCatchUp bounds the burst a late pacer timer may send to make up
// for its lateness.
const pacingCatchUp = time.Millisecond

// onPacer is the pacer timer's callback. The simulator fires it exactly on
// s.nextSend, so it is trySend; a real clock fires it late (scheduling
// delay), and then the schedule is kept rather than restarted from now, so
// up to pacingCatchUp of lost sending time is made up by a short burst, as
// a pacer that restarted from now would fall behind its rate by its
// lateness at every packet.
func (s *Sender) onPacer(now clock.Time) {
	s.pacerLate = true
	s.trySend(now)
	s.pacerLate = false
}

// nextSegment implements RFC 6675 NextSeg() rules 1 and 2: the lowest lost
// segment not yet retransmitted, else new data. It returns -1 if neither.
func (s *Sender) nextSegment() (int64, bool) {
	end := min(s.lostFront, s.nxtSeg())
	for k := max(s.retxHint, s.unaSeg); k < end; k++ {
		g := s.seg(k)
		if g.lost && !g.retrans && !g.sacked {
			s.retxHint = k
			return k, true
		}
	}
	s.retxHint = end
	if s.nxt >= s.total {
		return -1, false
	}
	return s.nxtSeg(), false
}

func (s *Sender) grow() {
	nr := make([]segment, 2*len(s.ring))
	for i := range s.n {
		nr[i] = s.ring[(s.head+i)%len(s.ring)]
	}
	s.ring, s.head = nr, 0
}

func (s *Sender) send(now clock.Time, k int64, retx bool) {
	if s.InFlight() == 0 {
		s.firstSentTime, s.deliveredTime = now, now
	}
	var g *segment
	if retx {
		g = s.seg(k)
		g.retrans, g.everRetrans = true, true
		s.retransOut += g.len
		s.stats.Retransmissions++
	} else {
		if s.n == len(s.ring) {
			s.grow()
		}
		s.n++
		g = s.seg(k)
		*g = segment{len: units.Bytes(min(int64(s.cfg.MSS), s.total-s.nxt))}
		s.nxt += int64(g.len)
		s.outBytes += g.len
	}
	g.sentAt = now
	if s.phase == recovery && s.prr != nil {
		s.prrAllow--
		s.prrOut++
	}
	g.delivered, g.deliveredTime, g.firstSentTime = s.delivered, s.deliveredTime, s.firstSentTime
	g.appLimited = s.appLimited != 0
	s.stats.SegmentsSent++
	s.stats.BytesSent += g.len

	p := s.pool.Get()
	p.Flow = s.flow
	p.Kind = packet.Data
	p.Seq = s.segStart(k)
	p.Len = g.len
	p.Size = g.len + s.cfg.Header
	p.SentAt = now
	p.Retransmission = retx

	s.cc.OnPacketSent(now, g.len, s.InFlight(), retx)
	if !s.rtoT.Armed() {
		s.rtoT.Reset(now.Add(s.currentRTO()))
	}
	if rate := s.cc.PacingRate(); rate > 0 {
		from := now
		if s.pacerLate {
			from = now.Add(-pacingCatchUp)
		}
		s.nextSend = max(s.nextSend, from).Add(rate.TxTime(p.Size))
	}
	s.out.Receive(now, p)
}

// Receive implements packet.Receiver for ACKs.
func (s *Sender) Receive(now clock.Time, p *packet.Packet) {
	ackNo := p.AckNo
	kind := p.Kind
	echo := p.EchoAt
	ackDelay := p.AckDelay
	var blocks [packet.MaxSACK]packet.Block
	nb := copy(blocks[:], p.SACK[:p.NSACK])
	s.pool.Put(p)
	if s.done || !s.started {
		return
	}
	if kind == packet.SynAck {
		s.onSynAck(now, echo)
		return
	}
	if !s.established {
		return
	}
	s.onAck(now, ackNo, echo, ackDelay, blocks[:nb])
}

// rateSample accumulates draft-cheng §3.3 state over one ACK.
type rateSample struct {
	ok             bool
	priorDelivered units.Bytes
	priorTime      clock.Time
	sendElapsed    time.Duration
	ackElapsed     time.Duration
	rtt            time.Duration
	appLimited     bool
	sentAt         clock.Time // send time of the sampled packet
}

// deliver records the first delivery (cumulative or SACK) of segment g.
func (s *Sender) deliver(now clock.Time, g *segment, rs *rateSample) {
	s.delivered += g.len
	s.deliveredTime = now
	if !g.everRetrans && g.sentAt > s.rackXmit {
		s.rackXmit = g.sentAt
	}
	// Take the sample from the most recently sent of the newly delivered
	// packets (draft-cheng §3.3 UpdateRateSample; Linux
	// tcp_rate_skb_delivered orders by send time the same way).
	if !rs.ok || g.sentAt > rs.sentAt {
		rs.ok = true
		rs.sentAt = g.sentAt
		rs.priorDelivered = g.delivered
		rs.priorTime = g.deliveredTime
		rs.appLimited = g.appLimited
		rs.sendElapsed = g.sentAt.Sub(g.firstSentTime)
		rs.ackElapsed = s.deliveredTime.Sub(g.deliveredTime)
		rs.rtt = 0
		if !g.everRetrans {
			rs.rtt = now.Sub(g.sentAt) // Karn: only unambiguous samples
		}
		s.firstSentTime = g.sentAt
	}
}

func (s *Sender) onAck(now clock.Time, ackNo int64, echo clock.Time, ackDelay time.Duration, blocks []packet.Block) {
	priorInFlight := s.InFlight()
	priorLost := s.stats.MarkedLost
	var rs rateSample
	var acked units.Bytes
	advanced := false

	// Cumulative acknowledgement.
	if ackNo > s.una && ackNo <= s.nxt {
		for s.n > 0 {
			g := s.seg(s.unaSeg)
			if s.segStart(s.unaSeg)+int64(g.len) > ackNo {
				break
			}
			if g.sacked {
				s.sacked -= g.len
			} else {
				if g.lost {
					s.lost -= g.len
				}
				if g.retrans {
					s.retransOut -= g.len
				}
				s.deliver(now, g, &rs)
				acked += g.len
			}
			s.outBytes -= g.len
			s.stats.BytesAcked += g.len
			*g = segment{}
			s.head = (s.head + 1) % len(s.ring)
			s.n--
			s.unaSeg++
		}
		s.una = s.segStart(s.unaSeg)
		if s.n == 0 {
			s.una = s.nxt // the last segment may be short
		}
		advanced = true
		s.backoff = 0
	}

	// Selective acknowledgements: only ranges not reported by the previous
	// ACK need walking, which keeps SACK processing O(new information).
	for _, b := range blocks {
		s.sackRange(now, b, &rs, &acked)
	}
	s.nPrevSACK = copy(s.prevSACK[:], blocks)

	if s.sacked > 0 {
		s.detectLoss()
	}
	if advanced && s.phase == recovery && s.una < s.recoveryPoint && s.n > 0 {
		// RFC 6582 §3.2 step 5, the partial ACK: the first unacknowledged
		// segment is lost too. Without it, a hole with fewer than DupThresh
		// SACKed segments above it (the tail of a window) waits for the
		// retransmission timer; ns-3 does the same, Linux gets there by
		// RACK's time order.
		if g := s.seg(s.unaSeg); !g.sacked && !g.lost && !g.retrans {
			g.lost = true
			s.lost += g.len
			s.stats.MarkedLost++
			s.retxHint = min(s.retxHint, s.unaSeg)
			s.lostFront = max(s.lostFront, s.unaSeg+1)
		}
	}
	if s.retransOut > 0 && s.rackXmit > 0 {
		s.detectLostRetransmissions()
	}

	if rs.rtt == 0 && advanced && echo > 0 {
		// Every newly acknowledged segment was retransmitted: Karn's rule
		// gives no sample, but the timestamp echo does (RFC 7323 §4.1;
		// Linux tcp_rtt_tsopt_us). Without it, a spurious timeout on a
		// long-RTT path would repeat forever.
		rs.rtt = now.Sub(echo)
	}
	if ackDelay > 0 && rs.rtt > ackDelay {
		// A timer-driven ACK held the newest segment: remove the hold
		// time, never below a plausible path RTT (QUIC's rule, RFC 9002
		// §5.3, uses the minimum RTT as the floor).
		rs.rtt = max(rs.rtt-ackDelay, min(rs.rtt, s.rtt.Min()))
	}
	if rs.rtt > 0 {
		s.rtt.Update(rs.rtt)
		if s.OnRTT != nil {
			s.OnRTT(now, rs.rtt)
		}
	}
	if s.appLimited != 0 && s.delivered > s.appLimited {
		s.appLimited = 0
	}

	newlyLost := s.stats.MarkedLost - priorLost
	switch {
	case s.phase != open && s.una >= s.recoveryPoint:
		if s.phase == recovery {
			s.cc.OnRecoveryEnd(now)
		}
		s.phase = open
	}
	if s.phase == open && newlyLost > 0 {
		// RFC 6675 §5 step (4.1)-(4.2) / RFC 6582: one congestion response per
		// window of data.
		s.phase = recovery
		s.recoveryPoint = s.nxt
		s.stats.FastRecoveries++
		s.prrDelivered, s.prrOut, s.prrRecoverFS = 0, 0, s.segs(priorInFlight)
		s.cc.OnCongestionEvent(now, &cc.LossEvent{PriorInFlight: priorInFlight, LostBytes: units.Bytes(newlyLost) * s.cfg.MSS})
	}
	if s.phase == recovery && s.prr != nil {
		s.prrUpdate(acked)
	}

	if acked > 0 {
		a := &s.ack
		*a = cc.Ack{
			AckedBytes:    acked,
			LostBytes:     units.Bytes(newlyLost) * s.cfg.MSS,
			PriorInFlight: priorInFlight,
			InFlight:      s.InFlight(),
			RTT:           rs.rtt,
			MinRTT:        s.rtt.Min(),
			SRTT:          s.rtt.SRTT(),
			// Only fast recovery reduces the window; after a timeout the
			// controller slow-starts (Linux: CA_Loss is not a cwnd
			// reduction state).
			InRecovery:     s.phase == recovery,
			CwndLimited:    s.cwndLimited,
			TotalDelivered: s.delivered,
		}
		if rs.ok {
			r := &a.Rate
			r.PriorDelivered = rs.priorDelivered
			r.Delivered = s.delivered - rs.priorDelivered
			r.Interval = max(rs.sendElapsed, rs.ackElapsed)
			r.RTT = rs.rtt
			r.IsAppLimited = rs.appLimited
			// draft-cheng §3.3: an interval shorter than the minimum RTT
			// means the sample is unreliable (e.g. ACK compression).
			if r.Interval < s.rtt.Min() {
				r.Interval = 0
			}
			if r.Valid() {
				r.DeliveryRate = units.BandwidthFromDelta(r.Delivered, r.Interval)
			}
		}
		s.cc.OnAck(now, a)
	}

	if s.una >= s.total {
		s.Stop()
		if s.OnDone != nil {
			s.OnDone(now)
		}
		return
	}
	// RFC 6298 §5.2, §5.3.
	if s.n == 0 {
		s.rtoT.Stop()
	} else if advanced {
		s.rtoT.Reset(now.Add(s.currentRTO()))
	}
	if s.OnAck != nil {
		s.OnAck(now, s)
	}
	s.trySend(now)
}

// sackRange marks the segments of block b as SACKed, skipping the parts
// covered by the previous ACK's blocks.
func (s *Sender) sackRange(now clock.Time, b packet.Block, rs *rateSample, acked *units.Bytes) {
	start, end := max(b.Start, s.una), min(b.End, s.nxt)
	if start >= end {
		return
	}
	// Subtract the previous ACK's blocks (each at most once).
	for i := 0; i < s.nPrevSACK; i++ {
		pb := s.prevSACK[i]
		if pb.Start <= start && pb.End >= end {
			return
		}
		if pb.Start <= start && pb.End > start {
			start = pb.End
		} else if pb.End >= end && pb.Start < end {
			end = pb.Start
		}
	}
	mss := int64(s.cfg.MSS)
	for k := start / mss; k < s.nxtSeg() && s.segStart(k) < end; k++ {
		if k < s.unaSeg {
			continue
		}
		// Blocks are segment-aligned (the receiver reports whole
		// segments), so every segment starting in [start, end) is covered.
		g := s.seg(k)
		if g.sacked {
			continue
		}
		g.sacked = true
		s.sacked += g.len
		if g.lost {
			s.lost -= g.len
			g.lost = false
		}
		if g.retrans {
			s.retransOut -= g.len
			g.retrans = false
		}
		s.deliver(now, g, rs)
		*acked += g.len
		if k > s.highSacked {
			s.highSacked = k
		}
	}
}

// detectLoss marks lost every un-SACKed segment with at least DupThresh
// SACKed segments above it (RFC 6675 §4 IsLost, counting full segments).
func (s *Sender) detectLoss() {
	if s.highSacked < s.unaSeg {
		return
	}
	count := 0
	bound := int64(-1)
	for k := s.highSacked; k >= s.unaSeg && k >= s.lostFront; k-- {
		if s.seg(k).sacked {
			count++
			if count == s.cfg.DupThresh {
				bound = k
				break
			}
		}
	}
	if bound < 0 {
		return
	}
	for k := max(s.lostFront, s.unaSeg); k < bound; k++ {
		g := s.seg(k)
		if !g.sacked && !g.lost {
			g.lost = true
			s.lost += g.len
			s.stats.MarkedLost++
			if k < s.retxHint {
				s.retxHint = k
			}
		}
	}
	s.lostFront = max(s.lostFront, bound)
}

// detectLostRetransmissions marks a retransmission lost again once a segment
// sent at least a quarter of the minimum RTT after it has been delivered:
// the time-ordering idea of RACK (RFC 8985 §6.2), restricted to
// retransmissions, which the SACK rule cannot judge.
func (s *Sender) detectLostRetransmissions() {
	reo := s.rtt.Min() / 4
	end := min(s.lostFront, s.nxtSeg())
	for k := s.unaSeg; k < end; k++ {
		g := s.seg(k)
		if g.retrans && g.sentAt.Add(reo) < s.rackXmit {
			g.retrans = false
			s.retransOut -= g.len
			s.stats.MarkedLost++
			if k < s.retxHint {
				s.retxHint = k
			}
		}
	}
}

// onRTO handles the retransmission timer (RFC 6298 §5.4-5.6; RFC 5681 §3.1;
// like Linux's tcp_enter_loss, every un-SACKed outstanding segment is marked
// lost, SACK information is kept).
func (s *Sender) onRTO(now clock.Time) {
	if s.done {
		return
	}
	if !s.established {
		// RFC 6298 §5.5 applies to the SYN as to data.
		s.synRetries++
		s.stats.RTOs++
		if s.currentRTO() < s.cfg.MaxRTO {
			s.backoff++
		}
		s.sendSyn(now)
		return
	}
	if s.n == 0 {
		return
	}
	s.stats.RTOs++
	if s.currentRTO() < s.cfg.MaxRTO {
		s.backoff++
	}
	for k := s.unaSeg; k < s.nxtSeg(); k++ {
		g := s.seg(k)
		if g.sacked {
			continue
		}
		if g.retrans {
			g.retrans = false
			s.retransOut -= g.len
		}
		if !g.lost {
			g.lost = true
			s.lost += g.len
			s.stats.MarkedLost++
		}
	}
	s.retxHint = s.unaSeg
	s.lostFront = s.nxtSeg()
	s.phase = lossPhase
	s.recoveryPoint = s.nxt
	s.cc.OnRetransmissionTimeout(now)
	s.nextSend = now // the pacer must not hold back the retransmission
	s.rtoT.Reset(now.Add(s.currentRTO()))
	s.trySend(now)
}
