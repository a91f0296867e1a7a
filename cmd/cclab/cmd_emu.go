package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/experiment/scenario"
)

func init() {
	register(&command{name: "emu", summary: "run one scenario on an emulated network with real Linux TCP (root)", args: "SCENARIO", help: "cclab emu --clean removes namespaces left by runs that were killed.", run: runEmu})
}

func runEmu(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emu", stderr)
	ccName := fs.String("cc", "", "override every flow's congestion controller (a kernel one: see /proc/sys/net/ipv4/tcp_available_congestion_control)")
	seed := fs.Int64("seed", -1, "override the scenario's seed")
	var sets stringList
	fs.Var(&sets, "set", "override a field: dotted.path=value (repeatable)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	out := fs.String("out", "", "write summary.json and tcp_info.csv (per-flow TCP_INFO samples) to this directory")
	pcap := fs.String("pcap", "", "write the bottleneck's packets (headers) to this pcap file")
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
		if len(removed) == 0 && len(live) == 0 {
			fmt.Fprintln(stdout, "no cclab namespaces")
		}
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one scenario file, got %d arguments (usage: cclab emu SCENARIO.yaml [flags])", len(pos))
	}
	s, err := loadScenario(pos[0], *ccName, *seed, sets)
	if err != nil {
		return err
	}
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
	if *pcap != "" {
		f, err := os.Create(*pcap)
		if err != nil {
			return fmt.Errorf("--pcap: %w", err)
		}
		defer f.Close()
		opt.Pcap = f
	}
	res, det, err := emu.Run(ctx, s, opt)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted after %.1f s of emulation", res.SimSeconds)
	}
	if *out != "" {
		if err := writeEmuOutputs(*out, res, det); err != nil {
			return err
		}
	}
	return emit(stdout, *asJSON, res, func(w io.Writer) { printEmuResult(w, res) })
}

func printEmuResult(w io.Writer, r *emu.Result) {
	r.Result.WriteText(w)
	a := r.Emulator
	fmt.Fprintf(w, "emulator (Linux %s): %d packets at the bottleneck: %d delivered, %d queue drops, %d lost, %d in flight; forwarding lateness p50 %.0f µs, p99 %.0f µs, max %.0f µs (realtime %v)\n",
		r.Kernel, a.Packets, a.Delivered, a.QueueDrops, a.Lost, a.InFlight, a.LatenessP50Us, a.LatenessP99Us, a.LatenessMaxUs, a.Realtime)
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

// writeEmuOutputs writes summary.json and the TCP_INFO samples.
func writeEmuOutputs(dir string, r *emu.Result, d *emu.Details) error {
	if err := report.WriteJSON(filepath.Join(dir, "summary.json"), r); err != nil {
		return err
	}
	return report.WriteCSV(filepath.Join(dir, "tcp_info.csv"), []string{"flow", "t_s", "srtt_ms", "min_rtt_ms", "cwnd_segments", "delivery_rate_mbps", "total_retrans", "total_rto", "bytes_acked", "ssthresh_segments", "rwnd_limited_s", "sndbuf_limited_s"}, func(cw *csv.Writer) error {
		for _, f := range r.Flows {
			for _, s := range d.Samples[f.Name] {
				if err := cw.Write([]string{f.Name, report.Ftoa(s.At.Seconds()), report.Ftoa(float64(s.RTT) / 1e6), report.Ftoa(float64(s.MinRTT) / 1e6),
					strconv.FormatUint(uint64(s.Cwnd), 10), report.Ftoa(s.DeliveryRate / 1e6), strconv.FormatUint(uint64(s.Retrans), 10),
					strconv.FormatUint(uint64(s.RTOs), 10), strconv.FormatUint(s.BytesAcked, 10),
					strconv.FormatUint(uint64(s.Ssthresh), 10), report.Ftoa(s.RwndLimited.Seconds()), report.Ftoa(s.SndbufLimited.Seconds())}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
