// Package bbr implements BBR v1 congestion control as Linux
// net/ipv4/tcp_bbr.c does it (Cardwell et al., "BBR: Congestion-Based
// Congestion Control", ACM Queue 14(5), 2016;
// draft-cardwell-iccrg-bbr-congestion-control-00).
//
// On every ACK BBR updates its model of the path, the bottleneck bandwidth
// (a windowed maximum of delivery-rate samples over bw_window_rounds round
// trips, filter.go) and the round-trip propagation time (the minimum RTT,
// refreshed at least every min_rtt_window), and sets
//
//	pacing rate = pacing_gain * bw * (1 - 1%)
//	cwnd        = cwnd_gain * bw * min_rtt + 3 send quanta (at least 4 segments)
//
// with gains from its state machine: STARTUP (2/ln2) until the bandwidth
// stops growing by 25% for 3 rounds, DRAIN (1/high_gain) until the queue is
// gone, PROBE_BW cycling the pacing gain through 1.25, 0.75 and six times 1,
// and PROBE_RTT (4 segments for max(probe_rtt_duration, one round)) when the
// minimum RTT has not been refreshed for min_rtt_window. Losses do not
// change the model; during recovery the window follows packet conservation,
// and a long-term estimator (ltbw.go) detects policers.
//
// Rounds are counted as Linux does, on delivered data: a round ends when an
// ACK delivers a segment sent after the round began
// (cc.RateSample.PriorDelivered >= the delivered count at the round's
// start).
package bbr

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Spec registers "bbr".
var Spec = cc.Spec{
	Name: "bbr",
	Doc:  "BBR v1 (Cardwell et al. 2016) as in Linux tcp_bbr.c",
	Params: []cc.ParamSpec{
		{Name: "iw", Default: 10, Min: 1, Max: 1000, Integer: true, Unit: "segments", Doc: "initial window (Linux TCP_INIT_CWND: 10)"},
		{Name: "bw_window_rounds", Default: 10, Min: 1, Max: MaxWindowRounds, Integer: true, Unit: "rounds", Doc: "bottleneck bandwidth max filter window (Linux bbr_bw_rtts: 10)"},
		{Name: "min_rtt_window", Default: 10, Min: 0.1, Max: 600, Unit: "s", Doc: "RTprop min filter window (Linux bbr_min_rtt_win_sec: 10)"},
		{Name: "probe_rtt_duration", Default: 0.2, Min: 0, Max: 10, Unit: "s", Doc: "minimum time at 4 segments in PROBE_RTT; 0 disables PROBE_RTT (Linux bbr_probe_rtt_mode_ms: 200 ms)"},
		{Name: "high_gain", Default: HighGain, Min: 1, Max: 10, Doc: "STARTUP pacing and cwnd gain; DRAIN paces at 1/high_gain (Linux: 2/ln2)"},
		{Name: "cwnd_gain", Default: 2, Min: 1, Max: 10, Doc: "PROBE_BW cwnd gain (Linux bbr_cwnd_gain: 2)"},
		{Name: "lt_bw", Default: 1, Min: 0, Max: 1, Integer: true, Doc: "1 = long-term bandwidth (policer) estimation, as Linux"},
		{Name: "extra_acked_gain", Default: 1, Min: 0, Max: 10, Doc: "gain on the ACK-aggregation cwnd allowance (Linux bbr_extra_acked_gain: 1; 0 = none, as before Linux 4.20)"},
		{Name: "linux", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1 = Linux tcp_bbr.c's filters and start: an RTT sample equal to RTprop does not renew it (Linux 5.10+), BtlBw is lib/win_minmax.c's three-sample windowed max, bbr_init's handshake RTT starts RTprop and the pacing rate, and a fast recovery that follows a timeout's loss state begins with packet conservation; 0 = the BBR draft's <=, an exact windowed max, both from the first data ACK, and such a recovery treated as more of the loss state"},
		{Name: "seed", Default: 0, Min: 0, Max: 1 << 53, Integer: true, Doc: "seed of the random PROBE_BW start phase; 0 = the simulator's per-flow seed (no randomness where there is none: always phase 0, gain 1.25)"},
	},
	New: func(c cc.Config) (cc.Algorithm, error) {
		b := newBBR(ConfigFromParams(c.MSS, c.Params))
		s := uint64(c.Params["seed"])
		if s == 0 {
			// Flows of one simulation must not start their gain cycles in
			// step; the simulator gives each its own seed.
			s = c.Seed
		}
		b.seed(s)
		return b, nil
	},
}

func init() { cc.Register(Spec) }

var (
	_ cc.Algorithm   = (*BBR)(nil)
	_ cc.Inspector   = (*BBR)(nil)
	_ cc.Tunable     = (*BBR)(nil)
	_ cc.Establisher = (*BBR)(nil)
)

// HighGain is 2/ln 2, "the smallest pacing gain that will allow a smoothly
// increasing pacing rate that will double each RTT" (Linux bbr_high_gain,
// which rounds it to 739/256 = 2.8867).
const HighGain = 2 / math.Ln2

// Linux tcp_bbr.c constants.
const (
	cycleLen             = 8                 // CYCLE_LEN
	cycleRand            = 7                 // bbr_cycle_rand: random start over phases 0, 2..7
	cwndMinTarget        = 4                 // bbr_cwnd_min_target, segments
	fullBwThresh         = 1.25              // bbr_full_bw_thresh
	fullBwCount          = 3                 // bbr_full_bw_cnt
	pacingMargin         = 0.01              // bbr_pacing_margin_percent
	initCwnd             = 10                // TCP_INIT_CWND, segments
	minTSORate           = 1200 * units.Kbps // bbr_min_tso_rate
	maxTSOSegs           = 127               // bbr_tso_segs_goal cap
	gsoMaxBytes          = 65536 - 1 - 320   // GSO_MAX_SIZE - 1 - MAX_TCP_HEADER
	pacingShift          = 10                // sk_pacing_shift: about 1 ms of data
	nominalRTT           = time.Millisecond  // used before the first RTT sample
	pcgStream     uint64 = 0x6262722d7631    // "bbr-v1": PCG stream for the seed
)

// pacingGainCycle is bbr_pacing_gain: probe, drain, then cruise for six
// phases.
var pacingGainCycle = [cycleLen]float64{1.25, 0.75, 1, 1, 1, 1, 1, 1}

// Mode is BBR's state.
type Mode int

// BBR modes (Linux enum bbr_mode).
const (
	Startup Mode = iota
	Drain
	ProbeBW
	ProbeRTT
)

// String returns the mode's name as used in cc.State.
func (m Mode) String() string {
	switch m {
	case Startup:
		return "startup"
	case Drain:
		return "drain"
	case ProbeBW:
		return "probe_bw"
	case ProbeRTT:
		return "probe_rtt"
	}
	return "unknown"
}

// caState mirrors the Linux congestion-avoidance states BBR distinguishes.
type caState int

const (
	caOpen     caState = iota
	caRecovery         // fast recovery (cc.Ack.InRecovery)
	caLoss             // after a retransmission timeout
)

// Config holds BBR's parameters in typed form.
type Config struct {
	// MSS is the segment size, bytes.
	MSS units.Bytes
	// InitialWindow is the initial cwnd, segments.
	InitialWindow int
	// BwWindowRounds is the bandwidth max filter window, round trips.
	BwWindowRounds int
	// MinRTTWindow is how long a min RTT sample stays valid.
	MinRTTWindow time.Duration
	// ProbeRTTDuration is the minimum time at 4 segments in PROBE_RTT; 0
	// disables PROBE_RTT.
	ProbeRTTDuration time.Duration
	// HighGain is the STARTUP gain; DRAIN paces at 1/HighGain.
	HighGain float64
	// CwndGain is the PROBE_BW cwnd gain.
	CwndGain float64
	// LongTermBw enables policer detection.
	LongTermBw bool
	// ExtraAckedGain scales the ACK-aggregation allowance added to the
	// cwnd target (Linux bbr_extra_acked_gain, 1.0); 0 disables it.
	ExtraAckedGain float64
	// Linux selects tcp_bbr.c's filters and start (the "linux"
	// parameter): a min RTT renewed only by a smaller sample, win_minmax's
	// windowed max, RTprop and the pacing rate from the handshake
	// (OnEstablished), and the loss state left when a fast recovery
	// follows it (OnCongestionEvent), as Linux's state follows the
	// socket's.
	Linux bool
}

// ConfigFromParams converts resolved Spec parameters.
func ConfigFromParams(mss units.Bytes, p map[string]float64) Config {
	return Config{
		MSS:              mss,
		InitialWindow:    int(p["iw"]),
		BwWindowRounds:   int(p["bw_window_rounds"]),
		MinRTTWindow:     seconds(p["min_rtt_window"]),
		ProbeRTTDuration: seconds(p["probe_rtt_duration"]),
		HighGain:         p["high_gain"],
		CwndGain:         p["cwnd_gain"],
		LongTermBw:       p["lt_bw"] != 0,
		ExtraAckedGain:   p["extra_acked_gain"],
		Linux:            p["linux"] != 0,
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// BBR is the BBR v1 controller. Create it with New or through cc.New.
type BBR struct {
	cfg Config
	mss units.Bytes
	rng *rand.Rand // nil: no randomness (seed 0)

	cwnd       units.Bytes
	pacingRate units.Bandwidth
	ssthresh   units.Bytes // reported only; 0 until DRAIN sets it

	mode        Mode
	pacingGain  float64
	cwndGainNow float64

	bw          MaxFilter
	minRTT      time.Duration // 0 = no sample yet
	minRTTStamp clock.Time
	hasSeenRTT  bool

	roundCount       uint64
	nextRTTDelivered units.Bytes
	roundStart       bool

	cycleIdx   int
	cycleStamp clock.Time

	fullBwReached bool
	fullBw        units.Bandwidth
	fullBwCnt     int

	probeRTTDone      clock.Time
	probeRTTDoneSet   bool
	probeRTTRoundDone bool
	idleRestart       bool

	prevState          caState
	lossState          bool        // after an RTO, until its recovery point is delivered
	lossRecoveryPoint  units.Bytes // delivered count that ends the RTO episode
	lossReported       bool        // the transport reports the RTO episode in InRecovery
	savedForEpisode    bool
	packetConservation bool
	priorCwnd          units.Bytes

	lt  ltBw
	agg ackAggregation

	// Linux sets tp->app_limited during PROBE_RTT so that its low-rate
	// samples are flagged; the transport's flag cannot be written from
	// here, so the samples of segments sent while it would have been set
	// (C.delivered at send within [appFrom, appUntil]) are treated as
	// application-limited.
	appMarked         bool
	appFrom, appUntil units.Bytes

	started   bool
	delivered units.Bytes // TotalDelivered of the last ACK
	lost      units.Bytes // bytes marked lost so far (Linux tp->lost)
	inFlight  units.Bytes // last pipe reported
}

// New returns a BBR controller whose random PROBE_BW start phases come from
// src, which must not be nil.
func New(cfg Config, src rand.Source) *BBR {
	if src == nil {
		panic("bbr: nil rand.Source (use Spec's seed parameter for a deterministic default)")
	}
	b := newBBR(cfg)
	b.rng = rand.New(src)
	return b
}

func newBBR(cfg Config) *BBR {
	if cfg.MSS <= 0 || cfg.InitialWindow <= 0 || cfg.HighGain <= 0 || cfg.CwndGain <= 0 {
		panic("bbr: invalid Config (MSS, InitialWindow and gains must be positive)")
	}
	b := &BBR{cfg: cfg, mss: cfg.MSS}
	b.cwnd = units.Bytes(cfg.InitialWindow) * cfg.MSS
	b.bw = NewMaxFilter(cfg.BwWindowRounds)
	b.bw.SetLinux(cfg.Linux)
	b.mode = Startup
	b.updateGains()
	b.initPacingRate(0)
	return b
}

// seed installs the random source for a seed parameter: none for 0.
func (b *BBR) seed(s uint64) {
	b.rng = nil
	if s != 0 {
		b.rng = rand.New(rand.NewPCG(s, pcgStream))
	}
}

// start stamps the clocks on the first event (Linux bbr_init runs when the
// connection is set up).
func (b *BBR) start(now clock.Time) {
	if !b.started {
		b.started = true
		b.minRTTStamp = now
		b.cycleStamp = now
	}
}

// OnPacketSent implements cc.Algorithm. A send with nothing in flight,
// other than the retransmission after a timeout, is a restart after idle
// (Linux bbr_cwnd_event, CA_EVENT_TX_START while application-limited).
func (b *BBR) OnPacketSent(now clock.Time, bytes, inFlight units.Bytes, _ bool) {
	if !b.started {
		b.start(now)
	} else if inFlight <= bytes && !b.lossState {
		b.idleRestart = true
		switch b.mode {
		case ProbeBW:
			// "Avoid pointless buffer overflows: pace at est. bw if we
			// don't need more speed."
			b.setPacingRate(b.bwEstimate(), 1, 0)
		case ProbeRTT:
			b.checkProbeRTTDone(now)
		}
	}
	b.inFlight = inFlight
}

// OnAck implements cc.Algorithm (Linux bbr_main).
func (b *BBR) OnAck(now clock.Time, a *cc.Ack) {
	b.start(now)
	b.delivered = a.TotalDelivered
	b.inFlight = a.InFlight
	b.lost += a.LostBytes
	if b.lossState {
		// The timeout's recovery ends when the transport says so, if it
		// reports it through InRecovery (tcp.Sender does), or else once the
		// data outstanding at the timeout has been delivered.
		b.lossReported = b.lossReported || a.InRecovery
		if !a.InRecovery && (b.lossReported || a.TotalDelivered >= b.lossRecoveryPoint) {
			b.lossState = false
		}
	}
	appLimited := a.Rate.IsAppLimited || b.appMarked && a.Rate.PriorDelivered >= b.appFrom && a.Rate.PriorDelivered <= b.appUntil

	b.updateBw(now, a, appLimited)
	if a.Rate.Interval > 0 { // Linux: only with a valid rate sample
		b.agg.update(now, a.AckedBytes, b.roundStart, b.bwEstimate(), b.cwnd)
	}
	b.updateCyclePhase(now, a)
	b.checkFullBwReached(appLimited)
	b.checkDrain(now, a)
	b.updateMinRTT(now, a)
	b.updateGains()

	bw := b.bwEstimate()
	b.setPacingRate(bw, b.pacingGain, a.SRTT)
	b.setCwnd(a, bw, b.cwndGainNow)
}

// bwEstimate is bbr_bw: the policed rate while the LT estimator is in use,
// else the max filter.
func (b *BBR) bwEstimate() units.Bandwidth {
	if b.lt.useBw {
		return b.lt.bw
	}
	return b.bw.Get()
}

// updateBw is bbr_update_bw: count rounds, feed the LT estimator and the
// max filter.
func (b *BBR) updateBw(now clock.Time, a *cc.Ack, appLimited bool) {
	b.roundStart = false
	if a.Rate.Interval <= 0 {
		return // not a valid observation
	}
	if a.Rate.PriorDelivered >= b.nextRTTDelivered {
		b.nextRTTDelivered = a.TotalDelivered
		b.roundCount++
		b.roundStart = true
		b.packetConservation = false
	}
	if b.cfg.LongTermBw {
		if b.lt.sample(ltSample{now: now, delivered: a.TotalDelivered, lost: b.lost, losses: a.LostBytes > 0,
			appLimited: appLimited, roundStart: b.roundStart}, b.mode == ProbeBW) {
			b.resetProbeBwMode(now) // "restart gain cycling"
		}
	}
	bw := units.BandwidthFromDelta(a.Rate.Delivered, a.Rate.Interval)
	// "We filter out app-limited samples unless they describe the path bw
	// at least as well as our bw model."
	if !appLimited || bw >= b.bw.Get() {
		b.bw.Update(b.roundCount, bw)
	}
}

// updateCyclePhase is bbr_update_cycle_phase with bbr_is_next_cycle_phase.
// Linux estimates the data in the network at the next departure time
// (bbr_packets_in_net_at_edt) because its pacing is scheduled ahead; the
// transport here paces in real time, so the ACK's prior in-flight is used,
// as Linux did before EDT pacing.
func (b *BBR) updateCyclePhase(now clock.Time, a *cc.Ack) {
	if b.mode != ProbeBW {
		return
	}
	fullLength := now.Sub(b.cycleStamp) > b.minRTT
	next := fullLength
	switch {
	case b.pacingGain > 1:
		// "We do not persist if packets are lost, since a path with small
		// buffers may not hold that much."
		next = fullLength && (a.LostBytes > 0 || a.PriorInFlight >= b.inflight(b.bw.Get(), b.pacingGain))
	case b.pacingGain < 1:
		// "If inflight falls to match BDP then we estimate queue is
		// drained; persisting would underutilize the pipe."
		next = fullLength || a.PriorInFlight <= b.inflight(b.bw.Get(), 1)
	}
	if next {
		b.advanceCyclePhase(now)
	}
}

func (b *BBR) advanceCyclePhase(now clock.Time) {
	b.cycleIdx = (b.cycleIdx + 1) % cycleLen
	b.cycleStamp = now
}

// resetProbeBwMode enters PROBE_BW at a random phase other than the
// draining one: Linux picks cycle_idx = 7 - rand(7) and advances, giving
// phase 0 or 2..7 with equal probability.
func (b *BBR) resetProbeBwMode(now clock.Time) {
	b.mode = ProbeBW
	r := 0
	if b.rng != nil {
		r = b.rng.IntN(cycleRand)
	}
	b.cycleIdx = cycleLen - 1 - r
	b.advanceCyclePhase(now)
}

// resetMode is bbr_reset_mode, on leaving PROBE_RTT.
func (b *BBR) resetMode(now clock.Time) {
	if !b.fullBwReached {
		b.mode = Startup
		return
	}
	b.resetProbeBwMode(now)
}

// checkFullBwReached is bbr_check_full_bw_reached: STARTUP has filled the
// pipe once the bandwidth has grown by less than 25% in 3 consecutive
// non-application-limited rounds.
func (b *BBR) checkFullBwReached(appLimited bool) {
	if b.fullBwReached || !b.roundStart || appLimited {
		return
	}
	if maxBw := b.bw.Get(); float64(maxBw) >= fullBwThresh*float64(b.fullBw) {
		b.fullBw = maxBw
		b.fullBwCnt = 0
		return
	}
	b.fullBwCnt++
	b.fullBwReached = b.fullBwCnt >= fullBwCount
}

// checkDrain is bbr_check_drain.
func (b *BBR) checkDrain(now clock.Time, a *cc.Ack) {
	if b.mode == Startup && b.fullBwReached {
		b.mode = Drain
		b.ssthresh = b.inflight(b.bw.Get(), 1)
	}
	if b.mode == Drain && a.InFlight <= b.inflight(b.bw.Get(), 1) {
		b.resetProbeBwMode(now) // "we estimate queue is drained"
	}
}

// updateMinRTT is bbr_update_min_rtt: the RTprop filter and PROBE_RTT.
func (b *BBR) updateMinRTT(now clock.Time, a *cc.Ack) {
	rtt := a.Rate.RTT
	if rtt <= 0 {
		rtt = a.RTT
	}
	expired := now > b.minRTTStamp.Add(b.cfg.MinRTTWindow)
	// The BBR draft renews the estimate with an equal sample, which keeps
	// a sender whose queue drains now and then out of PROBE_RTT; Linux
	// since 5.10 wants a smaller one (Netflix found flows in persistent
	// loss, whose timestamp RTTs tie at millisecond granularity, never
	// probing). In a simulation without jitter equal samples are common.
	renew := rtt <= b.minRTT
	if b.cfg.Linux {
		renew = rtt < b.minRTT
	}
	if rtt > 0 && (b.minRTT == 0 || renew || expired) {
		b.minRTT = rtt
		b.minRTTStamp = now
	}
	if b.cfg.ProbeRTTDuration > 0 && expired && !b.idleRestart && b.mode != ProbeRTT {
		b.mode = ProbeRTT // "dip, drain queue"
		b.saveCwnd()
		b.probeRTTDoneSet = false
		b.appMarked = true
		b.appFrom = a.TotalDelivered
	}
	if b.mode == ProbeRTT {
		// "Ignore low rate samples during this mode."
		b.appUntil = max(a.TotalDelivered+a.InFlight, 1)
		// "Maintain min packets in flight for max(200 ms, 1 round)."
		if !b.probeRTTDoneSet && a.InFlight <= cwndMinTarget*b.mss {
			b.probeRTTDone = now.Add(b.cfg.ProbeRTTDuration)
			b.probeRTTDoneSet = true
			b.probeRTTRoundDone = false
			b.nextRTTDelivered = a.TotalDelivered
		} else if b.probeRTTDoneSet {
			if b.roundStart {
				b.probeRTTRoundDone = true
			}
			if b.probeRTTRoundDone {
				b.checkProbeRTTDone(now)
			}
		}
	}
	// "Restart after idle ends only once we process a new S/ACK for data."
	if a.Rate.Delivered > 0 {
		b.idleRestart = false
	}
}

// checkProbeRTTDone is bbr_check_probe_rtt_done.
func (b *BBR) checkProbeRTTDone(now clock.Time) {
	if !b.probeRTTDoneSet || now <= b.probeRTTDone {
		return
	}
	b.minRTTStamp = now // "wait a while until PROBE_RTT"
	b.cwnd = max(b.cwnd, b.priorCwnd)
	b.resetMode(now)
}

// updateGains is bbr_update_gains.
func (b *BBR) updateGains() {
	switch b.mode {
	case Startup:
		b.pacingGain, b.cwndGainNow = b.cfg.HighGain, b.cfg.HighGain
	case Drain:
		// Linux bbr_drain_gain = 1/high_gain "to typically drain the queue
		// created in BBR_STARTUP in a single round".
		b.pacingGain, b.cwndGainNow = 1/b.cfg.HighGain, b.cfg.HighGain
	case ProbeBW:
		b.pacingGain = pacingGainCycle[b.cycleIdx]
		if b.lt.useBw {
			b.pacingGain = 1
		}
		b.cwndGainNow = b.cfg.CwndGain
	case ProbeRTT:
		b.pacingGain, b.cwndGainNow = 1, 1
	}
}

// saveCwnd is bbr_save_cwnd: remember the last good cwnd before recovery or
// PROBE_RTT cut it.
func (b *BBR) saveCwnd() {
	if b.prevState == caOpen && b.mode != ProbeRTT {
		b.priorCwnd = b.cwnd
	} else {
		b.priorCwnd = max(b.priorCwnd, b.cwnd)
	}
}

// pacingRateFor is bbr_bw_to_pacing_rate: gain*bw, 1% below to drain any
// queue on average ("an important aspect of the design").
func pacingRateFor(bw units.Bandwidth, gain float64) units.Bandwidth {
	return units.Bandwidth(float64(bw) * gain * (1 - pacingMargin))
}

// OnEstablished implements cc.Establisher. With linux = 1 it is bbr_init's
// use of the handshake: min_rtt_us = tcp_min_rtt(tp), stamped now, and the
// pacing rate from the SYN's SRTT (bbr_init_pacing_rate_from_rtt), so a
// long path's first flight is paced over the RTT and the min-RTT window
// runs from the handshake. Otherwise (the default so far) BBR waits for the
// first data ACK for both, as it always did here.
func (b *BBR) OnEstablished(now clock.Time, srtt, minRTT time.Duration) {
	if !b.cfg.Linux || b.delivered > 0 {
		return
	}
	b.start(now)
	if minRTT > 0 {
		b.minRTT, b.minRTTStamp = minRTT, now
	}
	if srtt > 0 {
		b.initPacingRate(srtt)
	}
}

// initPacingRate is bbr_init_pacing_rate_from_rtt: high_gain * cwnd / RTT,
// with a nominal 1 ms before any RTT sample.
func (b *BBR) initPacingRate(srtt time.Duration) {
	rtt := nominalRTT
	if srtt > 0 {
		rtt = srtt
		b.hasSeenRTT = true
	}
	b.pacingRate = pacingRateFor(units.BandwidthFromDelta(b.cwnd, rtt), b.cfg.HighGain)
}

// setPacingRate is bbr_set_pacing_rate: before the pipe is full the rate
// only goes up.
func (b *BBR) setPacingRate(bw units.Bandwidth, gain float64, srtt time.Duration) {
	rate := pacingRateFor(bw, gain)
	if !b.hasSeenRTT && srtt > 0 {
		b.initPacingRate(srtt)
	}
	if b.fullBwReached || rate > b.pacingRate {
		b.pacingRate = rate
	}
}

// bdpSegments is bbr_bdp: ceil(gain * bw * min_rtt) in segments, or the
// initial window before any RTT sample.
func (b *BBR) bdpSegments(bw units.Bandwidth, gain float64) int64 {
	if b.minRTT == 0 {
		return initCwnd
	}
	bdp := gain * float64(bw) / 8 * b.minRTT.Seconds() / float64(b.mss)
	// Round up "to avoid a negative feedback loop"; the epsilon keeps an
	// exact integer from rounding up through floating-point noise.
	return int64(math.Ceil(bdp - 1e-9))
}

// sendQuantum is bbr_tso_segs_goal: about 1 ms of data at the pacing rate,
// at least 1 segment below 1.2 Mbit/s and 2 above, at most 127 segments or
// 64 KB.
func (b *BBR) sendQuantum() int64 {
	bytes := min(int64(b.pacingRate/8)>>pacingShift, gsoMaxBytes)
	return min(max(bytes/int64(b.mss), b.MinTSOSegs()), maxTSOSegs)
}

// MinTSOSegs implements cc.InternallyPaced: bbr_min_tso_segs, one
// segment a send below 1.2 Mbit/s, else two.
func (b *BBR) MinTSOSegs() int64 {
	if b.pacingRate < minTSORate {
		return 1
	}
	return 2
}

// inflight is bbr_inflight: the BDP times gain plus the quantization budget
// (bbr_quantization_budget): 3 send quanta for the end hosts, rounded up to
// an even number of segments for delayed ACKs, plus 2 in the probing phase
// so that probing gets above the BDP even when the BDP is small.
func (b *BBR) inflight(bw units.Bandwidth, gain float64) units.Bytes {
	segs := b.bdpSegments(bw, gain) + 3*b.sendQuantum()
	segs = (segs + 1) &^ 1
	if b.mode == ProbeBW && b.cycleIdx == 0 {
		segs += 2
	}
	return units.Bytes(segs) * b.mss
}

// currentState maps the transport's view to the Linux CA state.
func (b *BBR) currentState(a *cc.Ack) caState {
	switch {
	case b.lossState:
		return caLoss
	case a.InRecovery:
		return caRecovery
	}
	return caOpen
}

// recoverOrRestore is bbr_set_cwnd_to_recover_or_restore: on the first
// round of recovery send one segment per segment delivered (packet
// conservation); after it, grow at most twice as fast; on leaving recovery
// restore the cwnd saved when it began.
func (b *BBR) recoverOrRestore(a *cc.Ack) (units.Bytes, bool) {
	state := b.currentState(a)
	cwnd := b.cwnd
	// "An ACK for P pkts should release at most 2*P packets": first deduct
	// the lost ones.
	if a.LostBytes > 0 {
		cwnd = max(cwnd-a.LostBytes, b.mss)
	}
	switch {
	case state == caRecovery && b.prevState != caRecovery:
		if !b.savedForEpisode { // OnCongestionEvent did not come first
			b.saveCwnd()
			b.savedForEpisode = true
		}
		// "Starting 1st round of Recovery, so do packet conservation."
		b.packetConservation = true
		b.nextRTTDelivered = a.TotalDelivered // start round now
		// "Cut unused cwnd from app behavior, TSQ, or TSO deferral."
		cwnd = a.InFlight + a.AckedBytes
	case b.prevState != caOpen && state == caOpen:
		// "Exiting loss recovery; restore cwnd saved before recovery."
		cwnd = max(cwnd, b.priorCwnd)
		b.packetConservation = false
		b.savedForEpisode = false
	}
	b.prevState = state
	if b.packetConservation {
		return max(cwnd, a.InFlight+a.AckedBytes), true
	}
	return cwnd, false
}

// setCwnd is bbr_set_cwnd.
func (b *BBR) setCwnd(a *cc.Ack, bw units.Bandwidth, gain float64) {
	if a.AckedBytes <= 0 { // "no packet fully ACKed; just apply caps"
		if b.mode == ProbeRTT {
			b.cwnd = min(b.cwnd, cwndMinTarget*b.mss)
		}
		return
	}
	cwnd, conserving := b.recoverOrRestore(a)
	if !conserving {
		target := b.inflight(bw, gain) + b.aggregationCwnd(bw)
		switch {
		case b.fullBwReached:
			// "Slow start up toward target cwnd ... or snap down to
			// target if we're above it."
			cwnd = min(cwnd+a.AckedBytes, target)
		case cwnd < target || a.TotalDelivered < initCwnd*b.mss:
			cwnd += a.AckedBytes
		}
		cwnd = max(cwnd, cwndMinTarget*b.mss)
	}
	b.cwnd = cwnd
	if b.mode == ProbeRTT { // "drain queue, refresh min_rtt"
		b.cwnd = min(b.cwnd, cwndMinTarget*b.mss)
	}
}

// OnCongestionEvent implements cc.Algorithm: BBR keeps its model and only
// remembers the window to restore after recovery (Linux bbr_ssthresh); the
// window itself follows packet conservation from the next ACK.
func (b *BBR) OnCongestionEvent(clock.Time, *cc.LossEvent) {
	if b.lossState && b.cfg.Linux {
		// A timeout's loss state has turned into fast recovery (Linux
		// tcp_enter_recovery from TCP_CA_Loss, as the transport's
		// LinuxRecoveryStart models it, or a recovery starting on the ACK
		// that ends the loss state): Linux's state is Recovery from this
		// ACK on, so its first round conserves packets, and bbr_ssthresh
		// saves the window again (saveCwnd keeps the larger, as the
		// previous state is the loss state's).
		b.lossState = false
		b.savedForEpisode = false
	}
	if !b.savedForEpisode {
		b.saveCwnd()
		b.savedForEpisode = true
	}
}

// OnRecoveryEnd implements cc.Algorithm. The window is restored by the next
// ACK seen outside recovery (as Linux does on the ACK after the state
// change); this only ends a timeout's recovery if the transport reports it
// here.
func (b *BBR) OnRecoveryEnd(clock.Time) {
	b.lossState = false
	b.savedForEpisode = false
}

// OnRetransmissionTimeout implements cc.Algorithm: Linux tcp_enter_loss
// saves the window (unless fast recovery already did) and sets cwnd to what
// is still in flight plus one segment; bbr_set_state(TCP_CA_Loss) then
// resets full-pipe growth tracking, treats the timeout as the end of a
// round and as a loss for the LT estimator. What the transport marked lost
// counts as lost (Linux tp->lost). The
// episode ends when the data outstanding now has been delivered (Linux: the
// ACK passes the snd_nxt of the timeout) or at OnRecoveryEnd.
func (b *BBR) OnRetransmissionTimeout(now clock.Time, inFlight units.Bytes) {
	b.start(now)
	if b.prevState == caOpen && !b.lossState {
		b.saveCwnd()
	}
	b.savedForEpisode = true
	b.lossRecoveryPoint = b.delivered + b.inFlight
	b.lossReported = false
	inFlight = min(max(inFlight, 0), b.inFlight)
	b.lost += b.inFlight - inFlight
	b.inFlight = inFlight
	b.cwnd = inFlight + b.mss
	b.lossState = true
	b.prevState = caLoss
	b.fullBw = 0
	b.roundStart = true // "treat RTO like end of a round"
	if b.cfg.LongTermBw {
		if b.lt.sample(ltSample{now: now, delivered: b.delivered, lost: b.lost, losses: true, roundStart: true}, b.mode == ProbeBW) {
			b.resetProbeBwMode(now)
		}
	}
}

// CongestionWindow implements cc.Algorithm.
func (b *BBR) CongestionWindow() units.Bytes { return b.cwnd }

// PacingRate implements cc.Algorithm.
func (b *BBR) PacingRate() units.Bandwidth { return b.pacingRate }

// Snapshot is BBR's model and state, for tests, probes, plots and learning
// agents (the data-centre paper's observation includes BtlBw, RTprop and
// both gains).
type Snapshot struct {
	// Mode is the state machine's mode.
	Mode Mode
	// BtlBw is the max-filtered bandwidth, bits/s; Bw is the estimate in
	// use (LtBw while the policer estimate is in use).
	BtlBw, Bw units.Bandwidth
	// MinRTT is the RTprop estimate (0 before the first sample), and
	// MinRTTStamp when it was last refreshed.
	MinRTT      time.Duration
	MinRTTStamp clock.Time
	// PacingGain and CwndGain are the current gains.
	PacingGain, CwndGain float64
	// CycleIndex is the PROBE_BW phase, 0..7.
	CycleIndex int
	// Round counts packet-timed round trips.
	Round uint64
	// FullBwReached reports whether STARTUP filled the pipe.
	FullBwReached bool
	// LtBw and LtUseBw describe the policer estimate.
	LtBw    units.Bandwidth
	LtUseBw bool
	// PriorCwnd is the window to restore after recovery or PROBE_RTT.
	PriorCwnd units.Bytes
	// PacketConservation reports the first round of recovery.
	PacketConservation bool
	// TargetCwnd is cwnd_gain*BDP plus the quantization budget, bytes.
	TargetCwnd units.Bytes
}

// Snapshot returns a copy of the state.
func (b *BBR) Snapshot() Snapshot {
	return Snapshot{
		Mode: b.mode, BtlBw: b.bw.Get(), Bw: b.bwEstimate(),
		MinRTT: b.minRTT, MinRTTStamp: b.minRTTStamp,
		PacingGain: b.pacingGain, CwndGain: b.cwndGainNow, CycleIndex: b.cycleIdx,
		Round: b.roundCount, FullBwReached: b.fullBwReached,
		LtBw: b.lt.bw, LtUseBw: b.lt.useBw, PriorCwnd: b.priorCwnd,
		PacketConservation: b.packetConservation,
		TargetCwnd:         b.inflight(b.bwEstimate(), b.cwndGainNow),
	}
}

// State implements cc.Inspector.
func (b *BBR) State() cc.State {
	return cc.State{Cwnd: b.cwnd, Ssthresh: b.ssthresh, PacingRate: b.pacingRate, Mode: b.mode.String()}
}

// SetParam implements cc.Tunable. Every parameter can change while BBR
// runs:
//
//   - bw_window_rounds: the max filter keeps the per-round maxima of the
//     last MaxWindowRounds rounds, so the estimate becomes at once the
//     maximum over the new window of the samples already taken; growing the
//     window brings back older samples still held, shrinking it drops them.
//     With linux = 1 (Linux's filter) the new window applies from the next
//     sample, as when Linux's bbr_bw_rtts changes.
//   - linux: both bandwidth filters are fed with every sample, so the
//     estimate switches at once to the other filter's; the min-RTT rule
//     applies from the next ACK.
//   - min_rtt_window: the current min RTT sample is kept with its time
//     stamp; only its expiry moves. If it is now older than the new window,
//     the next ACK replaces it with that ACK's RTT sample and enters
//     PROBE_RTT (unless restarting from idle or probe_rtt_duration is 0).
//   - probe_rtt_duration: applies from the next time PROBE_RTT arms its
//     timer; a timer already armed keeps its deadline. 0 disables PROBE_RTT.
//   - high_gain, cwnd_gain: the gains of the current mode are updated at
//     the next ACK.
//   - lt_bw: 0 stops policer estimation and stops using lt_bw at once; 1
//     starts sampling at the next loss.
//   - seed: re-seeds the PROBE_BW phase generator (0: no randomness).
//   - iw: only matters before the first ACK.
func (b *BBR) SetParam(name string, v float64) error {
	return cc.SetParamChecked(Spec, name, v, func(v float64) {
		switch name {
		case "iw":
			b.cfg.InitialWindow = int(v)
			if b.delivered == 0 {
				b.cwnd = units.Bytes(v) * b.mss
			}
		case "bw_window_rounds":
			b.cfg.BwWindowRounds = int(v)
			b.bw.SetWindow(int(v))
		case "min_rtt_window":
			b.cfg.MinRTTWindow = seconds(v)
		case "probe_rtt_duration":
			b.cfg.ProbeRTTDuration = seconds(v)
		case "high_gain":
			b.cfg.HighGain = v
		case "cwnd_gain":
			b.cfg.CwndGain = v
		case "extra_acked_gain":
			b.cfg.ExtraAckedGain = v
		case "lt_bw":
			b.cfg.LongTermBw = v != 0
			if v == 0 {
				b.lt = ltBw{}
			}
		case "linux":
			b.cfg.Linux = v != 0
			b.bw.SetLinux(b.cfg.Linux)
		case "seed":
			b.seed(uint64(v))
		}
	})
}

// SendBufferWindows sizes Linux's send buffer for three windows
// (bbr_sndbuf_expand: "Provision 3 * cwnd since BBR may slow-start even
// during recovery").
func (b *BBR) SendBufferWindows() int64 { return 3 }
