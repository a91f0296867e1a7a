// Package network builds a simulation from a scenario: a dumbbell whose
// senders share one bottleneck link towards their receivers, with a
// per-flow delay line in each direction (the bottleneck's propagation delay
// plus the flow's extra delay), an uncongested reverse path for ACKs, the
// link schedule, background traffic and the measurement hooks.
//
// A data packet's path: sender -> bottleneck queue -> serialiser -> loss
// model -> forward delay line -> (last-hop loss) -> receiver. An ACK's path:
// receiver -> reverse delay line -> sender.
package network

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/rng"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/hugepage"
	"github.com/cclab/cclab/internal/prefetch"
	"github.com/cclab/cclab/netsim/link"
	"github.com/cclab/cclab/netsim/loss"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/netsim/queue"
	"github.com/cclab/cclab/netsim/trace"
	"github.com/cclab/cclab/transport/tcp"
)

// DefaultSACKTimeout is the acknowledgement timer of the Mockets-style
// protocol. Mockets exposes it as the "Selective Acknowledgment
// Transmission Timeout" without a published default in the MARLIN paper;
// 20 ms keeps its ACK rate close to TCP's on the paper's links while still
// aggregating acknowledgements.
const DefaultSACKTimeout = 20 * time.Millisecond

// Network is one built simulation.
type Network struct {
	// Sched is the simulation's event queue and clock.
	Sched *sim.Scheduler
	// Pool recycles packets.
	Pool *packet.Pool
	// Bottleneck is the shared link.
	Bottleneck *link.Link
	// Flows holds every transport flow: the scenario's measured flows
	// first, then background TCP flows.
	Flows []*Flow
	// Sources holds the background UDP sources.
	Sources []*Source
	// Segments are the link schedule's periods, for RTI.
	Segments []Segment
	// Series holds time series when sampling is on.
	Series *Series

	spawners []*spawner
	scn      *scenario.Scenario
	rnd      rng.Source
	end      clock.Time
	pending  int // measured finite flows not yet complete
	bulk     int // measured bulk flows
	segIdx   int
	trRates  []units.Bandwidth // averaged trace mode
	trWindow time.Duration
	trIdx    int
	trTimer  *sim.Timer
	bgScale  float64
	// wheelPhase is the kernel's jiffy counter at time zero, as a time,
	// shared by every flow on a timer wheel (transport.kernel_phase).
	wheelPhase time.Duration
	// serializeAcks: ACKs take their transmission time on the way back
	// (scenario bottleneck.serialize_acks).
	serializeAcks bool
	// ackNoise is set when the ACK path adds either delay below.
	ackNoise bool
	// ackJitter is the ACK path's timing noise (scenario
	// bottleneck.ack_jitter), drawn from jitterRnd; ackLast holds each
	// flow's latest ACK arrival, which a later ACK may not precede.
	ackJitter time.Duration
	jitterRnd *rand.Rand
	ackLast   []clock.Time
	// ackReadDelay is the further delay of an ACK of in-order data
	// (scenario bottleneck.ack_read_delay), for the share ackReadShare of
	// them drawn from readRnd (nil when all wait); ackSACKed holds
	// whether each flow's latest ACK carried SACK blocks, so that the ACK
	// filling the hole leaves at once.
	ackReadDelay time.Duration
	ackReadShare float64
	readRnd      *rand.Rand
	ackSACKed    []bool
	lines        map[time.Duration]lines // shared delay lines by extra delay
	lineList     []lines                 // the same, in creation order
	// prefetching: the lines and the bottleneck prefetch per-flow state
	// (many flows).
	prefetching bool
	// blocks are the scenario's flows' blocks while Build makes them.
	blocks []flowBlock
	// starts are the scenario's flows' starts not yet scheduled, in the
	// order they run: only the next one is in the event queue (see
	// Scheduler.AtSeq). deferStarts: NewFlow adds to it (while Build makes
	// the scenario's flows).
	starts      []pendingStart
	deferStarts bool
	// scratch is where every sender builds its controller's per-ACK
	// arguments: one copy, always cached, instead of two lines per flow.
	scratch tcp.Scratch
	// Capture, if set, observes every packet at the bottleneck.
	Capture link.Observer
}

// Segment is one period of the link schedule.
type Segment struct {
	// Start is when the period begins.
	Start clock.Time
	// BaseRTT is the smallest possible RTT of a flow without extra delay:
	// twice the propagation delay plus one full data packet's
	// serialisation (the RTI's nominal RTT, before each flow's extra delay).
	BaseRTT time.Duration
	// Rate is the bottleneck rate during the period (0 for traces).
	Rate units.Bandwidth
	// Loss is the bottleneck's loss probability during the period.
	Loss float64
}

