package tcp

import (
	"math"
	"time"
	"unsafe"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/estimate"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/internal/prefetch"
	"github.com/cclab/cclab/netsim/packet"
)

// The sender is split by concern, as gVisor's netstack splits its TCP
// endpoint: this file sends and orchestrates an ACK's processing;
// scoreboard.go keeps the SACK scoreboard; recovery.go the RFC 6675 loss
// detection, RFC 6582 partial ACKs and PRR; rack.go the time-ordered
// detection of lost retransmissions; ratesample.go the delivery-rate and
// RTT sampling (package estimate holds the estimators); rto.go the
// retransmission timer; sndbuf.go Linux's autotuned send buffer.

// Sender is the sending endpoint of one flow.
//
// Its fields are laid out for the simulator's many-flow runs, where a
// flow's state has left the caches by the time its next ACK arrives: what
// every ACK and send reads or writes in the open state comes first, in
// about the order it is used, up to senderHotBytes (the network prefetches
// those lines ahead of the ACK); loss-recovery state, configuration the
// common path does not read and callbacks used once follow it.
type Sender struct {
	// Hot: read or written by (nearly) every ACK and send.
	pool        *packet.Pool
	flow        int32
	started     bool
	done        bool
	established bool
	phase       phase
	// cwndUse says whether the controller's next ACK sees the window used
	// (cc.Ack.CwndLimited) and how the sender decides it (cwndlimited.go).
	cwndUse   cwndUse
	pacerLate bool // trySend runs from a pacer timer that may have fired late
	tlpRetx   bool // the outstanding tail loss probe was a retransmission (tlp.go)
	// backoff counts RTO doublings; it grows only while the RTO is below
	// MaxRTO, and the RTO before back-off is at least 1 ns (MinRTO > 0,
	// InitialRTO > 0 after defaults; Config.Validate), so it stays below 64.
	backoff   uint8
	nPrevSACK uint8 // blocks in prevSACK, at most packet.MaxSACK
	// F-RTO's per-ACK flags (frto.go): the ACKs after a timeout are
	// being examined; this ACK delivered a never-retransmitted segment.
	frtoActive, frtoOrigAcked bool
	// rackAdvanced is Linux's tp->rack.advanced: a segment delivered
	// since RACK last looked had an unambiguous RTT, so an ACK may mark
	// losses (tcp_rack_mark_lost returns at once otherwise).
	rackAdvanced bool

	una, nxt int64
	total    int64 // transfer end; math.MaxInt64 for bulk
	// Scoreboard (scoreboard.go).
	outBytes   units.Bytes // bytes in [una, nxt)
	sacked     units.Bytes
	lost       units.Bytes
	retransOut units.Bytes
	// Without SACK (recovery.go): the bytes duplicate ACKs stand for.
	renoSacked units.Bytes
	ring       []segment
	// head and n fit in 32 bits (the ring holds the outstanding
	// segments), which leaves room for rackRTT in the hot lines.
	head, n   int32
	unaSeg    int64
	lostFront int64 // segments below have been classified by loss detection
	retxHint  int64 // below this segment only those in retxLow may wait for retransmission

	rackXmit    clock.Time // latest send time of a delivered, never-retransmitted segment
	rackXmitSeg int64      // the segment whose send time is rackXmit: ties go by sequence (Linux tcp_rack_sent_after)
	// rackRTT is Linux's rack.rtt_us, the RTT of the latest delivery
	// that advanced RACK (Config.LinuxRACKTimer's rules use it).
	rackRTT time.Duration
	rate    estimate.Rate
	rtt     RTTEstimator

	// OnRTT, if set, receives every RTT sample.
	OnRTT func(now clock.Time, rtt time.Duration)
	cc    cc.Algorithm
	// scratch holds the cc.Ack and cc.LossEvent handed to the controller:
	// its own, or one shared by every sender of a simulation (ShareScratch),
	// which stays cached whichever flow's ACK comes next.
	scratch *Scratch
	rtoT    clock.Timer
	tlp     tlpState // tlp.go
	// OnAck, if set, is called after each ACK is processed, for probes.
	OnAck    func(now clock.Time, s *Sender)
	out      packet.Receiver
	ringPeak int32 // the most segments outstanding since the ring last wrapped
	// tlpSlack is Config.TimeoutMin in nanoseconds, kept here because
	// every ACK in the open state reads it (tlp.go).
	tlpSlack uint32
	stats    Stats
	// cfg ends the hot part: its first configHotBytes are read on every ACK.
	cfg Config

	// Warm: pacing, loss detection and recovery.
	nextSend   clock.Time
	highSacked int64 // highest SACKed segment number, -1 if none
	// reordSeen is Linux's tp->reord_seen: an original segment was
	// delivered below the highest SACKed one, so the path reorders and
	// RACK keeps its reordering window in recovery too (racktime.go).
	reordSeen bool
	// cwrPending puts CWR on the next new data segment (Config.ECN,
	// ecn.go), in reordSeen's padding.
	cwrPending bool
	// nagle keeps a short segment at the window's edge back while another
	// is unacknowledged (UseNagle, runt.go), in the same padding.
	nagle bool
	// caState is Linux's open or Disorder state with
	// Config.LinuxWindowGrowth or Config.LinuxTLPTimer (disorder.go), in
	// the same padding; the controller sees it (cc.Ack.Disorder) only
	// with the first.
	caState       caState
	dupAcks       int32 // without SACK: duplicate ACKs in a row
	prevSACK      [packet.MaxSACK]packet.Block
	recoveryPoint int64
	rack          rackList // outstanding retransmissions in send order (rack.go)
	// rackFront bounds the time-based detection's scan (racktime.go).
	rackFront int64
	// With Config.LinuxRACKTimer: below rackScan every original has been
	// looked at for the latest one waiting, rackWaitTop (racktime.go).
	rackScan, rackWaitTop int64
	rackT                 clock.Timer
	pacerT                clock.Timer
	frto                  frtoState // frto.go

	// The receive window the peer advertises (Config.LinuxReceiveWindow;
	// rwnd.go): snd_wnd bytes from una, once an ACK has carried one.
	sndWnd      int64
	hasSndWnd   bool
	rwndLimited bool // the last trySend stopped at the window's edge
	frtoUndo    bool // F-RTO recorded priors: the timeout came in the open state (frto.go)
	synRetried  bool // a SYN was sent again (rto.go)
	// lostRetx counts retransmissions found lost in turn (LostRetransmits);
	// here, in the flags' padding, to keep the Sender in its size class.
	lostRetx     uint32
	rwndLimSince clock.Time // when it started to
	// rwndLimitedFor is the time sending has waited for the window, in
	// the periods ended so far (RwndLimited adds an open one).
	rwndLimitedFor time.Duration

	// Proportional rate reduction (RFC 6937) during fast recovery, for
	// controllers that expose a slow-start threshold (the loss-based ones;
	// BBR runs its own recovery, as in Linux where PRR applies only when
	// the module has no cong_control).
	prr          prrTarget
	prrDelivered int64 // segments delivered since recovery began
	prrOut       int64 // segments sent since recovery began
	prrRecoverFS int64 // segments in flight when recovery began
	prrAllow     int64 // segments PRR lets the sender send now

	// Cold: the handshake and the end.
	// tsRecent is the timestamp (SentAt) of the latest ACK or SYN-ACK,
	// echoed on data segments (TSecr, Linux's ts_recent) with
	// Config.LinuxReceiveWindow, whose receiver times its RTT by it.
	tsRecent clock.Time
	// OnDone, if set, is called when a finite transfer is fully
	// acknowledged.
	OnDone func(now clock.Time)
	// retxLow lists segments that came to wait for retransmission below
	// retxHint (scoreboard.go, pendingRetx); allocated with the first
	// (most flows never lose a retransmission).
	retxLow *retxHeap
	// rare counts events most flows never see, from the first, and holds
	// state only some flows need.
	rare *rareCounts
}

