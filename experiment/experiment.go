// Package experiment runs a scenario and summarises it: the per-flow,
// per-link and cross-flow measurements that `cclab run` prints, sweeps
// aggregate and tuners optimise.
package experiment

import (
	"math"
	"slices"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/experiment/network"
)

// Result is the summary of one run. Field names are the JSON contract of
// `cclab run --json` and of sweep rows.
type Result struct {
	Scenario    string             `json:"scenario"`
	Seed        uint64             `json:"seed"`
	SimSeconds  float64            `json:"sim_seconds"`
	WallSeconds float64            `json:"wall_seconds"`
	Events      uint64             `json:"events"`
	Flows       []FlowResult       `json:"flows"`
	Background  []BackgroundResult `json:"background,omitempty"`
	Links       []LinkResult       `json:"links"`
	// Jain is Jain's fairness index over the goodputs of the measured
	// flows that started before the run ended; absent when none of them
	// delivered a byte (the index is 0/0 then, not perfect fairness).
	Jain *float64 `json:"jain,omitempty"`
	// RTI is the mean RTT Transition Impact of the measured flows, present
	// when the bottleneck has a schedule.
	RTI *float64 `json:"rti,omitempty"`
	// PeakPackets is the largest number of packets alive at once (memory
	// is proportional to it).
	PeakPackets int `json:"peak_packets"`
}

// FlowResult summarises one measured flow.
type FlowResult struct {
	Name            string   `json:"name"`
	CC              string   `json:"cc"`
	Bytes           int64    `json:"bytes,omitempty"`
	BytesDelivered  int64    `json:"bytes_delivered"`
	GoodputMbps     float64  `json:"goodput_mbps"`
	FCT             *float64 `json:"fct_s"`
	Retransmissions int64    `json:"retransmissions"`
	RTOs            int64    `json:"rtos"`
	// LossProbes and FastRecoveries are the tail loss probes the sender
	// sent and its entries into fast recovery, for cclab's TCP (simulated,
	// or on UDP in the emulator and `cclab send`); kernel TCP counts them
	// per namespace only, in the emulator's kernel_counters
	// (TCPLossProbes; TCPSackRecovery and TCPRenoRecovery).
	LossProbes     *int64 `json:"loss_probes,omitempty"`
	FastRecoveries *int64 `json:"fast_recoveries,omitempty"`
	// RTOsInRecovery and RTOsInLoss are the first timeouts (none since
	// SND.UNA last advanced) that came in fast recovery and in the loss
	// state after an earlier timeout, for cclab's TCP
	// (tcp.Sender.TimeoutStates); kernel TCP counts them per namespace
	// (TCPSackRecoveryFail, TCPLossFailures). The rest of RTOs are the
	// SYN's, backed-off ones and those in the open state.
	RTOsInRecovery *int64 `json:"rtos_in_recovery,omitempty"`
	RTOsInLoss     *int64 `json:"rtos_in_loss,omitempty"`
	// LostRetransmits is the retransmissions found lost in turn, for
	// cclab's TCP (tcp.Sender.LostRetransmits); kernel TCP counts them per
	// namespace (TCPLostRetransmit).
	LostRetransmits *int64 `json:"lost_retransmits,omitempty"`
	// AcksCompressed is the ACKs the receiver's SACK compression saved
	// (transport.sack_compression; tcp.Receiver.AcksCompressed), present
	// only when it compresses; kernel TCP counts them per namespace
	// (the receivers' TCPAckCompressed).
	AcksCompressed *int64 `json:"acks_compressed,omitempty"`
	// ECNReductions is the window reductions the sender made for ECN
	// echoes (Linux's CWR state; tcp.Sender.ECNReductions), present for
	// ECN-capable flows (transport.ecn, or a controller that needs ECN).
	// For the emulator's kernel flows it is the segments sent with CWR,
	// which Linux sets after every window reduction of an ECN connection,
	// a loss's and a timeout's too: the same count only where nothing is
	// lost.
	ECNReductions *int64   `json:"ecn_reductions,omitempty"`
	Drops         int64    `json:"drops"`
	Losses        int64    `json:"losses"`
	RTTMinMs      float64  `json:"rtt_min_ms"`
	RTTMeanMs     float64  `json:"rtt_mean_ms"`
	RTTP50Ms      float64  `json:"rtt_p50_ms"`
	RTTP95Ms      float64  `json:"rtt_p95_ms"`
	RTTMaxMs      float64  `json:"rtt_max_ms"`
	QdelayMeanMs  float64  `json:"qdelay_mean_ms"`
	QdelayP95Ms   float64  `json:"qdelay_p95_ms"`
	RTI           *float64 `json:"rti,omitempty"`
	// RwndLimitedS is how long the sender waited for the receiver's
	// advertised window (Linux's tcpi_rwnd_limited): kernel TCP's in the
	// emulator; in the simulator only with transport.receive_window: linux,
	// since cclab's default receiver advertises no window.
	RwndLimitedS *float64 `json:"rwnd_limited_s,omitempty"`
}