// Flow is one transport flow and its measurements.
//
// The fields every packet reads come first, grouped by cache line (a Flow
// is 320-byte aligned by the allocator): the forward path's in the first
// line, the sender's, routing and reverse path's in the second, the RTT
// histogram in the third. A many-flow run visits flows in random order, so
// each line a packet touches is a likely cache miss.
type Flow struct {
	// Receiver and Sender are the endpoints.
	Receiver *tcp.Receiver
	lastHop  loss.Model
	moreHops []loss.Model // lossy hops after lastHop (scenario loss_hops)
	// Coding is the flow's TCP/NC layer, nil for plain TCP.
	Coding *Coding
	// ExtraDelay is the flow's one-way extra delay.
	ExtraDelay time.Duration

	Sender   *tcp.Sender
	net      *Network
	fwd, rev *link.DelayLine
	// BottleneckBytes counts the flow's bytes the bottleneck transmitted.
	BottleneckBytes units.Bytes
	// SegMaxRTT is the largest RTT sample in each schedule segment.
	SegMaxRTT []time.Duration

	// RTT collects every RTT sample.
	RTT metrics.Hist

	// Index is the flow's number in packets.
	Index int32
	// Name is the flow's name ("transfer", or "web-3" for replicas).
	Name string
	// Group is the scenario entry it came from.
	Group string
	// Background marks flows from the background list.
	Background bool
	// CC is the controller's description.
	CC scenario.CC
	// Bytes is the transfer size (0 for bulk).
	Bytes units.Bytes
	// Start and Stop bound the flow's activity (Stop = clock.Never if it
	// runs to the end).
	Start, Stop clock.Time
	// Drops counts the flow's packets the bottleneck queue dropped,
	// Losses those its loss model erased, LastHopLosses those lost after
	// the bottleneck.
	Drops, Losses, LastHopLosses int64
}

// setSegments sizes SegMaxRTT for k schedule segments, in the space its
// flowBlock keeps for it when that is enough (one segment: most runs).
func (f *Flow) setSegments(k int) {
	if k <= cap(f.SegMaxRTT) {
		f.SegMaxRTT = f.SegMaxRTT[:k]
		return
	}
	f.SegMaxRTT = make([]time.Duration, k)
}

// flowBlock is one flow's per-packet state in one allocation: the Flow,
// its sender and receiver, their timers and the RTT histogram's buckets. A many-flow run handles each
// packet or ACK of a random flow, whose state has left the caches and the
// TLB; as separate objects (each in its own size class's spans) one ACK's
// state lay on five or six pages, each a page-table walk, and in one block
// it lies on one or two. The ACK path's parts (the Flow's first lines, the
// sender, its timers) come first, the receiver's after them, starting on a
// cache line as the prefetched line counts assume.
type flowBlock struct {
	flowBlockHead
	_ [blockRcvAt - unsafe.Sizeof(flowBlockHead{})]byte
	flowBlockTail
	// Blocks in an array (Network.blocks) start on cache lines too.
	_ [blockSize - blockRcvAt - unsafe.Sizeof(flowBlockTail{})]byte
}

// flowBlockHead is the ACK path's part of a flowBlock.
type flowBlockHead struct {
	flow Flow
	snd  tcp.Sender
	// segMax backs the flow's SegMaxRTT (read on every ACK) when the
	// schedule has one segment.
	segMax [1]time.Duration
	// rttCounts holds the RTT histogram's buckets (one touched per ACK)
	// while they fit: a span of 100 buckets, RTTs up to 2.7 times the
	// first sample, which covers most flows' (metrics.Hist.Reserve).
	rttCounts [104]uint16
	// The timers come last, the first on a cache line: a 48-byte timer
	// across two lines costs two misses per re-arm where one line costs
	// one, and the sender prefetches only a timer's first line.
	sndT [4]sim.Timer // retransmission, pacing, RACK, loss probe
}

// flowBlockTail is the data path's part of a flowBlock.
type flowBlockTail struct {
	rcv  tcp.Receiver
	_    [(64 - unsafe.Sizeof(tcp.Receiver{})%64) % 64]byte // rcvT on a line of its own
	rcvT [1]sim.Timer                                       // delayed ACK
}

// The receiver starts on a cache line, and a block is whole lines.
const (
	blockRcvAt = (unsafe.Sizeof(flowBlockHead{}) + 63) &^ 63
	blockSize  = (blockRcvAt + unsafe.Sizeof(flowBlockTail{}) + 63) &^ 63
)

// hugeBlocks is the size from which the flows' block array asks for
// transparent huge pages (internal/hugepage). With thousands of flows, each
// packet and ACK goes to a random flow's block, and with 4 KB pages each
// is a TLB miss and a page-table walk; a few 2 MB pages cover them all.
// Below it the array is under two huge pages, too little to gain. The
// advice outlives the array: memory the heap reuses there later may get
// huge pages too.
const hugeBlocks = 4 << 20

// newBlocks returns an array of k flow blocks, on huge pages if large.
func newBlocks(k int) []flowBlock {
	if k <= 0 {
		return nil
	}
	b := make([]flowBlock, k)
	// A large allocation from memory the process has not used yet (the
	// usual case: Build runs early) is not cleared, so its pages are not
	// faulted in and the advice takes effect as NewFlow first writes them.
	if size := uintptr(k) * unsafe.Sizeof(flowBlock{}); size >= hugeBlocks {
		hugepage.Advise(unsafe.Pointer(&b[0]), size)
	}
	return b
}

// blockTimers serves a constructor's NewTimer calls from a flowBlock's
// timers, then, should it ask for more, from the scheduler's heap. It is
// used only while the constructor runs.
type blockTimers struct {
	s *sim.Scheduler
	t []sim.Timer
}

func (b *blockTimers) Now() clock.Time { return b.s.Now() }

func (b *blockTimers) NewTimer(f func(now clock.Time)) clock.Timer {
	if len(b.t) == 0 {
		return b.s.Timer(f)
	}
	t := &b.t[0]
	b.t = b.t[1:]
	b.s.InitTimer(t, f)
	return t
}

// Done reports whether a finite flow has delivered all its bytes.
func (f *Flow) Done() bool { return f.Receiver.DoneAt != clock.Never }

