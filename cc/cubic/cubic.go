// Package cubic implements CUBIC congestion control as specified by RFC 9438,
// checked against Linux net/ipv4/tcp_cubic.c, with Linux's hybrid slow start
// (HyStart: ACK-train and delay-increase detection) on by default.
//
// The window function lives in curve.go as pure functions; this file is the
// window state machine: slow start (Reno's, reused from cc/newreno), the
// congestion-avoidance epoch with its Reno-friendly estimate W_est, and the
// multiplicative decrease with fast convergence.
//
// Windows are bytes; the RFC's segment quantities are bytes/MSS. Growth in
// the concave and convex regions follows RFC 9438 §4.4-4.5 ("cwnd MUST be
// incremented by (target - cwnd)/cwnd for each received new ACK") counted
// per segment acknowledged, as Linux does (tcp_cong_avoid_ai(tp, ca->cnt,
// acked)) and as §4.3 does for W_est with segments_acked; counting per ACK
// would halve growth behind a delayed-ACK receiver. The fractional
// increments accumulate and cwnd moves in whole segments, so it lags the
// RFC's fractional window by less than one MSS. (Reno's byte accumulator,
// which Linux also uses for ca->cnt, is not reused for this: credit earned
// at one rate would be spent at the next, steeper one, running ahead of the
// curve by up to three segments when the target jumps between rounds.)
package cubic

