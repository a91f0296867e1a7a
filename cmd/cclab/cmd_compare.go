//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
)

func init() {
	register(&command{name: "compare", summary: compareSummary, args: "SCENARIO", help: "The difference column is (simulator - emulator) / emulator: the simulator's relative difference from the kernel (- where only the emulator's value is 0). Scenario fields the emulator's kernel TCP does not apply (transport.recv_window, min_rto, ...) are printed as warnings before the run and listed under the table.", run: runCompare})
}

// comparison is `cclab compare --json`'s output.
type comparison struct {
	Scenario string             `json:"scenario"`
	Sim      *experiment.Result `json:"sim"`
	Emu      *emu.Result        `json:"emu"`
	// Diff holds, per measured flow and metric, the simulator's relative
	// difference from the emulator: (sim - emu) / emu.
	Diff []flowDiff `json:"diff"`
	// RTIDiff is the same for the scenario's RTT Transition Impact.
	RTIDiff *float64 `json:"rti_diff,omitempty"`
	// Notes say what about the comparison's set-up is known to separate
	// the two sides (timingNote).
	Notes []string `json:"notes,omitempty"`
	// Unapplied lists, as "path: why", the scenario's fields that the
	// simulator follows and the emulator's kernel path does not apply
	// (emu.Unapplied): differences by construction.
	Unapplied []string `json:"unapplied,omitempty"`
}

type flowDiff struct {
	Flow    string              `json:"flow"`
	Metrics map[string]*float64 `json:"metrics"`
}

// rel returns (sim-emu)/emu, nil when emu is 0.
func rel(sim, em float64) *float64 {
	if em == 0 {
		if sim == 0 {
			z := 0.0
			return &z
		}
		return nil
	}
	v := round6((sim - em) / em)
	return &v
}

func round6(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 6, 64), 64)
	return v
}

// compareMetrics lists the metrics compare puts side by side.
var compareMetrics = []struct {
	name string
	get  func(f *experiment.FlowResult) (float64, bool)
}{
	{"goodput_mbps", func(f *experiment.FlowResult) (float64, bool) { return f.GoodputMbps, true }},
	{"fct_s", func(f *experiment.FlowResult) (float64, bool) {
		if f.FCT == nil {
			return 0, false
		}
		return *f.FCT, true
	}},
	{"retransmissions", func(f *experiment.FlowResult) (float64, bool) { return float64(f.Retransmissions), true }},
	{"rtos", func(f *experiment.FlowResult) (float64, bool) { return float64(f.RTOs), true }},
	{"rtt_mean_ms", func(f *experiment.FlowResult) (float64, bool) { return f.RTTMeanMs, true }},
	{"qdelay_p95_ms", func(f *experiment.FlowResult) (float64, bool) { return f.QdelayP95Ms, true }},
	{"rwnd_limited_s", func(f *experiment.FlowResult) (float64, bool) {
		if f.RwndLimitedS == nil {
			return 0, false
		}
		return *f.RwndLimitedS, true
	}},
	{"rti", func(f *experiment.FlowResult) (float64, bool) {
		if f.RTI == nil {
			return 0, false
		}
		return *f.RTI, true
	}},
}

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", stderr)
	ccName := fs.String("cc", "", "override every flow's congestion controller (one the kernel has; reno is newreno)")
	seed := fs.Int64("seed", -1, "override the scenario's seed")
	var sets stringList
	fs.Var(&sets, "set", "override a field: dotted.path=value (repeatable)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	var simSets stringList
	fs.Var(&simSets, "sim-set", "override a field in the simulator's run only: dotted.path=value (repeatable), e.g. flows.0.cc.linux=1, a controller parameter the kernel's controllers do not take")
	out := fs.String("out", "", "write comparison.json, each side's outputs (DIR/sim as cclab run --out, DIR/emu as cclab emu --out), windows.png/svg: both sides' congestion windows and RTT over time, and, with BBR flows, bbr_estimates.png/svg: both sides' BtlBw and RTprop over time")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one scenario file, got %d arguments (usage: cclab compare SCENARIO.yaml [flags])", len(pos))
	}
	s, err := loadScenario(pos[0], emuCC(*ccName), *seed, sets)
	if err != nil {
		return err
	}
	if err := emu.Supported(s, false); err != nil {
		return err
	}
	if *out != "" && s.Sample.V == 0 {
		s.Sample = scenario.Dur(report.SeriesSample)
	}
	ss := s.Clone()
	if len(simSets) > 0 {
		ovs, err := ss.ApplySets("--sim-set", simSets)
		if err != nil {
			return usagef("%v", err)
		}
		if err := ss.Validate(); err != nil {
			return scenario.LocateOverrides(err, nil, pos[0], ovs)
		}
	}
	// The simulator's scenario, --sim-set included: what it follows that
	// the kernel does not.
	unapplied := warnUnapplied(stderr, ss)
	simRes, n, err := experiment.RunCaptured(ctx, ss, experiment.Capture{})
	if err != nil {
		return err
	}
	emuRes, det, err := emu.Run(ctx, s, emu.Options{})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return interrupted(emuRes.SimSeconds)
	}
	c := compareResults(simRes, emuRes)
	c.Unapplied = unapplied
	if note := timingNote(ss, simRes); note != "" {
		c.Notes = append(c.Notes, note)
	}
	if *out != "" {
		if err := writeCompareOutputs(*out, ss, s, c, n, det); err != nil {
			return err
		}
	}
	return emit(stdout, *asJSON, c, func(w io.Writer) { printComparison(w, c) })
}