// Build constructs the network for a validated scenario. It loads trace
// files; errors name the file.
func Build(s *scenario.Scenario) (*Network, error) {
	if err := s.CheckBudget(); err != nil {
		return nil, err
	}
	// profile: linux fills in Linux's choices on a copy; other profiles
	// build s itself.
	s = s.WithProfile()
	n := &Network{
		Sched:   sim.New(),
		Pool:    &packet.Pool{},
		scn:     s,
		rnd:     rng.New(s.Seed),
		end:     clock.Time(s.Duration.V),
		bgScale: 1,
	}
	n.wheelPhase = s.Transport.KernelPhase.V
	if !s.Transport.KernelPhase.IsSet() {
		n.wheelPhase = time.Duration(n.rnd.Stream("kernel/jiffies").Int64N(int64(scenario.KernelPhaseMax)))
	}
	if err := n.buildBottleneck(); err != nil {
		return nil, err
	}
	total := 0
	for i := range s.Flows {
		total += s.Flows[i].Count
	}
	n.blocks = newBlocks(total)
	n.deferStarts = true
	for i := range s.Flows {
		if err := n.addFlows(&s.Flows[i]); err != nil {
			return nil, err
		}
	}
	n.blocks = nil
	n.deferStarts = false
	n.scheduleStarts()
	if err := n.addBackground(); err != nil {
		return nil, err
	}
	if len(n.Flows) >= hostPrefetchFrom() {
		n.enablePrefetching()
	}
	n.buildSegments()
	for _, f := range n.Flows {
		f.setSegments(len(n.Segments))
	}
	n.scheduleChanges()
	if s.Sample.V > 0 {
		n.startSampling(s.Sample.V)
	}
	return n, nil
}

// Scenario returns the scenario the network was built from.
func (n *Network) Scenario() *scenario.Scenario { return n.scn }

// End returns the scheduled end of the run.
func (n *Network) End() clock.Time { return n.end }

func (n *Network) buildQueue(q scenario.Queue, l *link.Link) (queue.Queue, error) {
	drop := func(p *packet.Packet, now clock.Time) {}
	if l != nil {
		drop = l.DropFunc()
	}
	return NewQueue(q, n.scn.Bottleneck.Rate.V, n.rnd.Stream("bottleneck/red"), drop)
}

// NewQueue builds the queue discipline a validated scenario's queue
// describes, for a bottleneck of the given rate (0: trace-driven), with
// RED drawing from red and CoDel handing the packets it drops at dequeue
// to drop. The emulator builds its bottleneck's queue with it too.
func NewQueue(q scenario.Queue, rate units.Bandwidth, red *rand.Rand, drop func(*packet.Packet, clock.Time)) (queue.Queue, error) {
	lim := queueLimit(q.Limit)
	switch q.Discipline {
	case "red":
		var pt time.Duration
		if rate > 0 {
			pt = rate.TxTime(1500)
		}
		return queue.NewRED(queue.REDConfig{Limit: lim, MinTh: q.MinTh, MaxTh: q.MaxTh, MaxP: q.MaxP, Wq: q.Wq, PacketTime: pt, ECN: q.ECN}, red)
	case "codel":
		return queue.NewCoDel(queue.CoDelConfig{Limit: lim, Target: q.Target.V, Interval: q.Interval.V, ECN: q.ECN}, drop)
	default:
		d, err := queue.NewDropTail(lim)
		if err == nil && q.MarkThreshold.IsSet() {
			err = d.SetMarkThreshold(queueLimit(q.MarkThreshold))
		}
		return d, err
	}
}

// queueLimit is a scenario's packet count or size as a queue's limit.
func queueLimit(s scenario.Size) queue.Limit {
	return queue.Limit{Packets: s.Packets, Bytes: s.V}
}

// buildLoss returns the model for a loss spec, drawing from the named
// stream.
func (n *Network) buildLoss(l scenario.Loss, stream string) (loss.Model, error) {
	switch l.Model {
	case "bernoulli":
		if l.P == 0 {
			return loss.None{}, nil
		}
		return loss.NewBernoulli(l.P, n.rnd.Stream(stream))
	case "gilbert-elliott":
		bad := 1.0
		if l.LossBad != nil {
			bad = *l.LossBad
		}
		return loss.NewGilbertElliott(loss.GEConfig{P: l.P, R: l.R, LossGood: l.LossGood, LossBad: bad}, n.rnd.Stream(stream))
	}
	return loss.None{}, nil
}