// rareCounts are a sender's counters of events most flows never see,
// allocated with the first, which keeps the Sender in its size class.
type rareCounts struct {
	// rtoInRecovery and rtoInLoss count first timeouts (not backed off)
	// that came in fast recovery and in the loss state (TimeoutStates).
	rtoInRecovery, rtoInLoss uint32
	// ecnReductions counts ECNReductions.
	ecnReductions uint32
	// eceDelivered counts ECEDelivered.
	eceDelivered int64
	// runts lists the short segments sent at the peer's window edge
	// (runt.go): here, allocated with the first, so that the Sender keeps
	// its size (and the flow's block its cache lines).
	runts runtState
	// pipeShort is what the short segments in the pipe lack of an MSS
	// (shortPipe).
	pipeShort units.Bytes
	// pq holds the sends waiting on their own timers with
	// Config.PacketTimers (mockets.go), else nil.
	pq *packetQueues
	// cwnd is Linux's record of the window's use with
	// Config.LinuxCwndLimited (cwndlimited.go).
	cwnd cwndLatch
	// sndbuf is the send buffer's account with Config.SendBufferLinux
	// (sndbuf.go), else nil.
	sndbuf *sndbufState
}

// counts returns the sender's rare counters, allocating them on first use.
func (s *Sender) counts() *rareCounts {
	if s.rare == nil {
		s.rare = new(rareCounts)
	}
	return s.rare
}

