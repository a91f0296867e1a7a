//go:build linux

package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/emu/endpoint"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
)

func init() {
	register(&command{name: "emu", summary: emuSummary, args: "SCENARIO", help: "cclab emu --clean removes namespaces left by runs that were killed.", run: runEmu})
}

func runEmu(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emu", stderr)
	ccName := fs.String("cc", "", "override every flow's congestion controller (a kernel one: see /proc/sys/net/ipv4/tcp_available_congestion_control; reno is newreno)")
	seed := fs.Int64("seed", -1, "override the scenario's seed")
	var sets stringList
	fs.Var(&sets, "set", "override a field: dotted.path=value (repeatable)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	out := fs.String("out", "", "write summary.json and tcp_info.csv (per-flow TCP_INFO samples) to this directory, and for kernel BBR flows bbr.csv and bbr_estimates.png/svg (its model from TCP_CC_INFO)")
	pcap := fs.String("pcap", "", "write the bottleneck's packets (headers) to this pcap file")
	pcapArrivals := fs.String("pcap-arrivals", "", "write the packets reaching the bottleneck, before its queue (headers), to this pcap file")
	pcapDrops := fs.String("pcap-drops", "", "write the packets the bottleneck's queue drops (headers, at the drop) to this pcap file")
	netgenAddr := fs.String("netgen", "", "serve the network-generator RPC for the bottleneck on ADDR (loopback host:port or unix:PATH)")
	sample := fs.Duration("sample", 0, "TCP_INFO sampling interval (default 100ms with --out, or the scenario's sample)")
	clean := fs.Bool("clean", false, "remove cclab namespaces left by dead processes, then exit")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *clean {
		if len(pos) != 0 {
			return usagef("--clean takes no scenario")
		}
		removed, live, err := netns.CleanStale()
		for _, n := range removed {
			fmt.Fprintf(stdout, "removed namespace %s\n", n)
		}
		for _, n := range live {
			fmt.Fprintf(stdout, "kept namespace %s (its process is alive)\n", n)
		}
		if len(removed) == 0 && len(live) == 0 && err == nil {
			fmt.Fprintln(stdout, "no cclab namespaces")
		}
		return cleanError(os.Geteuid(), err)
	}
	if len(pos) != 1 {
		return usagef("want exactly one scenario file, got %d arguments (usage: cclab emu SCENARIO.yaml [flags])", len(pos))
	}
	s, err := loadScenario(pos[0], emuCC(*ccName), *seed, sets)
	if err != nil {
		return err
	}
	warnUnapplied(stderr, s)
	if *sample > 0 {
		s.Sample = scenario.Dur(*sample)
	} else if *out != "" && s.Sample.V == 0 {
		s.Sample = scenario.Dur(report.SeriesSample)
	}
	var opt emu.Options
	startNetgen, stopNetgen, err := emuNetgen(ctx, *netgenAddr, stderr)
	if err != nil {
		return err
	}
	defer stopNetgen()
	opt.OnStart = startNetgen
	if err := checkCaptures(experiment.Capture{Departures: *pcap, Arrivals: *pcapArrivals, Drops: *pcapDrops}); err != nil {
		return err
	}
	var files []*os.File
	for _, c := range []struct {
		flag, path string
		w          *io.Writer
	}{{"--pcap", *pcap, &opt.Pcap}, {"--pcap-arrivals", *pcapArrivals, &opt.PcapArrivals}, {"--pcap-drops", *pcapDrops, &opt.PcapDrops}} {
		if c.path == "" {
			continue
		}
		f, err := os.Create(c.path)
		if err != nil {
			return fmt.Errorf("%s: %w", c.flag, err)
		}
		defer f.Close() // on an early return; closed and checked after the run
		files = append(files, f)
		*c.w = f
	}
	res, det, err := emu.Run(ctx, s, opt)
	for _, f := range files {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return interrupted(res.SimSeconds)
	}
	if *out != "" {
		if err := writeEmuOutputs(*out, s, res, det); err != nil {
			return err
		}
	}
	return emit(stdout, *asJSON, res, func(w io.Writer) { printEmuResult(w, res) })
}

// emuHeader is the first line of the emulator's table: its time is the
// wall clock's, so the simulator's events and their rate mean nothing.
func emuHeader(r *emu.Result) string {
	return fmt.Sprintf("scenario %s  seed %d  emulated %.3f s in real time (Linux %s)", r.Scenario, r.Seed, r.SimSeconds, r.Kernel)
}

// emuCC is the emulator's --cc: the kernel's name reno is accepted for
// cclab's newreno, which the emulator runs as the kernel's reno.
func emuCC(name string) string {
	if name == "reno" {
		return "newreno"
	}
	return name
}

// warnUnapplied prints, before a run, the scenario's fields the emulator's
// kernel path does not apply (emu.Unapplied).
func warnUnapplied(w io.Writer, s *scenario.Scenario) []string {
	u := emu.Unapplied(s)
	for _, msg := range u {
		fmt.Fprintf(w, "warning (emulator): %s\n", msg)
	}
	return u
}

// interrupted is the error of a run ended by SIGINT or SIGTERM after secs
// of emulation, saying whether its namespaces are gone (emu.Run removes
// them in every case, unless ip failed).
func interrupted(secs float64) error {
	left, err := emu.OwnNamespaces()
	switch {
	case err == nil && len(left) == 0:
		return fmt.Errorf("interrupted after %.1f s of emulation; its network namespaces, with their TUN devices and sockets, were removed", secs)
	case err == nil:
		return fmt.Errorf("interrupted after %.1f s of emulation; its network namespaces %s remain: cclab emu --clean removes them once this process has exited", secs, strings.Join(left, ", "))
	}
	return fmt.Errorf("interrupted after %.1f s of emulation", secs)
}

// cleanError is --clean's error: without root, ip netns del fails with a
// bare "Permission denied", which is said as what it means.
func cleanError(euid int, err error) error {
	if err != nil && euid != 0 {
		return fmt.Errorf("cclab emu --clean needs root privileges (or CAP_NET_ADMIN) to remove namespaces: run it as root (%w)", err)
	}
	return err
}

func printEmuResult(w io.Writer, r *emu.Result) {
	r.Result.WriteTextHeaded(w, emuHeader(r))
	a := r.Emulator
	fmt.Fprintf(w, "emulator (Linux %s): %d packets at the bottleneck: %d delivered, %d queue drops, %d lost, %d in flight; forwarding lateness p50 %.0f µs, p99 %.0f µs, max %.0f µs (realtime %v)\n",
		r.Kernel, a.Packets, a.Delivered, a.QueueDrops, a.Lost, a.InFlight, a.LatenessP50Us, a.LatenessP99Us, a.LatenessMaxUs, a.Realtime)
	if msg := a.DeviceDropWarning(); msg != "" {
		fmt.Fprintln(w, "warning: "+msg)
	}
	for _, f := range r.Flows {
		if ag := r.Agents[f.Name]; len(ag) > 0 {
			fmt.Fprintf(w, "agent of %s:", f.Name)
			for _, k := range sortedKeys(ag) {
				fmt.Fprintf(w, " %s %g", k, ag[k])
			}
			fmt.Fprintln(w)
		}
	}
}

// writeEmuOutputs writes summary.json and the TCP_INFO samples, and for
// kernel BBR flows their model over time (writeEmuBBR).
func writeEmuOutputs(dir string, s *scenario.Scenario, r *emu.Result, d *emu.Details) error {
	if err := report.WriteJSON(filepath.Join(dir, "summary.json"), r); err != nil {
		return err
	}
	opt := func(ok bool, v float64) string {
		if !ok {
			return ""
		}
		return report.Ftoa(v)
	}
	err := report.WriteCSV(filepath.Join(dir, "tcp_info.csv"), []string{"flow", "t_s", "srtt_ms", "min_rtt_ms", "cwnd_segments", "delivery_rate_mbps", "total_retrans", "total_rto", "bytes_acked", "ssthresh_segments", "rwnd_limited_s", "sndbuf_limited_s",
		"unacked_segments", "notsent_bytes", "sndbuf_bytes", "bbr_btlbw_mbps", "bbr_rtprop_ms", "bbr_pacing_gain", "bbr_cwnd_gain", "snd_wnd_bytes",
		"sacked_segments", "lost_segments", "retrans_out_segments", "in_flight_segments"}, func(cw *csv.Writer) error {
		for _, f := range r.Flows {
			for _, smp := range d.Samples[f.Name] {
				if err := cw.Write([]string{f.Name, report.Ftoa(smp.At.Seconds()), report.Ftoa(float64(smp.RTT) / 1e6), report.Ftoa(float64(smp.MinRTT) / 1e6),
					strconv.FormatUint(uint64(smp.Cwnd), 10), report.Ftoa(smp.DeliveryRate / 1e6), strconv.FormatUint(uint64(smp.Retrans), 10),
					strconv.FormatUint(uint64(smp.RTOs), 10), strconv.FormatUint(smp.BytesAcked, 10),
					strconv.FormatUint(uint64(smp.Ssthresh), 10), report.Ftoa(smp.RwndLimited.Seconds()), report.Ftoa(smp.SndbufLimited.Seconds()),
					strconv.FormatUint(uint64(smp.Unacked), 10), strconv.FormatUint(uint64(smp.NotSent), 10), strconv.FormatUint(uint64(smp.Sndbuf), 10),
					opt(smp.HasBBR, smp.BBR.BtlBw/1e6), opt(smp.HasBBR, float64(smp.BBR.RTprop)/1e6), opt(smp.HasBBR, smp.BBR.PacingGain), opt(smp.HasBBR, smp.BBR.CwndGain),
					strconv.FormatUint(uint64(smp.SndWnd), 10),
					strconv.FormatUint(uint64(smp.Sacked), 10), strconv.FormatUint(uint64(smp.Lost), 10), strconv.FormatUint(uint64(smp.RetransOut), 10),
					strconv.FormatUint(uint64(smp.InFlight()), 10)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeEmuBBR(dir, s, r, d)
}

// writeEmuBBR writes the kernel BBR flows' model estimates as the
// simulator's runs write their BBR's (bbr.csv and bbr_estimates.png/svg,
// the data-centre paper's Figure 2), from TCP_CC_INFO. Two columns differ:
// the kernel reports its smoothed RTT (srtt_ms, where the simulator gives
// the latest sample), and the throughput is what was acknowledged over
// each interval (tcpi_bytes_acked). Runs without kernel BBR flows write
// nothing.
func writeEmuBBR(dir string, s *scenario.Scenario, r *emu.Result, d *emu.Details) error {
	var flows []kernelBBR
	for _, f := range r.Flows {
		if fl := kernelBBRSeries(f.Name, d.Samples[f.Name]); len(fl.t) > 0 {
			flows = append(flows, fl)
		}
	}
	if len(flows) == 0 {
		return nil
	}
	err := report.WriteCSV(filepath.Join(dir, "bbr.csv"), []string{"t_s", "flow", "btlbw_mbps", "rtprop_ms", "srtt_ms", "throughput_mbps", "pacing_gain", "cwnd_gain"}, func(w *csv.Writer) error {
		for _, f := range flows {
			for k := range f.t {
				if err := w.Write([]string{report.Ftoa(f.t[k]), f.name, report.Ftoa(f.bw[k]), report.Ftoa(f.rtprop[k]), report.Ftoa(f.rtt[k]), report.Ftoa(f.mbps[k]), report.Ftoa(f.pg[k]), report.Ftoa(f.cg[k])}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var rtt, bw []plot.Series
	for _, f := range flows {
		rtt = append(rtt, plot.Series{Name: f.name + " smoothed RTT", X: f.t, Y: f.rtt}, plot.Series{Name: f.name + " RTprop estimate", X: f.t, Y: f.rtprop})
		bw = append(bw, plot.Series{Name: f.name + " throughput", X: f.t, Y: f.mbps}, plot.Series{Name: f.name + " BtlBw estimate", X: f.t, Y: f.bw})
	}
	return report.PlotBBR(dir, s.Name+": Linux BBR's model estimates (emulator)", rtt, bw, scheduleEvents(s))
}

// kernelBBR is one kernel BBR flow's model over time, from its samples
// that carry it: seconds, BtlBw in Mbit/s, RTprop and smoothed RTT in ms,
// acknowledged throughput in Mbit/s (0 for the first sample) and gains.
type kernelBBR struct {
	name               string
	t, bw, rtprop, rtt []float64
	mbps, pg, cg       []float64
}

// kernelBBRSeries collects a flow's samples that carry the kernel BBR's
// model (none for other controllers).
func kernelBBRSeries(name string, samples []endpoint.Sample) kernelBBR {
	fl := kernelBBR{name: name}
	var lastAt float64
	var lastAcked uint64
	for _, smp := range samples {
		if !smp.HasBBR {
			continue
		}
		at := smp.At.Seconds()
		mbps := 0.0
		if len(fl.t) > 0 && at > lastAt {
			mbps = float64(smp.BytesAcked-lastAcked) * 8 / (at - lastAt) / 1e6
		}
		lastAt, lastAcked = at, smp.BytesAcked
		fl.t = append(fl.t, at)
		fl.bw = append(fl.bw, smp.BBR.BtlBw/1e6)
		fl.rtprop = append(fl.rtprop, float64(smp.BBR.RTprop)/1e6)
		fl.rtt = append(fl.rtt, float64(smp.RTT)/1e6)
		fl.mbps = append(fl.mbps, mbps)
		fl.pg = append(fl.pg, smp.BBR.PacingGain)
		fl.cg = append(fl.cg, smp.BBR.CwndGain)
	}
	return fl
}

// scheduleEvents marks the scenario's link changes on a figure.
func scheduleEvents(s *scenario.Scenario) []plot.Event {
	var events []plot.Event
	for _, c := range s.Bottleneck.Schedule {
		at := c.At.V.Seconds()
		events = append(events, plot.Event{X: at, Label: fmt.Sprintf("link change at %.3g s", at)})
	}
	return events
}