// timingNote returns a note when TCP flows share a DropTail bottleneck
// and the simulator's side runs without bottleneck.ack_jitter: its hosts
// act at exact instants, which locks such flows into a phase against the
// queue's departures that the kernel's noisy hosts do not keep, and its
// retransmissions and timeouts come out lower (docs/fidelity.md, "Timing
// noise" and "dc-paper's CUBIC on a second host"). One flow alone has no
// one to lock with; RED and CoDel drop by their own rule.
func timingNote(ss *scenario.Scenario, sim *experiment.Result) string {
	if ss.Bottleneck.AckJitter.V > 0 {
		return ""
	}
	if d := ss.Bottleneck.Queue.Discipline; d != "" && d != "droptail" {
		return ""
	}
	if len(sim.Flows) < 2 && !(len(sim.Flows) == 1 && emu.BackgroundOpensTCP(sim.Background)) {
		return ""
	}
	return "the simulator's hosts act at exact instants, which locks TCP flows sharing a DropTail queue into a phase the kernel's noisy hosts do not keep; --sim-set bottleneck.ack_jitter=100us adds the emulator's timing noise (docs/fidelity.md, \"Timing noise\")"
}

// maxComparedFlows bounds the flows drawn in compare's figures (four
// lines each in the BBR one, up to four and two in the windows one).
const maxComparedFlows = 6

// writeCompareOutputs writes comparison.json, each side's run directory
// and, for the flows that run BBR on both sides, one figure of both
// sides' model estimates: the simulator's BtlBw and RTprop against the
// kernel BBR's (TCP_CC_INFO), the data-centre paper's Figure 2 with Linux
// beside the simulator.
func writeCompareOutputs(dir string, ss, s *scenario.Scenario, c *comparison, n *network.Network, det *emu.Details) error {
	if err := report.WriteJSON(filepath.Join(dir, "comparison.json"), c); err != nil {
		return err
	}
	if err := report.WriteRunDir(filepath.Join(dir, "sim"), ss, c.Sim, n); err != nil {
		return err
	}
	if err := writeEmuOutputs(filepath.Join(dir, "emu"), s, c.Emu, det); err != nil {
		return err
	}
	if n.Series == nil {
		return nil
	}
	if win, rtt := windowSeries(n, c, det); len(win) > 0 {
		fig := plot.Stacked{
			Title: s.Name + ": congestion windows, simulator and Linux",
			X:     plot.Axis{Label: "time (s)"},
			Panels: []plot.Panel{
				{Y: plot.Axis{Label: "window (segments)", IncludeZero: true}, Series: win},
				{Y: plot.Axis{Label: "RTT (ms)", IncludeZero: true}, Series: rtt},
			},
			Events: scheduleEvents(s),
		}
		if _, err := plot.SaveAll(fig, filepath.Join(dir, "windows"), "png", "svg"); err != nil {
			return fmt.Errorf("plotting: %w", err)
		}
	}
	rtt, bw := bbrSeries(n, c, det)
	if len(rtt) == 0 {
		return nil
	}
	return report.PlotBBR(dir, s.Name+": BBR's estimates, simulator and Linux", rtt, bw, scheduleEvents(s))
}

// bbrSeries pairs the model estimates of each flow that runs BBR on both
// sides: the simulator's BtlBw and RTprop against the kernel BBR's
// (TCP_CC_INFO).
func bbrSeries(n *network.Network, c *comparison, det *emu.Details) (rtt, bw []plot.Series) {
	for i, f := range n.Flows {
		if i >= len(c.Emu.Flows) || i >= len(n.Series.Flows) {
			break
		}
		fs := n.Series.Flows[i]
		kb := kernelBBRSeries(f.Name, det.Samples[c.Emu.Flows[i].Name])
		if len(fs.BtlBwMbps) == 0 || len(kb.t) == 0 {
			continue
		}
		var st, sbw, srt []float64
		for k := range fs.BtlBwMbps {
			if fs.BtlBwMbps[k] == 0 && fs.RTpropMs[k] == 0 {
				continue // no sample yet
			}
			st = append(st, n.Series.T[fs.Offset+k].Seconds())
			sbw = append(sbw, fs.BtlBwMbps[k])
			srt = append(srt, fs.RTpropMs[k])
		}
		rtt = append(rtt, plot.Series{Name: f.Name + " RTprop, simulator", X: st, Y: srt}, plot.Series{Name: f.Name + " RTprop, Linux", X: kb.t, Y: kb.rtprop})
		bw = append(bw, plot.Series{Name: f.Name + " BtlBw, simulator", X: st, Y: sbw}, plot.Series{Name: f.Name + " BtlBw, Linux", X: kb.t, Y: kb.bw})
		if len(rtt) >= 2*maxComparedFlows {
			break
		}
	}
	return rtt, bw
}