func (n *Network) buildBottleneck() error {
	b := n.scn.Bottleneck
	cfg := link.Config{Rate: b.Rate.V, Delay: b.Delay.V}
	if b.Trace != "" {
		// Parsed traces, pieces and window rates are cached process-wide:
		// sweeps and tuners build the same link thousands of times.
		path := n.scn.Path(b.Trace)
		tr, err := trace.Shared.Piece(path, b.TraceStart.V, b.TraceLength.V)
		if err != nil {
			return fmt.Errorf("bottleneck.trace: %w", err)
		}
		offset := b.TraceStart.V
		if b.TraceLength.V > 0 {
			offset = 0 // the slice already starts there
		}
		if b.TraceMode == "average" {
			rates, err := trace.Shared.WindowRates(path, b.TraceStart.V, b.TraceLength.V, b.TraceWindow.V)
			if err != nil {
				return fmt.Errorf("bottleneck.trace_window: %w", err)
			}
			n.trRates, n.trWindow = rates, b.TraceWindow.V
			n.trIdx = int(offset/b.TraceWindow.V) % len(rates)
			cfg.Rate = rates[n.trIdx]
			if cfg.Rate == 0 {
				cfg.Rate = 1 // the link must start with a rate; replaced at once
			}
		} else {
			cfg.Trace = tr
			cfg.TraceOffset = offset
		}
	}
	lm, err := n.buildLoss(b.Loss, "bottleneck/loss")
	if err != nil {
		return err
	}
	cfg.Loss = lm
	// The queue needs the link for CoDel's drop callback and the link
	// needs a queue: build with a placeholder, then install the real one.
	ph, _ := queue.NewDropTail(queue.Limit{Packets: 1})
	cfg.Queue = ph
	l, err := link.New(n.Sched, n.Pool, cfg, (*observer)(n))
	if err != nil {
		return err
	}
	q, err := n.buildQueue(b.Queue, l)
	if err != nil {
		return fmt.Errorf("bottleneck.queue: %w", err)
	}
	l.SetQueue(0, q)
	l.Output = n.route
	n.Bottleneck = l
	n.serializeAcks = b.SerializeAcks
	if b.AckJitter.V > 0 {
		n.ackJitter = b.AckJitter.V
		n.jitterRnd = n.rnd.Stream("bottleneck/ack_jitter")
	}
	n.ackReadDelay = b.AckReadDelay.V
	if v := b.AckReadShare; v != nil && *v < 1 && n.ackReadDelay > 0 {
		n.ackReadShare = *v
		n.readRnd = n.rnd.Stream("bottleneck/ack_read_delay")
	}
	n.ackNoise = n.ackJitter > 0 || n.ackReadDelay > 0
	if n.trRates != nil {
		n.trTimer = n.Sched.Timer(n.nextTraceWindow)
		l.SetRate(0, n.trRates[n.trIdx])
		n.trTimer.Reset(clock.Time(n.trWindow))
	}
	return nil
}

// nextTraceWindow applies the next averaged trace window's rate.
func (n *Network) nextTraceWindow(now clock.Time) {
	n.trIdx = (n.trIdx + 1) % len(n.trRates)
	n.Bottleneck.SetRate(now, n.trRates[n.trIdx])
	n.trTimer.Reset(now.Add(n.trWindow))
}

// packetTimersSet reports whether the scenario or the flow chose the
// retransmission style explicitly.
func packetTimersSet(def scenario.Transport, over *scenario.Transport) bool {
	return def.PacketTimers != nil || (over != nil && over.PacketTimers != nil)
}

// ApplyLossRecovery sets the loss-recovery choices a sender makes alone
// (tlp, tlp_timer, rto, frto, rack, lost_retransmissions, srtt_sample, prr,
// rack_timer, recovery_start), which ACKs grow its window and when it
// counts as used (window_growth, cwnd_limited), and how it paces
// (pacing), that t sets on
// c; what t leaves unset keeps c's value. The simulator's flows and the
// emulator's cclab-stack flows (emu/udpstack) read them through it.
func ApplyLossRecovery(c *tcp.Config, t *scenario.Transport) {
	if t.TLP != nil {
		c.NoTLP = !*t.TLP
	}
	if t.RTO != "" {
		// Both ways: a flow's rto: linux undoes a scenario-wide rfc6298.
		c.RFC6298RTO = t.RTO == "rfc6298"
	}
	if t.FRTO != nil {
		c.NoFRTO = !*t.FRTO
	}
	if t.RACK != nil {
		c.NoRACK = !*t.RACK
	}
	if t.LostRetransmissions != "" {
		c.RACKRetransmissions = t.LostRetransmissions == "rack"
	}
	if t.SRTTSample != "" {
		c.OldestRTTSample = t.SRTTSample == "oldest"
	}
	if t.PRR != "" {
		c.LinuxPRR = t.PRR == "linux"
	}
	if t.RACKTimer != "" {
		c.LinuxRACKTimer = t.RACKTimer == "linux"
	}
	if t.Pacing != "" {
		c.LinuxPacing = t.Pacing == "linux"
	}
	if t.RecoveryStart != "" {
		c.LinuxRecoveryStart = t.RecoveryStart == "linux"
	}
	if t.WindowGrowth != "" {
		c.LinuxWindowGrowth = t.WindowGrowth == "linux"
	}
	if t.CwndLimited != "" {
		c.LinuxCwndLimited = t.CwndLimited == "linux"
	}
	if t.TLPTimer != "" {
		c.LinuxTLPTimer = t.TLPTimer == "linux"
	}
}

// sackCompression is a flow's transport.sack_compression (scenario.TransportSetting).
func sackCompression(def scenario.Transport, over *scenario.Transport) bool {
	return scenario.TransportSetting(def, over, func(t *scenario.Transport) *bool { return t.SACKCompression })
}

// kernelHZ is a flow's transport.kernel_hz (scenario.TransportSetting; 0: exact timers).
func kernelHZ(def scenario.Transport, over *scenario.Transport) int {
	return scenario.TransportSetting(def, over, func(t *scenario.Transport) *int { return t.KernelHZ })
}