// Scratch is the space in which a sender builds what it hands its
// controller per ACK (the controller may not keep it past the call). The
// senders of one simulation run on one goroutine and may share one.
type Scratch struct {
	ack    cc.Ack
	lossEv cc.LossEvent
}

// scr returns the sender's scratch space, allocating its own on first use
// (a sender that shares one never allocates it).
func (s *Sender) scr() *Scratch {
	if s.scratch == nil {
		s.scratch = new(Scratch)
	}
	return s.scratch
}

// ShareScratch makes the sender build its controller's arguments in sc,
// which other senders driven by the same goroutine may share.
func (s *Sender) ShareScratch(sc *Scratch) { s.scratch = sc }

// senderHotBytes is the part of a Sender that an ACK in the open state
// reads: up to the end of the hot part of its configuration.
const senderHotBytes = unsafe.Offsetof(Sender{}.cfg) + configHotBytes

// SenderHotLines is the number of 64-byte lines from the start of a Sender
// that an ACK's processing in the open state reads, for prefetching.
const SenderHotLines = int(senderHotBytes+63) / 64

// NewSender returns a sender for flow that sends through out. cfg must be
// valid (see Config.Validate).
func NewSender(cfg Config, flow int32, clk clock.Scheduler, pool *packet.Pool, out packet.Receiver, alg cc.Algorithm) *Sender {
	s := new(Sender)
	InitSender(s, cfg, flow, clk, pool, out, alg)
	return s
}

// InitSender makes *s the sender NewSender would return, in memory the
// caller chose: a simulation of many flows keeps each flow's sender,
// receiver and timers in one allocation, so that an ACK touches fewer
// pages. Whatever *s held is overwritten; s must not be in use.
func InitSender(s *Sender, cfg Config, flow int32, clk clock.Scheduler, pool *packet.Pool, out packet.Receiver, alg cc.Algorithm) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		panic("tcp: " + err.Error())
	}
	*s = Sender{
		cfg: cfg, flow: flow, pool: pool, out: out, cc: alg,
		rtt:        NewRTTEstimator(cfg.MinRTO),
		total:      int64(cfg.Bytes),
		ring:       make([]segment, minRing), // grows and shrinks with the window
		highSacked: -1,
	}
	s.rtt.SplitSamples(cfg.OldestRTTSample)
	if s.total == 0 {
		s.total = math.MaxInt64
	}
	s.rtoT = clk.NewTimer(s.onRTO)
	s.pacerT = clk.NewTimer(s.onPacer)
	s.rackT = clk.NewTimer(s.onRACKTimer)
	if s.tlpEnabled() {
		s.tlp.timer = clk.NewTimer(s.onPTO)
	}
	s.tlpSlack = uint32(s.cfg.TimeoutMin)
	if cfg.SendBufferLinux {
		// tcp_init_buffer_space sizes the buffer for the initial window
		// (TCP_INIT_CWND, or the controller's own; sndbufInit).
		s.cfg.PendingQueue = 0
		s.sndbufInit()
	}
	if _, ok := alg.(cc.InternallyPaced); !ok {
		// Linux paces only its own paced modules inside TCP; another
		// controller's rate stands for an application's and keeps the
		// per-segment pacer.
		s.cfg.LinuxPacing = false
	}
	s.prr, _ = alg.(prrTarget)
	if _, ok := alg.(cc.ECNObserver); ok {
		// Linux turns ECN on for a module that needs it (DCTCP).
		s.cfg.ECN = ECNDCTCP
	}
	if cfg.PacketTimers {
		s.counts().pq = new(packetQueues)
		// Mockets' per-packet timers are not Linux's loss detection, so
		// not its rule for starting recovery either.
		s.cfg.LinuxRecoveryStart = false
	}
	if (s.cfg.LinuxWindowGrowth || s.cfg.LinuxTLPTimer) && !cfg.PacketTimers {
		s.caState = caOpen
	}
	if s.cfg.LinuxCwndLimited {
		s.cwndUse = cwndLinux
		s.counts() // trySendLinux keeps its record there
	}
}