import (
	"math"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/newreno"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Spec registers "cubic".
var Spec = cc.Spec{
	Name: "cubic",
	Doc:  "CUBIC (RFC 9438) with Linux HyStart, checked against Linux tcp_cubic.c",
	Params: []cc.ParamSpec{
		{Name: "iw", Default: 10, Min: 1, Max: 1000, Integer: true, Unit: "segments", Doc: "initial window (RFC 6928: 10)"},
		{Name: "beta", Default: 0.7, Min: 0.05, Max: 0.95, Doc: "multiplicative decrease factor beta_cubic (RFC 9438 §4.6: 0.7)"},
		{Name: "c", Default: 0.4, Min: 0.01, Max: 10, Unit: "segments/s^3", Doc: "cubic scaling constant C (RFC 9438 §5.1: 0.4)"},
		{Name: "fast_convergence", Default: 1, Min: 0, Max: 1, Integer: true, Doc: "1 = lower W_max when a flow loses below its previous plateau (RFC 9438 §4.7)"},
		{Name: "reno_friendly", Default: 1, Min: 0, Max: 1, Integer: true, Doc: "1 = keep cwnd at least the Reno estimate W_est (RFC 9438 §4.3; Linux tcp_friendliness)"},
		{Name: "hystart", Default: 1, Min: 0, Max: 1, Integer: true, Doc: "1 = Linux hybrid slow start; 0 = slow start until loss"},
		{Name: "hystart_detect", Default: 3, Min: 1, Max: 3, Integer: true, Doc: "HyStart detectors: 1 = ACK train, 2 = delay increase, 3 = both"},
		{Name: "hystart_low_window", Default: 16, Min: 2, Max: 1 << 20, Integer: true, Unit: "segments", Doc: "HyStart is inactive below this window (Linux: 16)"},
		{Name: "hystart_ack_delta", Default: 0.002, Min: 0, Max: 0.1, Unit: "s", Doc: "maximum ACK spacing within an ACK train (Linux: 2 ms)"},
		{Name: "linux", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1 = Linux tcp_cubic.c's arithmetic (whole segments, ca->cnt, W_est by beta_scale; linux.go); 0 = RFC 9438's fractional window"},
		{Name: "hz", Default: 250, Min: 100, Max: 1000, Integer: true, Unit: "1/s", Doc: "with linux = 1: the kernel's CONFIG_HZ, the tick of CUBIC's clock (250 on Debian)"},
	},
	New: func(c cc.Config) (cc.Algorithm, error) { return New(c.MSS, c.Params), nil },
}

func init() { cc.Register(Spec) }

var (
	_ cc.Algorithm = (*Cubic)(nil)
	_ cc.Inspector = (*Cubic)(nil)
	_ cc.Tunable   = (*Cubic)(nil)
)

// Cubic is the CUBIC controller. Create it with New or through cc.New.
type Cubic struct {
	mss  units.Bytes
	reno *newreno.Reno // cwnd, ssthresh, slow start and the byte accumulator

	beta            float64
	c               float64 // segments/s^3
	fastConvergence bool
	renoFriendly    bool
	hystartOn       bool
	hs              hystart
	linux           bool
	lx              linuxCubic // with linux: Linux's state, used instead of the RFC's below

	// RFC 9438 §4.1.2 variables, windows in segments.
	wMax       float64 // 0 until the first congestion event, and after a timeout
	cwndPrior  float64
	cwndEpoch  float64
	inEpoch    bool       // a congestion-avoidance stage is under way
	epochStart clock.Time // t_epoch
	curve      Curve
	credit     float64 // growth earned but not yet applied, segments (< 1)
	wEst       float64
	alpha      float64 // alpha_cubic, raised to 1 once W_est >= cwnd_prior

	ssthreshSet bool // ssthresh is no longer the initial "infinite"
	inRecovery  bool
	delayMin    time.Duration // Linux ca->delay_min, for HyStart
	lastSend    clock.Time
	sent        bool
	acked       bool // an ACK has been processed ("iw" no longer applies)
}

// New returns a CUBIC controller; params holds every parameter of Spec
// (use Spec.Resolve to fill defaults).
func New(mss units.Bytes, params map[string]float64) *Cubic {
	beta := params["beta"]
	cu := &Cubic{
		mss:             mss,
		reno:            newreno.New(mss, map[string]float64{"iw": params["iw"], "beta": beta}),
		beta:            beta,
		c:               params["c"],
		fastConvergence: params["fast_convergence"] != 0,
		renoFriendly:    params["reno_friendly"] != 0,
		hystartOn:       params["hystart"] != 0,
		hs: hystart{
			detect:    int(params["hystart_detect"]),
			lowWindow: units.Bytes(params["hystart_low_window"]) * mss,
			ackDelta:  time.Duration(params["hystart_ack_delta"] * float64(time.Second)),
		},
	}
	cu.alpha = AlphaCubic(beta)
	cu.linux = params["linux"] != 0
	cu.lx = newLinuxCubic(beta, cu.c, int64(params["hz"]))
	return cu
}

func (cu *Cubic) segments(b units.Bytes) float64 { return float64(b) / float64(cu.mss) }

func (cu *Cubic) bytes(seg float64) units.Bytes { return units.Bytes(seg * float64(cu.mss)) }

func (cu *Cubic) inSlowStart() bool { return cu.reno.CongestionWindow() < cu.reno.Ssthresh() }

// OnPacketSent implements cc.Algorithm. A send with nothing else in flight
// ends an idle period, which must not count in t (RFC 9438 §5.8: "t ... MUST
// NOT include periods during which cwnd has not been updated due to
// application-limited behavior"): as Linux cubictcp_cwnd_event does on
// CA_EVENT_TX_START, the epoch is shifted by the time since the last send.
func (cu *Cubic) OnPacketSent(now clock.Time, bytes, inFlight units.Bytes, _ bool) {
	if inFlight <= bytes && cu.inEpoch && cu.sent {
		if idle := now.Sub(cu.lastSend); idle > 0 {
			cu.epochStart = min(cu.epochStart.Add(idle), now)
		}
	}
	if l := &cu.lx; inFlight <= bytes && l.inEpoch && cu.sent {
		// cubictcp_cwnd_event(CA_EVENT_TX_START), in jiffies.
		now := l.jiffies(now)
		if delta := now - l.jiffies(cu.lastSend); delta > 0 {
			l.epochStart = min(l.epochStart+delta, now)
		}
	}
	cu.lastSend = now
	cu.sent = true
}

// OnAck implements cc.Algorithm.
func (cu *Cubic) OnAck(now clock.Time, a *cc.Ack) {
	cu.acked = true
	// Linux runs pkts_acked (delay bookkeeping, HyStart) before
	// cong_avoid, and in every congestion state.
	if a.RTT > 0 {
		cu.onRTTSample(now, a)
	}
	// No growth in fast recovery (the window was set when it began). The
	// transport also reports InRecovery while it recovers from a timeout;
	// Linux keeps calling cong_avoid in TCP_CA_Loss, so slow start runs
	// then, from the one-segment window.
	if cu.inRecovery || !a.CwndLimited || a.HoldWindow {
		return
	}
	if cu.linux {
		cu.onAckLinux(now, a.AckedBytes)
		return
	}
	acked := a.AckedBytes
	if cu.inSlowStart() {
		acked = cu.reno.SlowStart(acked)
		if acked == 0 {
			return
		}
	}
	cu.congestionAvoidance(now, acked, a.SRTT)
}

// onRTTSample is Linux cubictcp_acked: track the minimum delay and run
// HyStart while in slow start.
func (cu *Cubic) onRTTSample(now clock.Time, a *cc.Ack) {
	// Linux: "Discard delay samples right after fast recovery" (for 1 s
	// after the epoch starts; with linux: 1 the epoch is bictcp_update's,
	// in jiffies).
	if cu.linux {
		if l := &cu.lx; l.inEpoch && l.jiffies(now)-l.epochStart < l.hz {
			return
		}
	} else if cu.inEpoch && now.Sub(cu.epochStart) < time.Second {
		return
	}
	if cu.delayMin == 0 || a.RTT < cu.delayMin {
		cu.delayMin = a.RTT
	}
	if !cu.hystartOn || cu.hs.found {
		return
	}
	cwnd := cu.reno.CongestionWindow()
	if cu.linux && cu.inRecovery {
		// Linux's snd_cwnd in fast recovery is PRR's, what is in flight
		// plus its allowance (tcp_cwnd_reduction), which is what the
		// transport had in flight before this ACK; mostly below
		// ssthresh, so tcp_in_slow_start holds and cubictcp_acked runs
		// HyStart in recovery too. A rise in delay there sets ssthresh
		// to that reduced window, a second cut within one episode (the
		// kernel's CUBIC on the cellular trace, docs/fidelity.md).
		cwnd = min(cwnd, a.PriorInFlight)
	}
	if cwnd >= cu.reno.Ssthresh() {
		return
	}
	if cu.hs.update(now, a.RTT, cu.delayMin, cwnd, a.Rate.PriorDelivered, a.TotalDelivered) {
		// Linux: tp->snd_ssthresh = tcp_snd_cwnd(tp). RFC 9438 §4.10:
		// leaving slow start without loss sets cwnd_prior = cwnd.
		cu.reno.SetSsthresh(cwnd)
		cu.ssthreshSet = true
		cu.cwndPrior = cu.segments(cwnd)
		if cu.inRecovery {
			// Recovery ends at the new threshold (tcp_end_cwnd_reduction).
			cu.reno.SetCwnd(cwnd)
		}
	}
}

// congestionAvoidance applies RFC 9438 §4.2-4.5 for acked bytes.
func (cu *Cubic) congestionAvoidance(now clock.Time, acked units.Bytes, srtt time.Duration) {
	cwnd := cu.segments(cu.reno.CongestionWindow())
	if !cu.inEpoch {
		cu.startEpoch(now, cwnd)
	}
	t := now.Sub(cu.epochStart)
	if cu.renoFriendly {
		// RFC 9438 §4.3 eq. 4: W_est += alpha_cubic * segments_acked/cwnd.
		cu.wEst += cu.alpha * cu.segments(acked) / cwnd
		// "Once W_est has grown to reach the cwnd at the time of most
		// recently setting ssthresh ... the sender SHOULD set alpha_cubic
		// to 1."
		if cu.wEst >= cu.cwndPrior {
			cu.alpha = 1
		}
		// "If W_cubic(t) is less than W_est ... cwnd SHOULD be set to
		// W_est at each reception of a new ACK." We never lower cwnd on an
		// ACK: cwnd may already exceed W_est because the cubic target
		// looks one RTT ahead.
		if cu.curve.Window(t) < cu.wEst {
			if w := cu.bytes(cu.wEst); w > cu.reno.CongestionWindow() {
				cu.reno.SetCwnd(w)
				cu.credit = 0
			}
			return
		}
	}
	// RFC 9438 §4.2: the target is W_cubic one (smoothed) RTT ahead,
	// bounded to [cwnd, 1.5*cwnd]. Linux looks ahead by the minimum delay
	// instead of SRTT.
	target := Target(cu.curve.Window(t+srtt), cwnd)
	if target <= cwnd {
		return
	}
	// §4.4-4.5: cwnd += (target-cwnd)/cwnd per segment acknowledged. The
	// fractions accumulate in credit and cwnd moves by whole segments. At
	// the 1.5*cwnd bound that is one MSS per two segments acknowledged,
	// Linux's "ca->cnt >= 2".
	cu.credit += (target - cwnd) / cwnd * cu.segments(acked)
	if cu.credit >= 1 {
		n := math.Floor(cu.credit)
		cu.credit -= n
		cu.reno.SetCwnd(cu.reno.CongestionWindow() + units.Bytes(n)*cu.mss)
	}
}

// startEpoch begins a congestion-avoidance stage (RFC 9438 §4.2: t_epoch,
// cwnd_epoch, K; §4.3: W_est = cwnd_epoch).
func (cu *Cubic) startEpoch(now clock.Time, cwnd float64) {
	cu.inEpoch = true
	cu.epochStart = now
	cu.cwndEpoch = cwnd
	if cu.cwndPrior == 0 {
		// The first slow start ended without loss and without HyStart
		// (cwnd reached an ssthresh set from outside): treat it as
		// §4.10's exit without loss.
		cu.cwndPrior = cwnd
	}
	// With no congestion event to recover from (wMax == 0: first stage
	// after slow start or after a timeout, §4.8 and §4.10), NewCurve puts
	// the plateau at cwnd_epoch with K = 0.
	cu.curve = NewCurve(cu.c, cu.wMax, cwnd)
	cu.wEst = cwnd
	cu.credit = 0
	cu.alpha = AlphaCubic(cu.beta)
	if cu.wEst >= cu.cwndPrior {
		cu.alpha = 1
	}
}

// OnCongestionEvent implements cc.Algorithm: RFC 9438 §4.7 then §4.6.
// ssthresh is beta_cubic*cwnd, at least 2 segments, rather than
// beta_cubic*flight_size: §4.6 allows cwnd when growth is limited to
// cwnd-limited periods (cc.Ack.CwndLimited), and Linux
// cubictcp_recalc_ssthresh uses cwnd.
//
// An ECN echo reduces as a loss does (Linux cubictcp_recalc_ssthresh
// serves both); a loss during that reduction makes no second one
// (cc.LossEvent.InCWR).
func (cu *Cubic) OnCongestionEvent(now clock.Time, ev *cc.LossEvent) {
	if ev != nil && ev.InCWR {
		cu.inRecovery = true
		return
	}
	cwnd := cu.segments(cu.reno.CongestionWindow())
	cu.wMax = WMaxAfterLoss(cwnd, cu.wMax, cu.beta, cu.fastConvergence)
	cu.cwndPrior = cwnd
	if cu.linux {
		cu.reno.OnCongestionEvent(now, ev)
		cu.reduceLinux(uint32(cwnd))
	} else {
		cu.reno.OnCongestionEvent(now, ev) // ssthresh = cwnd = max(beta*cwnd, 2*MSS)
	}
	cu.ssthreshSet = true
	cu.inEpoch = false // Linux: ca->epoch_start = 0
	cu.inRecovery = true
}

// OnRecoveryEnd implements cc.Algorithm. The window was set to ssthresh when
// recovery began and did not grow during it; the next congestion-avoidance
// ACK starts a new epoch.
func (cu *Cubic) OnRecoveryEnd(clock.Time) { cu.inRecovery = false }

// OnRetransmissionTimeout implements cc.Algorithm: RFC 9438 §4.8, "CUBIC
// follows Reno to reduce cwnd [to one segment] but sets ssthresh using
// beta_cubic". The first stage after the timeout uses K = 0 and W_max =
// cwnd_epoch, which is what Linux gets from bictcp_reset on TCP_CA_Loss; the
// reset also restarts HyStart. A timeout during fast recovery keeps the
// ssthresh that recovery set, as Linux tcp_enter_loss does while the
// recovery point is outstanding.
func (cu *Cubic) OnRetransmissionTimeout(now clock.Time, inFlight units.Bytes) {
	cwnd := cu.reno.CongestionWindow()
	ss := cu.reno.Ssthresh()
	cu.reno.OnRetransmissionTimeout(now, inFlight)
	switch {
	case cu.inRecovery:
		cu.reno.SetSsthresh(ss)
	case cwnd > cu.mss:
		cu.cwndPrior = cu.segments(cwnd)
		if cu.linux {
			// tcp_enter_loss: snd_ssthresh = ca->ssthresh(sk).
			cu.reno.SetSsthresh(units.Bytes(cu.lx.ssthresh(uint32(cwnd/cu.mss), cu.fastConvergence)) * cu.mss)
		}
	}
	cu.lx.reset() // bictcp_reset on entering the loss state; snd_cwnd_cnt = 0
	cu.ssthreshSet = true
	cu.wMax = 0
	cu.inEpoch = false
	cu.inRecovery = false
	cu.delayMin = 0
	cu.hs.reset()
}

// CongestionWindow implements cc.Algorithm.
func (cu *Cubic) CongestionWindow() units.Bytes { return cu.reno.CongestionWindow() }

// PacingRate implements cc.Algorithm: CUBIC does not pace.
func (cu *Cubic) PacingRate() units.Bandwidth { return 0 }

// Ssthresh returns the slow-start threshold, bytes (very large before the
// first reduction).
func (cu *Cubic) Ssthresh() units.Bytes { return cu.reno.Ssthresh() }

// Snapshot is CUBIC's internal state, for tests, probes and plots. Windows
// are in segments. It describes the RFC 9438 arithmetic; with the "linux"
// parameter set, only WMax, CwndPrior, HystartFound and DelayMin follow the
// connection.
type Snapshot struct {
	// WMax is the plateau of the current curve's predecessor (RFC 9438
	// W_max); 0 before the first congestion event and after a timeout.
	WMax float64
	// CwndPrior is cwnd when ssthresh was last set, segments.
	CwndPrior float64
	// K is the current curve's time to plateau.
	K time.Duration
	// EpochStart is t_epoch; InEpoch reports whether a stage is under way.
	EpochStart clock.Time
	InEpoch    bool
	// WEst is the Reno-friendly estimate and Alpha its current additive
	// increase, segments per RTT.
	WEst, Alpha float64
	// CurveWMax is the current curve's plateau (W_max, or cwnd_epoch when
	// K = 0).
	CurveWMax float64
	// HystartFound reports whether HyStart ended slow start.
	HystartFound bool
	// DelayMin is the minimum RTT HyStart measures against.
	DelayMin time.Duration
}

// Snapshot returns a copy of the internal state.
func (cu *Cubic) Snapshot() Snapshot {
	return Snapshot{
		WMax: cu.wMax, CwndPrior: cu.cwndPrior, K: cu.curve.K,
		EpochStart: cu.epochStart, InEpoch: cu.inEpoch,
		WEst: cu.wEst, Alpha: cu.alpha, CurveWMax: cu.curve.WMax,
		HystartFound: cu.hs.found, DelayMin: cu.delayMin,
	}
}

// State implements cc.Inspector.
func (cu *Cubic) State() cc.State {
	st := cc.State{Cwnd: cu.reno.CongestionWindow(), Mode: "congestion_avoidance"}
	if cu.ssthreshSet {
		st.Ssthresh = cu.reno.Ssthresh()
	}
	switch {
	case cu.inRecovery:
		st.Mode = "recovery"
	case cu.inSlowStart():
		st.Mode = "slow_start"
	}
	return st
}

// SetParam implements cc.Tunable. A new beta applies to the next reduction
// and to the Reno-friendly slope from now on; a new C re-derives K for the
// current stage (same W_max and cwnd_epoch) so the curve stays continuous
// in its inputs; "iw" only matters before the first ACK; the HyStart
// settings apply from the next ACK.
func (cu *Cubic) SetParam(name string, v float64) error {
	return cc.SetParamChecked(Spec, name, v, func(v float64) {
		switch name {
		case "iw":
			if !cu.acked { // newreno's SetParam resets cwnd
				_ = cu.reno.SetParam("iw", v)
			}
		case "beta":
			cu.beta = v
			cu.lx.setBeta(v)
			_ = cu.reno.SetParam("beta", v) // same range as newreno's
			if cu.alpha != 1 {
				cu.alpha = AlphaCubic(v)
			}
		case "c":
			cu.c = v
			cu.lx.setC(v)
			if cu.inEpoch {
				// W_max only changes at congestion events, which end the
				// stage, so it still belongs to this stage.
				cu.curve = NewCurve(v, cu.wMax, cu.cwndEpoch)
			}
		case "fast_convergence":
			cu.fastConvergence = v != 0
		case "reno_friendly":
			cu.renoFriendly = v != 0
		case "hystart":
			cu.hystartOn = v != 0
		case "hystart_detect":
			cu.hs.detect = int(v)
		case "hystart_low_window":
			cu.hs.lowWindow = units.Bytes(v) * cu.mss
		case "hystart_ack_delta":
			cu.hs.ackDelta = time.Duration(v * float64(time.Second))
		case "linux":
			cu.linux = v != 0
		case "hz":
			cu.lx.hz = int64(v)
		}
	})
}