// windowSeries pairs each compared flow's congestion window on both
// sides: the simulator's controller window and what it has in flight, in
// segments, and Linux's snd_cwnd and ssthresh from TCP_INFO (ssthresh
// left out until the first loss sets it), over each side's RTT (the
// simulator's latest sample, Linux's smoothed RTT). During a recovery the
// two windows mean different things (Linux's snd_cwnd is what is in
// flight plus PRR's allowance, the simulator's the controller's target),
// so the simulator's in-flight line is the one to compare there. Flows
// without kernel samples are left out.
func windowSeries(n *network.Network, c *comparison, det *emu.Details) (win, rtt []plot.Series) {
	for i, f := range n.Flows {
		if i >= len(c.Emu.Flows) || i >= len(n.Series.Flows) || len(rtt) >= 2*maxComparedFlows {
			break
		}
		samples := det.Samples[c.Emu.Flows[i].Name]
		if len(samples) == 0 {
			continue
		}
		fs := n.Series.Flows[i]
		mss := float64(f.Sender.Config().MSS)
		var st, scw, sin, srtt []float64
		for k := range fs.CwndBytes {
			st = append(st, n.Series.T[fs.Offset+k].Seconds())
			scw = append(scw, float64(fs.CwndBytes[k])/mss)
			sin = append(sin, float64(fs.InFlight[k])/mss)
			r := fs.RTTms[k]
			if r == 0 {
				r = math.NaN() // no sample yet
			}
			srtt = append(srtt, r)
		}
		var kt, kcw, kss, krtt []float64
		for _, smp := range samples {
			kt = append(kt, smp.At.Seconds())
			kcw = append(kcw, float64(smp.Cwnd))
			ss := float64(smp.Ssthresh)
			if smp.Ssthresh >= math.MaxInt32 {
				ss = math.NaN() // TCP_INFTHRESH: no loss yet
			}
			kss = append(kss, ss)
			krtt = append(krtt, float64(smp.RTT)/1e6)
		}
		win = append(win,
			plot.Series{Name: f.Name + " cwnd, simulator", X: st, Y: scw},
			plot.Series{Name: f.Name + " in flight, simulator", X: st, Y: sin},
			plot.Series{Name: f.Name + " cwnd, Linux", X: kt, Y: kcw})
		// A flow that never lost (or BBR, which keeps ssthresh at
		// infinity) has no ssthresh to draw.
		if slices.ContainsFunc(kss, func(v float64) bool { return !math.IsNaN(v) }) {
			win = append(win, plot.Series{Name: f.Name + " ssthresh, Linux", X: kt, Y: kss})
		}
		rtt = append(rtt,
			plot.Series{Name: f.Name + " RTT, simulator", X: st, Y: srtt},
			plot.Series{Name: f.Name + " smoothed RTT, Linux", X: kt, Y: krtt})
	}
	return win, rtt
}

func compareResults(sim *experiment.Result, em *emu.Result) *comparison {
	c := &comparison{Scenario: sim.Scenario, Sim: sim, Emu: em}
	for i := range sim.Flows {
		if i >= len(em.Flows) {
			break
		}
		d := flowDiff{Flow: sim.Flows[i].Name, Metrics: map[string]*float64{}}
		for _, m := range compareMetrics {
			a, okA := m.get(&sim.Flows[i])
			b, okB := m.get(&em.Flows[i])
			if okA && okB {
				d.Metrics[m.name] = rel(a, b)
			}
		}
		c.Diff = append(c.Diff, d)
	}
	if sim.RTI != nil && em.RTI != nil {
		c.RTIDiff = rel(*sim.RTI, *em.RTI)
	}
	return c
}

// differenceLegend says what compare's difference column is.
const differenceLegend = "difference: (simulator - emulator) / emulator, the simulator's relative difference from the kernel; - where only the emulator's value is 0"