// Prefetch starts loading what the next ACK's processing reads through the
// sender's pointers: the controller, the scoreboard's first and next
// segments, the retransmission and loss-probe timers, the RTT callback's
// closure and, with retransmissions outstanding, the RACK list's next free
// slot. A simulation calls it shortly before handing the sender an ACK
// (and after loading the sender's first SenderHotLines lines) so that these
// loads overlap other work; it reads only those lines and changes nothing.
func (s *Sender) Prefetch() {
	prefetch.Lines(prefetch.Data(s.cc), 2)
	// A delayed ACK acknowledges two segments and lets about two new
	// ones go; a 48-byte segment straddles two lines every other slot.
	s.prefetchSegs(int(s.head), 2)
	s.prefetchSegs(int(s.head+s.n)&(len(s.ring)-1), 2)
	prefetch.Line(prefetch.Data(s.rtoT))
	if s.tlp.timer != nil {
		prefetch.Line(prefetch.Data(s.tlp.timer))
	}
	if s.OnRTT != nil {
		prefetch.Line(prefetch.Data(s.OnRTT)) // the closure: its code pointer
	}
	if l := &s.rack; s.retransOut > 0 && len(l.buf) > 0 {
		prefetch.Line(unsafe.Pointer(l.tail()))
	}
}

// prefetchSegs starts loading the k scoreboard slots from ring index i on
// (k at most the ring's length).
func (s *Sender) prefetchSegs(i, k int) {
	const size = unsafe.Sizeof(segment{})
	if first := min(k, len(s.ring)-i); first < k {
		prefetch.Range(unsafe.Pointer(&s.ring[i]), uintptr(first)*size)
		prefetch.Range(unsafe.Pointer(&s.ring[0]), uintptr(k-first)*size)
		return
	}
	prefetch.Range(unsafe.Pointer(&s.ring[i]), uintptr(k)*size)
}

// CC returns the congestion controller.
func (s *Sender) CC() cc.Algorithm { return s.cc }

// Config returns the effective configuration.
func (s *Sender) Config() Config { return s.cfg }

// RTT returns the RTT estimator.
func (s *Sender) RTT() *RTTEstimator { return &s.rtt }

// Done reports whether the flow has ended: a finite transfer fully
// acknowledged, or the flow stopped (Stop).
func (s *Sender) Done() bool { return s.done }

// InFlight returns the RFC 6675 pipe: outstanding bytes not SACKed and not
// lost, plus retransmissions still outstanding; with
// Config.LinuxReceiveWindow a short segment counts as a whole one, as
// Linux counts the data in flight in packets (shortPipe).
func (s *Sender) InFlight() units.Bytes {
	pipe := s.outBytes - s.sacked - s.lost + s.retransOut
	if s.cfg.LinuxReceiveWindow && s.rare != nil {
		pipe += s.rare.pipeShort
	}
	if s.renoSacked > 0 {
		// Without SACK, duplicate ACKs stand for segments that left.
		pipe = max(pipe-s.renoSacked, 0)
	}
	return pipe
}

// Delivered returns C.delivered.
func (s *Sender) Delivered() units.Bytes { return s.rate.Delivered() }

// Start begins sending at now.
func (s *Sender) Start(now clock.Time) {
	if s.started {
		return
	}
	s.started = true
	s.rate.Start(now)
	if s.cfg.NoHandshake {
		s.established = true
		s.trySend(now)
		return
	}
	s.sendSyn(now)
}