// BackgroundResult summarises one background entry (all its sources and
// flows).
type BackgroundResult struct {
	Name string `json:"name"`
	// OfferedMbps is what UDP sources and flow arrivals offer; absent for
	// tcp entries, whose rate their controllers set.
	OfferedMbps     float64 `json:"offered_mbps,omitempty"`
	SentMbps        float64 `json:"sent_mbps"`
	DeliveredMbps   float64 `json:"delivered_mbps"`
	CapacityShare   float64 `json:"capacity_share"`
	Flows           int     `json:"flows,omitempty"`
	Drops           int64   `json:"drops"`
	BottleneckBytes int64   `json:"bottleneck_bytes"`
}

// LinkResult summarises a link.
type LinkResult struct {
	Name string `json:"name"`
	// Utilization is bytes transmitted over bytes the link could carry.
	Utilization   float64 `json:"utilization"`
	Drops         int64   `json:"drops"`
	Losses        int64   `json:"losses"`
	TxBytes       int64   `json:"tx_bytes"`
	CapacityBytes int64   `json:"capacity_bytes"`
	// BackgroundShare is the fraction of capacity background traffic
	// took.
	BackgroundShare float64 `json:"background_share"`
	// Marks is the packets the queue marked CE instead of dropping
	// (ECN: queue mark_threshold, or ecn with red and codel); absent when
	// the queue does not mark.
	Marks *int64 `json:"ecn_marks,omitempty"`
}