func transportConfig(def scenario.Transport, over *scenario.Transport) tcp.Config {
	var c tcp.Config
	apply := func(t scenario.Transport) {
		if t.MSS.IsSet() {
			c.MSS = t.MSS.V
		}
		if t.Header.IsSet() {
			c.Header = t.Header.V
		}
		if t.SynOptions.IsSet() {
			c.SynOptions = t.SynOptions.V
		}
		if t.DelayedAck != nil {
			c.NoDelayedAck = !*t.DelayedAck
		}
		if t.DelAckTimeout.IsSet() {
			c.DelAckTimeout = t.DelAckTimeout.V
		}
		if t.MinRTO.IsSet() {
			c.MinRTO = t.MinRTO.V
		}
		if t.InitialRTO.IsSet() {
			c.InitialRTO = t.InitialRTO.V
		}
		if t.MaxRTO.IsSet() {
			c.MaxRTO = t.MaxRTO.V
		}
		if t.TimeoutMin.IsSet() {
			c.TimeoutMin = t.TimeoutMin.V
		}
		if t.DupThresh > 0 {
			c.DupThresh = int32(t.DupThresh) // at most maxDupThresh (validated)
		}
		if t.RecvWindow.IsSet() {
			c.RecvWindow = t.RecvWindow.V
		}
		// A flow's own pending_queue or send_buffer replaces whichever
		// of the two the scenario set.
		if t.PendingQueue.IsSet() {
			c.PendingQueue, c.SendBufferLinux = t.PendingQueue.V, false
		}
		if t.SendBuffer != "" {
			c.SendBufferLinux = t.SendBuffer == "linux"
			if c.SendBufferLinux {
				c.PendingQueue = 0
			}
		}
		if t.SACKTimeout.IsSet() {
			c.AckInterval = t.SACKTimeout.V
		}
		if t.SACK != nil {
			c.NoSACK = !*t.SACK
		}
		if t.QuickAck != nil {
			c.NoQuickAck = !*t.QuickAck
		}
		if t.AckFirst != nil {
			c.AckFirst = *t.AckFirst
		}
		if t.HandshakeAck != nil {
			c.HandshakeAck = *t.HandshakeAck
		}
		if t.ReceiveWindow != "" {
			c.LinuxReceiveWindow = t.ReceiveWindow == "linux"
		}
		if t.ECN != nil {
			c.ECN = tcp.ECNOff
			if *t.ECN {
				c.ECN = tcp.ECNRFC3168
			}
		}
		ApplyLossRecovery(&c, &t)
		if t.PacketTimers != nil {
			c.PacketTimers = *t.PacketTimers
		}
	}
	apply(def)
	if over != nil {
		apply(*over)
	}
	return c.WithDefaults()
}

// FlowSpec is what NewFlow needs; the scenario's flows and background TCP
// sources both reduce to it.
type FlowSpec struct {
	Name, Group string
	Background  bool
	CC          scenario.CC
	Bytes       units.Bytes
	Start, Stop time.Duration
	ExtraDelay  time.Duration
	Loss        *scenario.Loss
	LossHops    int
	Transport   tcp.Config
	// KernelHZ puts the flow's TCP timers on Linux's timer wheel at that
	// many ticks a second (transport.kernel_hz; 0: exact).
	KernelHZ int
	// SACKCompression makes the flow's receiver compress SACKs as Linux
	// does (transport.sack_compression, tcp.Receiver.UseSACKCompression).
	SACKCompression bool
	// Nagle leaves Nagle's algorithm on in the flow's sender
	// (transport.nagle, tcp.Sender.UseNagle).
	Nagle  bool
	Coding *scenario.Coding
}

func (n *Network) addFlows(sf *scenario.Flow) error {
	var spread *rand.Rand
	if sf.StartSpread.V > 0 {
		spread = n.rnd.Stream("flows/" + sf.Name + "/start")
	}
	for k := range sf.Count {
		name := sf.Name
		if sf.Count > 1 {
			name = fmt.Sprintf("%s-%d", sf.Name, k+1)
		}
		start := sf.Start.V
		if spread != nil {
			start += time.Duration(spread.Int64N(int64(sf.StartSpread.V) + 1))
		}
		stop := sf.Stop.V
		tc := transportConfig(n.scn.Transport, sf.Transport)
		if sf.Protocol == "mockets" {
			if tc.AckInterval == 0 {
				tc.AckInterval = DefaultSACKTimeout
			}
			if !packetTimersSet(n.scn.Transport, sf.Transport) {
				tc.PacketTimers = true
			}
		}
		f, err := n.NewFlow(FlowSpec{
			Name: name, Group: sf.Name, CC: sf.CC, Bytes: sf.Bytes.V,
			Start: start, Stop: stop, ExtraDelay: sf.ExtraDelay.V, Loss: sf.Loss, LossHops: sf.LossHops,
			Transport: tc, KernelHZ: kernelHZ(n.scn.Transport, sf.Transport), Coding: sf.Coding,
			SACKCompression: sackCompression(n.scn.Transport, sf.Transport),
			Nagle:           n.scn.FlowNagle(sf),
		})
		if err != nil {
			return err
		}
		if f.Bytes > 0 {
			n.pending++
		} else {
			n.bulk++
		}
	}
	return nil
}