func printComparison(w io.Writer, c *comparison) {
	fmt.Fprintf(w, "scenario %s: simulator vs emulator (Linux %s, kernel TCP)\n\n", c.Scenario, c.Emu.Kernel)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "flow\tmetric\tsimulator\temulator\tdifference\t")
	for i, d := range c.Diff {
		sf, ef := &c.Sim.Flows[i], &c.Emu.Flows[i]
		for _, m := range compareMetrics {
			a, okA := m.get(sf)
			b, okB := m.get(ef)
			if !okA || !okB {
				continue
			}
			diff := "-"
			if r := d.Metrics[m.name]; r != nil {
				diff = fmt.Sprintf("%+.1f%%", 100**r)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", d.Flow, m.name, strconv.FormatFloat(a, 'g', 6, 64), strconv.FormatFloat(b, 'g', 6, 64), diff)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, differenceLegend)
	if len(c.Unapplied) > 0 {
		fmt.Fprintln(w, "not applied by the emulator (the simulator's side follows them, the kernel does not):")
		for _, u := range c.Unapplied {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
	if c.Sim.RTI != nil && c.Emu.RTI != nil {
		fmt.Fprintf(w, "\nRTT Transition Impact: simulator %.4f, emulator %.4f (%+.1f%%)\n", *c.Sim.RTI, *c.Emu.RTI, 100**c.RTIDiff)
	}
	if len(c.Sim.Links) > 0 && len(c.Emu.Links) > 0 {
		sl, el := c.Sim.Links[0], c.Emu.Links[0]
		fmt.Fprintf(w, "bottleneck utilisation: simulator %.1f%%, emulator %.1f%%; queue drops %d vs %d", 100*sl.Utilization, 100*el.Utilization, sl.Drops, el.Drops)
		if sl.Marks != nil && el.Marks != nil {
			fmt.Fprintf(w, "; ECN marks %d vs %d", *sl.Marks, *el.Marks)
		}
		fmt.Fprintln(w)
		if msg := c.Emu.Emulator.DeviceDropWarning(); msg != "" {
			fmt.Fprintln(w, "warning: "+msg)
		}
		// Kernel flows count their reductions as segments with CWR, the
		// simulator's and cclab's transport's as ECN echoes; where nothing
		// is lost the two agree (experiment.FlowResult.ECNReductions).
		if sr, ok := c.Sim.ECNReductions(); ok {
			er, _ := c.Emu.ECNReductions()
			fmt.Fprintf(w, "ECN window reductions over the flows: simulator %d, emulator %d (kernel TCP flows': segments sent with CWR, after any reduction)\n", sr, er)
		}
	}
	// Kernel TCP counts loss probes, recoveries and timeouts by state per
	// namespace, not per flow, so they are compared over every measured
	// flow, and not at all when background TCP connections share the
	// namespaces.
	kc := c.Emu.KernelCounters
	if kc != nil && emu.BackgroundOpensTCP(c.Emu.Background) {
		fmt.Fprintf(w, "loss probes, fast recoveries, timeouts by state, retransmissions lost in turn and compressed ACKs: not compared (the kernel counts them per namespace, and the background's TCP connections share the measured flows')\n")
		kc = nil
	}
	if kc != nil {
		sp, sv, sok := emu.RunRecoveries(c.Sim.Flows, nil)
		ep, ev, eok := emu.RunRecoveries(c.Emu.Flows, kc)
		if sok && eok {
			fmt.Fprintf(w, "all measured flows: loss probes %d vs %d, fast recoveries %d vs %d (kernel TCP flows by the kernel's TCPLossProbes and TCPSackRecovery plus TCPRenoRecovery: every TCP flow in the senders' namespace)\n",
				sp, ep, sv, ev)
		}
		sr, sl, sok := emu.RunTimeouts(c.Sim.Flows, nil)
		er, el, eok := emu.RunTimeouts(c.Emu.Flows, kc)
		if sok && eok {
			fmt.Fprintf(w, "all measured flows: first timeouts in fast recovery %d vs %d, in the loss state %d vs %d (kernel: TCPSackRecoveryFail and TCPLossFailures)\n",
				sr, er, sl, el)
		}
		if sn, sok := emu.RunLostRetransmits(c.Sim.Flows, nil); sok {
			if en, eok := emu.RunLostRetransmits(c.Emu.Flows, kc); eok {
				fmt.Fprintf(w, "all measured flows: retransmissions lost in turn %d vs %d (kernel: TCPLostRetransmit)\n", sn, en)
			}
		}
		fmt.Fprintf(w, "all measured flows: ACKs saved by SACK compression %d vs %d (kernel: the receivers' TCPAckCompressed; the simulator compresses with transport.sack_compression or profile linux-host)\n",
			emu.RunAcksCompressed(c.Sim.Flows, nil), emu.RunAcksCompressed(c.Emu.Flows, kc))
	}
	for _, n := range c.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
}