// ECNReductions sums the flows' ECN window reductions; ok is false when
// no flow is ECN-capable (none reports them).
func (r *Result) ECNReductions() (total int64, ok bool) {
	for _, f := range r.Flows {
		if f.ECNReductions != nil {
			total += *f.ECNReductions
			ok = true
		}
	}
	return total, ok
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func round(x float64, digits int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// SetRTT fills the RTT and queueing-delay statistics from a flow's RTT
// samples (none without samples), as the simulator and the emulator
// report them.
func (fr *FlowResult) SetRTT(h *metrics.Hist) {
	if h.Count() == 0 {
		return
	}
	minRTT := h.Min()
	fr.RTTMinMs = round(ms(minRTT), 4)
	fr.RTTMeanMs = round(ms(h.Mean()), 4)
	fr.RTTP50Ms = round(ms(h.Quantile(0.5)), 4)
	fr.RTTP95Ms = round(ms(h.Quantile(0.95)), 4)
	fr.RTTMaxMs = round(ms(h.Max()), 4)
	// Queueing delay is RTT minus the flow's minimum RTT (the papers'
	// definition); subtracting a constant shifts every quantile.
	fr.QdelayMeanMs = round(ms(h.Mean()-minRTT), 4)
	fr.QdelayP95Ms = round(max(0, ms(h.Quantile(0.95)-minRTT)), 4)
}

// Summarize computes the Result of a finished network.
func Summarize(n *network.Network, wall time.Duration) *Result {
	s := n.Scenario()
	now := n.Now()
	r := &Result{
		Scenario:    s.Name,
		Seed:        s.Seed,
		SimSeconds:  round(now.Seconds(), 6),
		WallSeconds: round(wall.Seconds(), 4),
		Events:      n.Sched.Events(),
		PeakPackets: n.Pool.Allocated(),
	}
	var goodputs []float64
	var rtis []float64
	scheduled := len(n.Segments) > 1
	for _, f := range n.Flows {
		if f.Background {
			continue
		}
		fr := flowResult(n, f, now, scheduled)
		if fr.RTI != nil {
			rtis = append(rtis, *fr.RTI)
		}
		if f.Start < now {
			goodputs = append(goodputs, fr.GoodputMbps)
		}
		r.Flows = append(r.Flows, fr)
	}
	r.SetAggregates(goodputs, rtis, scheduled)
	r.Background = backgroundResults(n, now)
	l := n.Bottleneck
	capacity := l.Capacity(now)
	lr := LinkResult{
		Name: "bottleneck", Drops: l.Drops, Losses: l.Losses,
		TxBytes: int64(l.TxBytes), CapacityBytes: int64(capacity),
	}
	if m, ok := l.Marks(); ok {
		lr.Marks = &m
	}
	if capacity > 0 {
		lr.Utilization = round(float64(l.TxBytes)/float64(capacity), 6)
		var bg int64
		for _, b := range r.Background {
			bg += b.BottleneckBytes
		}
		lr.BackgroundShare = round(float64(bg)/float64(capacity), 6)
		for i := range r.Background {
			r.Background[i].CapacityShare = round(float64(r.Background[i].BottleneckBytes)/float64(capacity), 6)
		}
	}
	r.Links = []LinkResult{lr}
	return r
}

func flowResult(n *network.Network, f *network.Flow, now clock.Time, scheduled bool) FlowResult {
	st := f.Sender.Stats()
	fr := FlowResult{
		Name: f.Name, CC: f.CC.String(), Bytes: int64(f.Bytes),
		BytesDelivered:  int64(f.Receiver.DeliveredBytes),
		Retransmissions: st.Retransmissions,
		RTOs:            st.RTOs,
		LossProbes:      &st.TLPs,
		FastRecoveries:  &st.FastRecoveries,
		Drops:           f.Drops,
		Losses:          f.Losses + f.LastHopLosses,
	}
	inRecovery, inLoss := f.Sender.TimeoutStates()
	fr.RTOsInRecovery, fr.RTOsInLoss = &inRecovery, &inLoss
	lostRetx := f.Sender.LostRetransmits()
	fr.LostRetransmits = &lostRetx
	if f.Sender.ECNCapable() {
		e := f.Sender.ECNReductions()
		fr.ECNReductions = &e
	}
	if f.Receiver.CompressesSACKs() {
		c := f.Receiver.AcksCompressed()
		fr.AcksCompressed = &c
	}
	if d, ok := f.Sender.RwndLimited(now); ok {
		s := round(d.Seconds(), 6)
		fr.RwndLimitedS = &s
	}
	end := min(now, f.Stop)
	if f.Done() {
		end = f.Receiver.DoneAt
		fct := round(end.Sub(f.Start).Seconds(), 6)
		fr.FCT = &fct
	}
	if active := end.Sub(f.Start).Seconds(); active > 0 {
		fr.GoodputMbps = round(float64(f.Receiver.DeliveredBytes)*8/active/1e6, 6)
	}
	fr.SetRTT(&f.RTT)
	if scheduled {
		maxs := make([]float64, len(n.Segments))
		noms := make([]float64, len(n.Segments))
		for i := range n.Segments {
			maxs[i] = f.SegMaxRTT[i].Seconds()
			noms[i] = n.NominalRTT(f, i).Seconds()
		}
		if v := metrics.RTI(maxs, noms); !math.IsNaN(v) {
			v = round(v, 6)
			fr.RTI = &v
		}
	}
	return fr
}

func backgroundResults(n *network.Network, now clock.Time) []BackgroundResult {
	var out []BackgroundResult
	idx := map[string]int{}
	get := func(name string) *BackgroundResult {
		i, ok := idx[name]
		if !ok {
			i = len(out)
			idx[name] = i
			out = append(out, BackgroundResult{Name: name})
		}
		return &out[i]
	}
	secs := now.Seconds()
	if secs <= 0 {
		secs = 1
	}
	// Entries appear in scenario order because sources and flows are
	// created in that order.
	for _, s := range n.Sources {
		b := get(s.Group)
		b.OfferedMbps += s.Offered.Mbps()
		b.SentMbps += float64(s.SentBytes) * 8 / secs / 1e6
		b.DeliveredMbps += float64(s.DeliveredBytes) * 8 / secs / 1e6
		b.Drops += s.Drops
		b.BottleneckBytes += int64(s.BottleneckBytes)
	}
	for _, f := range n.Flows {
		if !f.Background {
			continue
		}
		b := get(f.Group)
		b.Flows++
		// TCP background used to add to delivered only: offered and sent
		// read 0 while delivered was 209 Mbit/s.
		b.SentMbps += float64(f.Sender.Stats().BytesSent) * 8 / secs / 1e6
		b.DeliveredMbps += float64(f.Receiver.DeliveredBytes) * 8 / secs / 1e6
		b.Drops += f.Drops
		b.BottleneckBytes += int64(f.BottleneckBytes)
	}
	for group, rate := range n.ArrivalsOffered() {
		get(group).OfferedMbps += rate.Mbps()
	}
	for i := range out {
		out[i].OfferedMbps = round(out[i].OfferedMbps, 6)
		out[i].SentMbps = round(out[i].SentMbps, 6)
		out[i].DeliveredMbps = round(out[i].DeliveredMbps, 6)
	}
	return out
}

// JainOrZero is Jain's index, or 0 when it is undefined (no measured flow
// delivered a byte): 0 is below every defined index (at least 1/n), so
// TotalGoodputMbps is the measured flows' delivered bytes over the whole
// run, Mbit/s: at most the link's rate, where a sum of the flows' own
// goodputs (each over its flow's active time) is not when flows start
// late. A run of no simulated time delivered nothing (0).
func (r *Result) TotalGoodputMbps() float64 {
	if r.SimSeconds <= 0 {
		return 0
	}
	var b int64
	for _, f := range r.Flows {
		b += f.BytesDelivered
	}
	return float64(b) * 8 / r.SimSeconds / 1e6
}

// tables and figures that need a number show the case apart.
func (r *Result) JainOrZero() float64 {
	if r.Jain == nil {
		return 0
	}
	return *r.Jain
}

// SetAggregates sets the run's Jain index over the measured flows' goodputs
// (absent when no flow delivered a byte) and, for a scheduled link, the
// mean of the flows' RTIs. The simulator and the emulator summarise through
// it.
func (r *Result) SetAggregates(goodputs, rtis []float64, scheduled bool) {
	if slices.ContainsFunc(goodputs, func(g float64) bool { return g > 0 }) {
		j := round(metrics.Jain(goodputs), 6)
		r.Jain = &j
	}
	if scheduled && len(rtis) > 0 {
		var m float64
		for _, x := range rtis {
			m += x
		}
		v := round(m/float64(len(rtis)), 6)
		r.RTI = &v
	}
}