// NewFlow adds a TCP flow that starts at spec.Start.
func (n *Network) NewFlow(spec FlowSpec) (*Flow, error) {
	tc := spec.Transport.WithDefaults()
	tc.Bytes = spec.Bytes
	if err := tc.Validate(); err != nil {
		return nil, fmt.Errorf("flow %s: %w", spec.Name, err)
	}
	alg, err := cc.NewSeeded(spec.CC.Name, tc.MSS, spec.CC.Params, n.rnd.Stream("flow/"+spec.Name+"/cc").Uint64()|1)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", spec.Name, err)
	}
	if _, ok := alg.(cc.ECNObserver); ok {
		// A controller that needs ECN has it on both ends, with its
		// receiver's exact echo (as Linux's TCP_CONG_NEEDS_ECN modules).
		tc.ECN = tcp.ECNDCTCP
	}
	var blk *flowBlock
	if len(n.blocks) > 0 {
		blk, n.blocks = &n.blocks[0], n.blocks[1:]
	} else {
		blk = new(flowBlock) // background flows, and flows added after Build
	}
	f := &blk.flow
	*f = Flow{
		Index: int32(len(n.Flows)), Name: spec.Name, Group: spec.Group, Background: spec.Background,
		CC: spec.CC, Bytes: spec.Bytes, Start: clock.Time(spec.Start), Stop: clock.Never,
		ExtraDelay: spec.ExtraDelay, net: n, lastHop: loss.None{},
		SegMaxRTT: blk.segMax[:0],
	}
	if spec.Stop > 0 {
		f.Stop = clock.Time(spec.Stop)
	}
	if spec.Loss != nil {
		if f.lastHop, err = n.buildLoss(*spec.Loss, "flow/"+spec.Name+"/lasthop"); err != nil {
			return nil, fmt.Errorf("flow %s: %w", spec.Name, err)
		}
		// Further lossy hops in series, each with its own random stream.
		for h := 2; h <= spec.LossHops; h++ {
			m, err := n.buildLoss(*spec.Loss, fmt.Sprintf("flow/%s/lasthop/%d", spec.Name, h))
			if err != nil {
				return nil, fmt.Errorf("flow %s: %w", spec.Name, err)
			}
			f.moreHops = append(f.moreHops, m)
		}
	}
	// The timers are created in the order NewReceiver and NewSender
	// create them, so their ids, and with them the run, are unchanged.
	f.Receiver = &blk.rcv
	tcp.InitReceiver(f.Receiver, tc, f.Index, &blockTimers{n.Sched, blk.rcvT[:]}, n.Pool, (*reversePath)(f))
	var out packet.Receiver = n.Bottleneck
	if spec.Coding != nil {
		if err := n.addCoding(f, spec.Coding, tc.MSS, tc.Header); err != nil {
			return nil, err
		}
		out = (*encoderSide)(f.Coding)
	}
	f.Sender = &blk.snd
	tcp.InitSender(f.Sender, tc, f.Index, &blockTimers{n.Sched, blk.sndT[:]}, n.Pool, out, alg)
	f.Sender.UseKernelTimers(spec.KernelHZ, n.wheelPhase, n.Sched)
	f.Receiver.UseKernelTimers(spec.KernelHZ, n.wheelPhase, n.Sched)
	if spec.Nagle {
		f.Sender.UseNagle()
	}
	if spec.SACKCompression {
		f.Receiver.UseSACKCompression(n.Sched)
	}
	f.RTT.Reserve(blk.rttCounts[:])
	f.fwd, f.rev = n.delayLines(f.ExtraDelay)
	f.Sender.OnRTT = f.onRTT
	f.Sender.ShareScratch(&n.scratch)
	if !spec.Background {
		f.Receiver.OnDone = func(now clock.Time) {
			n.pending--
			if n.pending == 0 && n.bulk == 0 {
				n.Sched.Stop()
			}
		}
	}
	n.Flows = append(n.Flows, f)
	if n.deferStarts {
		// The place among same-instant events that At would give it now.
		n.starts = append(n.starts, pendingStart{f.Start, n.Sched.Seq(), f})
	} else {
		n.Sched.At(f.Start, startFlow{}, f)
	}
	if f.Stop != clock.Never {
		n.Sched.At(f.Stop, stopFlow{}, f)
	}
	return f, nil
}

// lines are the delay lines shared by the flows with one extra delay.
type lines struct{ fwd, rev *link.DelayLine }

// enablePrefetching makes the bottleneck and the delay lines prefetch the
// per-flow state of their next packets.
func (n *Network) enablePrefetching() {
	n.prefetching = true
	n.Bottleneck.SetPrefetcher((*observer)(n))
	for _, l := range n.lineList {
		l.setPrefetchers(n)
	}
}

func (l lines) setPrefetchers(n *Network) {
	l.fwd.SetPrefetcher((*forwardDispatch)(n))
	l.rev.SetPrefetcher((*reverseDispatch)(n))
}

// prefetchFlows is the number of flows from which the delay lines and the
// bottleneck prefetch the per-flow state of their next packets where the
// processor's L2 cache is unknown or at most about 700 KB: about where that
// state (a few KB a flow, with the packets in flight) outgrows a core's L2
// cache. Below it, the state stays cached and prefetching it is only
// overhead. Measured on a 1 MB-L2 machine (issue 19's workload, CPU time
// without prefetching over with it): 0.85 at 50 flows, 0.91 at 100, 0.97
// at 300, 1.14 at 1000; on a 2 MB-L2 one, 1.02 at 1000 and 1.39 at 10,000
// (docs/performance.md, round 23).
const prefetchFlows = 300

// flowFootprint is what a flow of issue 19's workloads keeps in the caches
// between its events (its block's lines, its packets and scoreboard
// entries), in bytes: the L2 holds about L2/flowFootprint flows before
// prefetching pays. On a 2 MiB-L2 host prefetching cost 16% at 300 flows,
// 10% at 500 and 6% at 700 and saved 1% at 1000 and 10% at 2000
// (docs/performance.md, round 41): it breaks even at about 900 flows, 2.4 KB
// a flow.
const flowFootprint = 2400

// prefetchFrom returns the number of flows from which a run prefetches on a
// processor with l2 bytes of L2 cache per core (0: unknown).
func prefetchFrom(l2 int) int {
	return max(prefetchFlows, l2/flowFootprint)
}

