package emu

import (
	"math"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/netsim/traffic"
)

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func round(x float64, digits int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// summarize fills the simulator's summary from the emulator's measurements.
// Definitions follow experiment.Summarize: goodput over the flow's active
// time, FCT from start to the receiver having every byte, RTT statistics
// over every sample (here measured at the emulator, per ACK), queueing
// delay as RTT minus the flow's minimum RTT, RTI from each schedule
// period's largest RTT. Retransmissions and RTOs are the kernel's
// tcpi_total_retrans and tcpi_total_rto.
func (e *emulation) summarize(now clock.Time, wall time.Duration, inFlight int64) *Result {
	f := e.f
	r := &Result{Mode: "emu", Kernel: KernelRelease()}
	r.Scenario = e.s.Name
	r.Seed = e.s.Seed
	r.SimSeconds = round(now.Seconds(), 6)
	r.WallSeconds = round(wall.Seconds(), 4)
	r.Events = f.S.Events()
	r.PeakPackets = f.Pool.Allocated()
	scheduled := len(e.segments) > 1
	var goodputs, rtis []float64
	for _, fl := range e.flows {
		fr := e.flowResult(fl, now, scheduled)
		if fr.RTI != nil {
			rtis = append(rtis, *fr.RTI)
		}
		goodputs = append(goodputs, fr.GoodputMbps)
		r.Flows = append(r.Flows, fr)
	}
	r.SetAggregates(goodputs, rtis, scheduled)
	r.Background = e.backgroundResults(now)
	l := f.Link
	capacity := l.Capacity(now)
	lr := experiment.LinkResult{
		Name: "bottleneck", Drops: l.Drops, Losses: l.Losses,
		TxBytes: int64(l.TxBytes), CapacityBytes: int64(capacity),
	}
	// The queue's CE marks (ECN), as the simulator counts them; the
	// forwarder wrote each into its packet's IP header as it left.
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
	r.Links = []experiment.LinkResult{lr}

	a := &r.Emulator
	var soj metrics.Hist
	for _, p := range f.Paths {
		a.Packets += p.Seen
		a.Delivered += p.Delivered
		a.QueueDrops += p.Dropped
		a.CEMarked += p.Marked
		a.Lost += p.Lost + p.LastHopLost
		a.Reverse += p.Reverse
		soj.Merge(&p.Sojourn)
	}
	a.InFlight = inFlight
	a.Other, a.WriteErrors = f.Other, f.WriteErrors
	if soj.Count() > 0 {
		a.SojournMeanMs = round(ms(soj.Mean()), 4)
		a.SojournP95Ms = round(ms(soj.Quantile(0.95)), 4)
	}
	if f.Lateness.Count() > 0 {
		a.LatenessP50Us = round(float64(f.Lateness.Quantile(0.5))/1e3, 1)
		a.LatenessP99Us = round(float64(f.Lateness.Quantile(0.99))/1e3, 1)
		a.LatenessMaxUs = round(float64(f.Lateness.Max())/1e3, 1)
	}
	a.Realtime = f.Realtime
	return r
}

func (e *emulation) flowResult(fl *flow, now clock.Time, scheduled bool) experiment.FlowResult {
	fl.mu.Lock()
	st, doneAt := fl.stats, fl.doneAt
	fl.mu.Unlock()
	p := fl.path
	fr := experiment.FlowResult{
		Name: fl.name, CC: fl.cc.String(), Bytes: fl.bytes,
		BytesDelivered:  st.Received,
		Retransmissions: st.Retransmissions,
		RTOs:            st.RTOs,
		LossProbes:      st.LossProbes,
		FastRecoveries:  st.FastRecoveries,
		RTOsInRecovery:  st.RTOsInRecovery,
		RTOsInLoss:      st.RTOsInLoss,
		LostRetransmits: st.LostRetransmits,
		Drops:           p.Dropped,
		Losses:          p.Lost + p.LastHopLost,
	}
	if st.ECNReductions != nil {
		fr.ECNReductions = st.ECNReductions
	} else if fl.ecn {
		// The kernel's window reductions for ECN echoes, as the
		// segments with CWR the forwarder saw.
		n := p.CWR
		fr.ECNReductions = &n
	}
	if st.RwndLimited != nil {
		s := round(st.RwndLimited.Seconds(), 6)
		fr.RwndLimitedS = &s
	}
	if fl.bytes > 0 {
		fr.BytesDelivered = min(fr.BytesDelivered, fl.bytes)
	}
	end := min(now, fl.stop)
	if doneAt != clock.Never {
		end = doneAt
		fct := round(end.Sub(fl.start).Seconds(), 6)
		fr.FCT = &fct
	}
	if active := end.Sub(fl.start).Seconds(); active > 0 {
		fr.GoodputMbps = round(float64(fr.BytesDelivered)*8/active/1e6, 6)
	}
	fr.SetRTT(&p.RTT)
	if scheduled {
		maxs := make([]float64, len(e.segments))
		noms := make([]float64, len(e.segments))
		for i, sg := range e.segments {
			maxs[i] = fl.segMax[i].Seconds()
			noms[i] = (sg.baseRTT + 2*p.ExtraDelay).Seconds()
		}
		if v := metrics.RTI(maxs, noms); !math.IsNaN(v) {
			v = round(v, 6)
			fr.RTI = &v
		}
	}
	return fr
}

func (e *emulation) backgroundResults(now clock.Time) []experiment.BackgroundResult {
	var out []experiment.BackgroundResult
	idx := map[string]int{}
	get := func(name string) *experiment.BackgroundResult {
		i, ok := idx[name]
		if !ok {
			i = len(out)
			idx[name] = i
			out = append(out, experiment.BackgroundResult{Name: name})
		}
		return &out[i]
	}
	secs := now.Seconds()
	if secs <= 0 {
		secs = 1
	}
	for _, s := range e.sources {
		b := get(s.group)
		b.OfferedMbps += s.offered.Mbps()
		b.SentMbps += float64(s.udp.Bytes) * 8 / secs / 1e6
		b.DeliveredMbps += float64(s.sink.Bytes()) * 8 / secs / 1e6
		b.Drops += s.path.Dropped
		b.BottleneckBytes += s.path.BottleneckBytes
	}
	for _, sp := range e.spawners {
		b := get(sp.group)
		b.Flows += sp.count
		// What the connections sent, as the simulator's senders count
		// it: payload, retransmissions included (tcpi_bytes_sent). A
		// connection whose TCP_INFO could not be read at its stop
		// counts nothing there, so never less than what was received.
		sent := max(sp.sent.Load(), sp.sink.Received())
		b.SentMbps += float64(sent) * 8 / secs / 1e6
		b.DeliveredMbps += float64(sp.sink.Received()) * 8 / secs / 1e6
		// Flow arrivals offer their mean size per mean gap, as the
		// simulator computes it (network.ArrivalsOffered).
		b.OfferedMbps += arrivalsOffered(sp.b.Type, float64(sp.b.Size.V), sp.sizes, sp.gap)
		b.Drops += sp.path.Dropped
		b.BottleneckBytes += sp.path.BottleneckBytes
	}
	for i := range out {
		out[i].OfferedMbps = round(out[i].OfferedMbps, 6)
		out[i].SentMbps = round(out[i].SentMbps, 6)
		out[i].DeliveredMbps = round(out[i].DeliveredMbps, 6)
	}
	return out
}

// arrivalsOffered is the offered rate in Mbit/s of a background entry of
// type arrivals with mean flow size from sizes (or size without one) and
// mean gap: what network.ArrivalsOffered reports for the simulator; 0
// for other types.
func arrivalsOffered(typ string, size float64, sizes *traffic.SizeDist, gap time.Duration) float64 {
	if typ != "arrivals" || gap <= 0 {
		return 0
	}
	mean := size
	if sizes != nil {
		mean = sizes.Mean()
	}
	return mean * 8 / gap.Seconds() / 1e6
}