// sendSyn sends (or resends) the SYN: headers plus the SYN's own options
// (Config.SynOptions), and arms the timer for it.
func (s *Sender) sendSyn(now clock.Time) {
	p := s.pool.Get()
	p.Flow = s.flow
	p.Kind = packet.Syn
	p.Size = s.cfg.Header + s.cfg.SynOptions
	p.SentAt = now
	p.Retransmission = s.synRetried
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
	if d, ok := echoRTT(now, echo); ok {
		s.rtt.UpdateSeq(d, s.una, s.nxt)
	}
	s.backoff = 0
	s.rtoT.Stop()
	s.rate.Start(now)
	if e, ok := s.cc.(cc.Establisher); ok {
		e.OnEstablished(now, s.rtt.SRTT(), s.rtt.Min())
	}
	if s.cfg.SendBufferLinux {
		s.sndbufInit()
	}
	if s.cfg.HandshakeAck {
		p := s.pool.Get()
		p.Flow = s.flow
		p.Kind = packet.Ack
		p.Size = s.cfg.Header
		p.SentAt = now
		s.out.Receive(now, p)
	}
	s.trySend(now)
}

// Stop ends the flow: no more sending, timers disarmed. Packets in flight
// are still accounted by the network.
func (s *Sender) Stop() {
	s.done = true
	s.rtoT.Stop()
	s.pacerT.Stop()
	s.rackT.Stop()
	if s.tlp.timer != nil {
		s.tlp.timer.Stop()
	}
}

// trySend sends as much as the window, the pacing rate and the data allow.
func (s *Sender) trySend(now clock.Time) {
	if s.cwndUse&cwndLinux != 0 {
		s.trySendLinux(now)
		return
	}
	s.sendPass(now)
}