// hostPrefetchFrom is prefetchFrom for this machine's L2, read once.
var hostPrefetchFrom = sync.OnceValue(func() int { return prefetchFrom(prefetch.L2Bytes()) })

// delayLines returns the delay lines of flows with extra delay d. Flows with
// the same extra delay share them: packets pushed with a constant delay come
// out in push order, so one FIFO with one pending event serves them all,
// which keeps the event queue's size and the delay lines' memory
// independent of the number of flows.
func (n *Network) delayLines(d time.Duration) (fwd, rev *link.DelayLine) {
	l, ok := n.lines[d]
	if !ok {
		if n.lines == nil {
			n.lines = map[time.Duration]lines{}
		}
		l = lines{link.NewDelayLine(n.Sched, (*forwardDispatch)(n)), link.NewDelayLine(n.Sched, (*reverseDispatch)(n))}
		n.lines[d] = l
		n.lineList = append(n.lineList, l)
		if n.prefetching {
			l.setPrefetchers(n)
		}
	}
	return l.fwd, l.rev
}

// forwardDispatch hands a packet leaving a shared forward delay line to its
// flow.
type forwardDispatch Network

func (d *forwardDispatch) Receive(now clock.Time, p *packet.Packet) {
	(*forwardSink)(d.Flows[p.Flow]).Receive(now, p)
}

// Prefetch implements link.Prefetcher: the flow's forward-path lines three
// packets ahead, its receiver's hot lines two ahead, the receiver's timer
// one ahead.
func (d *forwardDispatch) Prefetch(near, mid, far *packet.Packet) {
	if far != nil {
		prefetch.Lines(unsafe.Pointer(d.Flows[far.Flow]), 2)
	}
	if mid != nil {
		prefetch.Lines(unsafe.Pointer(d.Flows[mid.Flow].Receiver), tcp.ReceiverHotLines)
	}
	d.Flows[near.Flow].Receiver.Prefetch()
}

// reverseDispatch hands an ACK leaving a shared reverse delay line to its
// flow's sender, or to its coding layer.
type reverseDispatch Network

// Prefetch implements link.Prefetcher: the flow's sender-side lines three
// ACKs ahead, its sender's hot lines two ahead, what the sender points to
// (controller, scoreboard, timers) and the flow's RTT histogram one ahead.
func (d *reverseDispatch) Prefetch(near, mid, far *packet.Packet) {
	if far != nil {
		prefetch.Lines(unsafe.Pointer(d.Flows[far.Flow]), 3)
	}
	if mid != nil {
		prefetch.Lines(unsafe.Pointer(d.Flows[mid.Flow].Sender), tcp.SenderHotLines)
	}
	f := d.Flows[near.Flow]
	f.Sender.Prefetch()
	f.RTT.Prefetch()
	if i := d.segIdx; i < len(f.SegMaxRTT) {
		prefetch.Line(unsafe.Pointer(&f.SegMaxRTT[i]))
	}
}

func (d *reverseDispatch) Receive(now clock.Time, p *packet.Packet) {
	f := d.Flows[p.Flow]
	if f.Coding != nil {
		(*ackSide)(f.Coding).Receive(now, p)
		return
	}
	f.Sender.Receive(now, p)
}

// pendingStart is a flow's start and its reserved sequence number.
type pendingStart struct {
	at  clock.Time
	seq uint64
	f   *Flow
}

// scheduleStarts orders the deferred starts and schedules the first.
// Scheduled all at once, N starts spread over the first second would sit
// in the event heap, and every event in that second would sift through
// them (a heap of 1000 entries at N = 1000 instead of three to six); one
// at a time, each with the sequence number At would have drawn, they run
// at the same places in the same order.
func (n *Network) scheduleStarts() {
	slices.SortFunc(n.starts, func(a, b pendingStart) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	if len(n.starts) > 0 {
		n.Sched.AtSeq(n.starts[0].at, n.starts[0].seq, nextStart{}, n)
	}
}

// nextStart starts the next deferred flow and schedules the one after.
type nextStart struct{}

func (nextStart) Handle(now clock.Time, arg any) {
	n := arg.(*Network)
	f := n.starts[0].f
	n.starts = n.starts[1:]
	if len(n.starts) > 0 {
		n.Sched.AtSeq(n.starts[0].at, n.starts[0].seq, nextStart{}, n)
	} else {
		n.starts = nil
	}
	f.Sender.Start(now)
}

type startFlow struct{}

func (startFlow) Handle(now clock.Time, arg any) { arg.(*Flow).Sender.Start(now) }

type stopFlow struct{}

func (stopFlow) Handle(now clock.Time, arg any) { arg.(*Flow).Sender.Stop() }

func (f *Flow) onRTT(now clock.Time, rtt time.Duration) {
	f.RTT.Add(rtt)
	if i := f.net.segIdx; rtt > f.SegMaxRTT[i] {
		f.SegMaxRTT[i] = rtt
	}
}

// loseOnMoreHops reports whether a packet is erased on one of the lossy
// hops after the first (each hop draws only for packets that survived the
// previous ones).
func (f *Flow) loseOnMoreHops() bool {
	for _, m := range f.moreHops {
		if m.Lose() {
			return true
		}
	}
	return false
}

// forwardSink receives a flow's packets at the end of its forward path.
type forwardSink Flow

func (s *forwardSink) Receive(now clock.Time, p *packet.Packet) {
	f := (*Flow)(s)
	// Further hops exist only behind a lossy first one; a lossless path
	// (the usual case) skips the model's call.
	if _, none := f.lastHop.(loss.None); !none && (f.lastHop.Lose() || f.loseOnMoreHops()) {
		f.LastHopLosses++
		f.net.Pool.Put(p)
		return
	}
	if f.Coding != nil {
		(*decoderSide)(f.Coding).Receive(now, p)
		return
	}
	f.Receiver.Receive(now, p)
}

// reversePath carries a flow's ACKs back, uncongested, over the bottleneck's
// current propagation delay plus the flow's extra delay.
type reversePath Flow

func (r *reversePath) Receive(now clock.Time, p *packet.Packet) {
	f := (*Flow)(r)
	if c := f.net.Capture; c != nil {
		c.Sent(now, p)
	}
	d := f.net.Bottleneck.Delay() + f.ExtraDelay
	// A zero rate (a trace in exact mode, or an averaged window without
	// capacity) adds nothing rather than holding the ACK for ever.
	if r := f.net.Bottleneck.Rate(); f.net.serializeAcks && r > 0 {
		d += r.TxTime(p.Size)
	}
	if f.net.ackNoise {
		d = f.net.noisyAck(f.Index, now, d, p)
	}
	f.rev.Push(now, p, d)
}

// noisyAck returns the delay of flow i's ACK p sent at now over a path
// of delay d: d plus a uniform random draw in [0, ackJitter), plus
// ackReadDelay for an ACK of in-order data (a share of them if
// ackReadShare is set), lengthened if need be so that the ACK arrives no
// earlier than the flow's previous one (the delay line keeps the order of
// equal arrival times).
func (n *Network) noisyAck(i int32, now clock.Time, d time.Duration, p *packet.Packet) time.Duration {
	if int(i) >= len(n.ackLast) {
		n.ackLast = append(n.ackLast, make([]clock.Time, int(i)+1-len(n.ackLast))...)
		n.ackSACKed = append(n.ackSACKed, make([]bool, int(i)+1-len(n.ackSACKed))...)
	}
	if n.ackJitter > 0 {
		d += time.Duration(n.jitterRnd.Int64N(int64(n.ackJitter)))
	}
	// A SYN-ACK has no data to wait for a read.
	if n.ackReadDelay > 0 && p.Kind == packet.Ack {
		// After an ACK with SACK blocks, one without fills the hole:
		// Linux sends it at once (tcp_data_queue's ICSK_ACK_NOW).
		sacked := p.NSACK > 0
		if !sacked && !n.ackSACKed[i] && (n.readRnd == nil || n.readRnd.Float64() < n.ackReadShare) {
			d += n.ackReadDelay
		}
		n.ackSACKed[i] = sacked
	}
	at := max(now.Add(d), n.ackLast[i])
	n.ackLast[i] = at
	return at.Sub(now)
}

// route sends a packet leaving the bottleneck onto its flow's forward path.
func (n *Network) route(now clock.Time, p *packet.Packet, delay time.Duration) {
	if p.Kind == packet.Datagram {
		s := n.Sources[p.Flow]
		s.fwd.Push(now, p, delay+s.extraDelay)
		return
	}
	f := n.Flows[p.Flow]
	f.fwd.Push(now, p, delay+f.ExtraDelay)
}

// observer attributes bottleneck events to flows.
type observer Network

// Prefetch implements link.Prefetcher: the lines of the packet's flow that
// Sent and route read when its transmission ends.
func (o *observer) Prefetch(p, _, _ *packet.Packet) {
	if p.Kind != packet.Datagram {
		prefetch.Lines(unsafe.Pointer(o.Flows[p.Flow]), 2)
	}
}

func (o *observer) Dropped(now clock.Time, p *packet.Packet) {
	n := (*Network)(o)
	if p.Kind == packet.Datagram {
		n.Sources[p.Flow].Drops++
	} else {
		n.Flows[p.Flow].Drops++
	}
	if n.Capture != nil {
		n.Capture.Dropped(now, p)
	}
}

func (o *observer) Lost(now clock.Time, p *packet.Packet) {
	n := (*Network)(o)
	if p.Kind == packet.Datagram {
		n.Sources[p.Flow].Losses++
		n.Sources[p.Flow].BottleneckBytes += p.Size
	} else {
		n.Flows[p.Flow].Losses++
		n.Flows[p.Flow].BottleneckBytes += p.Size
	}
	if n.Capture != nil {
		n.Capture.Lost(now, p)
	}
}

func (o *observer) Sent(now clock.Time, p *packet.Packet) {
	n := (*Network)(o)
	if p.Kind == packet.Datagram {
		n.Sources[p.Flow].BottleneckBytes += p.Size
	} else {
		n.Flows[p.Flow].BottleneckBytes += p.Size
	}
	if n.Capture != nil {
		n.Capture.Sent(now, p)
	}
}

// Run executes the simulation to its end: the scenario's duration, or the
// completion of every measured finite flow when there is no measured bulk
// flow.
func (n *Network) Run() {
	n.Sched.RunUntil(n.end)
}

// Now returns the simulation time.
func (n *Network) Now() clock.Time { return n.Sched.Now() }

// InFlight counts packets held by the network (queue, serialiser, delay
// lines) for conservation checks: it must equal Pool.Live().
func (n *Network) InFlight() int {
	c := n.Bottleneck.Queue().Len()
	if n.Bottleneck.Busy() {
		c++
	}
	for _, l := range n.lineList {
		c += l.fwd.Len() + l.rev.Len()
	}
	for _, s := range n.Sources {
		c += s.fwd.Len()
	}
	return c
}