// sendPass is one pass of trySend: it sends until the window, the pacer,
// the peer's window or the data stop it, and records in cwndUse's
// cwndFull whether the congestion window (or PRR) stopped it.
func (s *Sender) sendPass(now clock.Time) {
	if !s.established || s.done {
		return
	}
	mss := s.cfg.MSS
	burst := 0 // Config.LinuxPacing: segments left of the current send
	sentNew := false
	for {
		cwnd := max(s.cc.CongestionWindow(), mss)
		pipe := s.InFlight()
		if s.cfg.RecvWindow > 0 {
			cwnd = min(cwnd, s.cfg.RecvWindow)
		}
		if s.reducing() && s.prr != nil {
			if s.prrAllow <= 0 {
				s.cwndUse |= cwndFull
				break
			}
		} else if pipe+mss > cwnd {
			// Send a segment only if a whole one fits (RFC 6675 "cwnd -
			// pipe >= 1 SMSS"; Linux counts in packets, the same for full
			// segments).
			s.cwndUse |= cwndFull
			break
		}
		k, retx := s.nextSegment()
		if k < 0 {
			// Nothing to send with window available: application-limited
			// (draft-cheng §3.4).
			s.cwndUse &^= cwndFull
			s.rate.SetAppLimited(pipe)
			break
		}
		var runt units.Bytes // a short new segment's length, else 0
		if s.cfg.LinuxReceiveWindow && !retx {
			var ok bool
			if runt, ok = s.windowEdge(sentNew); !ok {
				s.rwndStop(now, cwnd, pipe)
				return
			}
		}
		if rate := s.cc.PacingRate(); rate > 0 {
			if s.cfg.LinuxPacing {
				if !s.linuxPace(now, rate, cwnd, pipe, k, retx, &burst) {
					break
				}
			} else if now < s.nextSend {
				s.pacerT.Reset(s.nextSend)
				break
			}
		}
		s.send(now, k, retx, runt, pipe)
		sentNew = sentNew || !retx
	}
	// Sending stopped for a reason other than the peer's window.
	s.rwndEnd(now)
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

// send sends segment k: a retransmission, or new data (a whole segment, or
// the rest of a finite transfer; runt bytes if runt > 0, runt.go); pipe is
// InFlight before it, which trySend has at hand.
func (s *Sender) send(now clock.Time, k int64, retx bool, runt units.Bytes, pipe units.Bytes) {
	stamp := s.rate.OnSend(now, pipe)
	var g *segment
	if retx {
		g = s.seg(k)
		g.retrans, g.everRetrans = true, true
		s.retransOut += g.len
		s.shortPipe(g, 1)
		s.stats.Retransmissions++
		s.rack.push(k, now, s.nxtSeg())
	} else {
		g = s.addSegment(runt)
		// PendingQueue first: it is among the hot fields, SendBufferLinux not.
		if s.cfg.PendingQueue != 0 && s.cfg.SendBufferLinux {
			s.sndbufSent(now, k)
		}
	}
	g.sentAt = now
	s.prrSent()
	g.delivered, g.deliveredTime, g.firstSentTime, g.appLimited = stamp.Delivered, stamp.DeliveredTime, stamp.FirstSentTime, stamp.AppLimited
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
	if s.cfg.LinuxReceiveWindow {
		p.EchoAt = s.tsRecent
	}
	if s.cfg.ECN != ECNOff {
		s.ecnSend(p, retx)
	}

	s.cc.OnPacketSent(now, g.len, s.InFlight(), retx)
	if s.cfg.PacketTimers {
		s.packetSent(now, k, g)
	} else if !s.rtoT.Armed() || (retx && k == s.unaSeg && !s.cfg.RFC6298RTO) {
		// Linux restarts the timer when it retransmits the first
		// unacknowledged segment (tcp_xmit_retransmit_queue), so the
		// repair of the hole gets a whole RTO.
		s.rtoT.Reset(now.Add(s.currentRTO()))
	}
	if !retx {
		s.scheduleTLP(now, true, false, clock.Never)
	}
	if rate := s.cc.PacingRate(); rate > 0 && !s.cfg.LinuxPacing {
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
	ece := p.ECN&packet.ECE != 0
	if s.cfg.LinuxReceiveWindow {
		s.tsRecent = p.SentAt
		if w, ok := p.Window(); ok {
			s.updateWindow(kind, ackNo, int64(w))
		}
	}
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
	s.onAck(now, ackNo, echo, ackDelay, blocks[:nb], ece)
}

// onAck processes one ACK: the scoreboard, loss detection, RTT and rate
// samples, the recovery state, the controller, the timer, then sending.
func (s *Sender) onAck(now clock.Time, ackNo int64, echo clock.Time, ackDelay time.Duration, blocks []packet.Block, ece bool) {
	priorInFlight := s.InFlight()
	priorLost, priorLostRetx := s.stats.MarkedLost, s.lostRetx
	priorPhase := s.phase
	var rs estimate.Sample
	var acked units.Bytes

	advanced := ackNo > s.una && ackNo <= s.nxt
	if advanced {
		s.ackCumulative(now, ackNo, &rs, &acked)
		s.backoff = 0
	}
	// delivered is what PRR counts; without SACK it includes duplicate
	// ACKs, which Linux counts as delivered segments but does not grow
	// the window on.
	var delivered units.Bytes
	if s.cfg.NoSACK {
		// A peer that was not offered SACK has no business sending
		// blocks; a live one's would mark segments SACKed that Reno's
		// duplicate ACKs then mark lost too.
		blocks = nil
		dup, credited := s.renoAck(advanced, ackNo, acked)
		acked -= credited
		delivered = dup
	}
	cumAcked := acked
	sackOldest := clock.Never
	for _, b := range blocks {
		s.sackRange(now, b, &rs, &acked, &sackOldest)
	}
	s.nPrevSACK = uint8(copy(s.prevSACK[:], blocks))
	s.frtoAck()

	if s.cfg.PacketTimers {
		// Mockets: only the packets' own timers detect loss (mockets.go).
	} else {
		orig, retx := clock.Never, clock.Never
		// Linux re-arms the reordering timer only from an ACK that
		// delivered a segment with an unambiguous RTT (tcp_rack_mark_lost
		// returns at once without tp->rack.advanced).
		rackRan := s.rackAdvanced
		if s.sacked > 0 {
			if s.cfg.NoRACK {
				// RFC 6675's DupThresh rule; with RACK on, Linux
				// (this machine's 6.18) marks losses by RACK alone.
				s.detectLoss()
			}
			if s.rackAdvanced {
				s.rackAdvanced = false
				orig = s.detectLossRACK(now)
			}
		}
		if advanced && (s.cfg.NoRACK || s.cfg.NoSACK) {
			s.partialAck()
		}
		if s.retransOut > 0 && s.rackXmit > 0 {
			retx = s.detectLostRetransmissions(now)
		}
		s.armRACK(now, orig, retx, rackRan)
	}
	s.sampleRTT(now, echo, ackDelay, advanced, sackOldest, &rs)

	newlyLost := s.stats.MarkedLost - priorLost
	if s.cfg.ECN != ECNOff {
		s.ecnAck(now, ece, acked+delivered)
	} else {
		// A peer's ECE means nothing on a connection without ECN.
		ece = false
	}
	// An ACK that finds a retransmission lost may turn a timeout's loss
	// state into fast recovery (Config.LinuxRecoveryStart).
	s.updateRecovery(now, priorInFlight, newlyLost, acked+delivered, advanced, s.lostRetx != priorLostRetx, ece)
	s.tlpAck(now, ackNo, advanced, acked > 0)
	if s.caState != caUntracked {
		// Linux's tcp_ack_is_dubious: a duplicate ACK, or one with new
		// SACK information or an ECN echo, or any ACK outside the open
		// state.
		s.trackDisorder(priorPhase, !advanced || acked > cumAcked || ece)
	}
	if acked > 0 {
		s.ackController(now, acked, newlyLost, priorInFlight, &rs, advanced)
	}

	if s.una >= s.total {
		s.Stop()
		if s.OnDone != nil {
			s.OnDone(now)
		}
		return
	}
	// RFC 6298 §5.2, §5.3.
	if s.cfg.PacketTimers {
		s.armPacketTimer(now)
	} else if s.n == 0 {
		s.rtoT.Stop()
	} else if s.xmitTimerAck(advanced, sackOldest) {
		// Linux also restarts the timer on an ACK that SACKs original
		// data sent before the first unacknowledged segment's last
		// transmission (tcp_clean_rtx_queue's FLAG_SET_XMIT_TIMER for a
		// SACK RTT longer than the head's age): in recovery over a queue
		// that is still draining, older data keeps arriving, and the
		// retransmitted head is not overdue.
		s.rtoT.Reset(now.Add(s.currentRTO()))
	}
	s.scheduleTLP(now, false, advanced, sackOldest)
	if s.OnAck != nil {
		s.OnAck(now, s)
	}
	// PendingQueue first: it is among the hot fields, SendBufferLinux not.
	if advanced && s.cfg.PendingQueue != 0 && s.cfg.SendBufferLinux && s.nxt < s.total {
		s.sndbufExpand()
	}
	s.trySend(now)
}

// ackController tells the controller about an ACK that delivered acked
// bytes; advanced says it moved SND.UNA (which alone lets the window grow
// with Config.LinuxWindowGrowth).
func (s *Sender) ackController(now clock.Time, acked units.Bytes, newlyLost int64, priorInFlight units.Bytes, rs *estimate.Sample, advanced bool) {
	a := &s.scr().ack
	*a = cc.Ack{
		AckedBytes:    acked,
		LostBytes:     units.Bytes(newlyLost) * s.cfg.MSS,
		PriorInFlight: priorInFlight,
		InFlight:      s.InFlight(),
		RTT:           rs.RTT,
		MinRTT:        s.rtt.Min(),
		SRTT:          s.rtt.SRTT(),
		// Only fast recovery reduces the window; after a timeout the
		// controller slow-starts (Linux: CA_Loss is not a cwnd reduction
		// state).
		InRecovery:     s.phase == recovery,
		CWR:            s.phase == cwr,
		InLoss:         s.phase == lossPhase,
		Disorder:       s.caState == caDisorder && s.cfg.LinuxWindowGrowth,
		HoldWindow:     s.caState != caUntracked && !advanced && s.cfg.LinuxWindowGrowth,
		CwndLimited:    s.cwndUse&cwndFull != 0,
		TotalDelivered: s.rate.Delivered(),
	}
	s.rate.Fill(rs, s.rtt.Min(), &a.Rate)
	s.cc.OnAck(now, a)
}
