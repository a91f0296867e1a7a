// Command emu measures the emulator and the simulator's fidelity against
// it (docs/emulator.md, docs/fidelity.md). It needs root and runs for
// minutes; it is not part of `go test`.
//
//	go run ./bench/emu fidelity [-duration 20s] [-cc cubic,bbr,newreno] [-set path=value] [-cc-param name=value] [-sim [-ref kernel.jsonl,...]] [scenario ...]
//	go run ./bench/emu ceiling [-rates 25,50,100,200,400]
//	go run ./bench/emu seeds [-seeds 40] [-cc cubic,newreno,bbr] [-set path=value] [-variant path=value[,...]] [-flow NAME] [-sim] SCENARIO
//	go run ./bench/emu captures [-after 2s] [-rto 200ms] [-departures PCAP [-ack-delay D] [-ack-window D] [-path-delay D]] ARRIVALS.pcap DROPS.pcap
//	go run ./bench/emu phase [-cc cubic] [-seeds 5] [-set path=value] [-kernel] [-ref kernel.tsv]
//
// fidelity runs each built-in scenario (or the named ones) with each
// controller in the simulator and on the emulator and prints one Markdown
// row per flow with the relative differences (sim - emu) / emu; -json
// writes every pair of results as JSON lines to a file too; -sim runs the
// simulator's side alone (no root), and -ref scores it against kernel
// passes written by -json (testdata/ holds two idle ones, 2026-12-03).
// ceiling runs
// one kernel CUBIC flow over a rate-limited link at increasing rates and
// reports the delivered rate and the forwarder's lateness. seeds runs one
// scenario over seeds 1..N on the kernel and in the simulator (and in the
// simulator with each -variant's overrides) and prints, per controller,
// the distribution of one flow's (-flow; the first by default) completion
// time, its tail and its retransmissions against what the bottleneck
// discarded: the kernel comparison of docs/fidelity.md's "Tail timeouts".
// captures reads a run's --pcap-arrivals and --pcap-drops files (cclab
// run or cclab emu; no root) and counts how often the queue dropped
// retransmissions against new data and how each lost retransmission was
// repaired; given the run's --pcap (-departures), it times the flows'
// ACKs at their senders against what the senders sent (docs/fidelity.md,
// "What the kernel's late timeouts are"), and with -path-delay the hosts'
// own timing (docs/fidelity.md, "The hosts' timing under load"). phase
// runs the held-out workload at seven one-way delays through one packet
// time, in the simulator or with -kernel on the emulator, and prints how
// often the queue dropped retransmissions and the late timeouts beside the
// kernel's reference (docs/fidelity.md, "The round trip's phase and the
// receiver's reads"); the simulator's side needs no root.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/cc"
	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/scenarios"
	_ "github.com/cclab/cclab/traces"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: emu fidelity|ceiling|seeds|captures|phase [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "fidelity":
		err = fidelity(ctx, os.Args[2:])
	case "ceiling":
		err = ceiling(ctx, os.Args[2:])
	case "seeds":
		err = seeds(ctx, os.Args[2:])
	case "captures":
		err = captures(os.Args[2:])
	case "phase":
		err = phase(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// skip lists scenarios the emulator cannot run on this class of machine.
var skip = map[string]string{
	"datacenter": "1 Gbit/s with 10 µs delay: above the emulator's ceiling",
	"many-flows": "1 Gbit/s with 120 flows: above the emulator's ceiling",
}

func load(name, cc string, dur time.Duration) (*scenario.Scenario, error) {
	s, err := scenarios.Load(name)
	if err != nil {
		return nil, err
	}
	if cc != "" {
		if err := s.Set("cc", cc); err != nil {
			return nil, err
		}
	}
	if dur > 0 && s.Duration.V > dur {
		if err := s.Set("duration", dur.String()); err != nil {
			return nil, err
		}
	}
	return s, s.Validate()
}

// sides holds fidelity's overrides: sets for both the simulator and the
// emulator, controller parameters for the simulator's flows only.
type sides struct{ sets, params []string }

// check refuses a -cc-param that no controller has: a typo would
// otherwise change nothing and say nothing.
func (d sides) check() error {
	for _, kv := range d.params {
		k, _, _ := strings.Cut(kv, "=")
		var has []string
		for _, n := range cc.Names() {
			if spec, err := cc.Lookup(n); err == nil {
				if _, ok := spec.Param(k); ok {
					has = append(has, n)
				}
			}
		}
		if len(has) == 0 {
			return fmt.Errorf("-cc-param %s: no controller has a parameter %q (see cclab list)", kv, k)
		}
	}
	return nil
}

// both applies the -set overrides and validates.
func (d sides) both(s *scenario.Scenario) error {
	if _, err := s.ApplySets("-set", d.sets); err != nil {
		return err
	}
	return s.Validate()
}

// sim sets each -cc-param on every measured flow whose controller has the
// parameter (CUBIC's, BBR's and NewReno's linux, say, and not Vegas'), and
// validates.
func (d sides) sim(s *scenario.Scenario) error {
	for _, kv := range d.params {
		k, v, _ := strings.Cut(kv, "=")
		for i, f := range s.Flows {
			spec, err := cc.Lookup(f.CC.Name)
			if err != nil {
				return err
			}
			if _, ok := spec.Param(k); !ok {
				continue
			}
			if err := s.Set(fmt.Sprintf("flows.%d.cc.%s", i, k), v); err != nil {
				return fmt.Errorf("-cc-param %s: %w", kv, err)
			}
		}
	}
	return s.Validate()
}

// openJSONLines opens path for appending one JSON value per line, or
// returns nil for an empty path.
func openJSONLines(path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	return os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
}

func rel(a, b float64) string {
	if b == 0 {
		if a == 0 {
			return "0%"
		}
		return "n/a"
	}
	return fmt.Sprintf("%+.0f%%", 100*(a-b)/b)
}

func fidelity(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("fidelity", flag.ExitOnError)
	dur := fs.Duration("duration", 20*time.Second, "cap on each scenario's duration")
	ccs := fs.String("cc", "cubic,bbr,newreno", "controllers")
	jsonOut := fs.String("json", "", "append every result pair to this file as JSON lines")
	simOnly := fs.Bool("sim", false, "run the simulator side only (no root needed): goodput, qdelay p95, retransmissions / drops+losses / RTOs, RTT mean, FCT")
	refFiles := fs.String("ref", "", "with -sim: score against kernel passes of fidelity -json (comma-separated files, e.g. bench/emu/testdata/kernel-idle-2026-12-03-pass1.jsonl,...pass2.jsonl)")
	var sets, params overrides
	fs.Var(&sets, "set", "override a scenario field on both sides: path=value[,path=value] (repeatable)")
	fs.Var(&params, "cc-param", "set a controller parameter on every flow whose controller has it, in the simulator only (the kernel's take none): name=value[,name=value] (repeatable), e.g. linux=1")
	fs.Parse(args)
	side := sides{sets: split(sets...), params: split(params...)}
	if err := side.check(); err != nil {
		return err
	}
	names := fs.Args()
	if len(names) == 0 {
		names = scenarios.Names()
	}
	jl, err := openJSONLines(*jsonOut)
	if err != nil {
		return err
	}
	if jl != nil {
		defer jl.Close()
	}
	if *refFiles != "" && !*simOnly {
		return fmt.Errorf("-ref scores the simulator against stored kernel passes: use it with -sim")
	}
	if *simOnly {
		var ref kernelRef
		if *refFiles != "" {
			if ref, err = loadRef(strings.Split(*refFiles, ",")); err != nil {
				return err
			}
		}
		return fidelitySim(names, *ccs, *dur, side, ref)
	}
	fmt.Println("| scenario | cc | flow | goodput sim / emu Mbit/s | Δ | qdelay p95 sim / emu ms | Δ | retx sim / emu | Δ | RTT mean sim / emu ms | Δ | FCT sim / emu s | Δ |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, name := range names {
		if why, ok := skip[name]; ok {
			fmt.Printf("| %s | - | - | not run: %s |||||||||\n", name, why)
			continue
		}
		for _, cc := range strings.Split(*ccs, ",") {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s, err := load(name, cc, *dur)
			if err == nil {
				err = side.both(s)
			}
			if err != nil {
				return fmt.Errorf("%s/%s: %w", name, cc, err)
			}
			ss := s.Clone()
			if err := side.sim(ss); err != nil {
				return fmt.Errorf("%s/%s: %w", name, cc, err)
			}
			sim, _, err := experiment.Run(ctx, ss)
			if err != nil {
				return fmt.Errorf("%s/%s sim: %w", name, cc, err)
			}
			em, _, err := emu.Run(ctx, s, emu.Options{})
			if err != nil {
				return fmt.Errorf("%s/%s emu: %w", name, cc, err)
			}
			warnDeviceDrops(name+"/"+cc, em)
			if jl != nil {
				b, _ := json.Marshal(map[string]any{"scenario": name, "cc": cc, "sim": sim, "emu": em})
				jl.Write(append(b, '\n'))
			}
			for i := range sim.Flows {
				a, b := sim.Flows[i], em.Flows[i]
				fct := "- | -"
				if a.FCT != nil && b.FCT != nil {
					fct = fmt.Sprintf("%.2f / %.2f | %s", *a.FCT, *b.FCT, rel(*a.FCT, *b.FCT))
				}
				fmt.Printf("| %s | %s | %s | %.2f / %.2f | %s | %.1f / %.1f | %s | %d / %d | %s | %.1f / %.1f | %s | %s |\n",
					name, cc, a.Name, a.GoodputMbps, b.GoodputMbps, rel(a.GoodputMbps, b.GoodputMbps),
					a.QdelayP95Ms, b.QdelayP95Ms, rel(a.QdelayP95Ms, b.QdelayP95Ms),
					a.Retransmissions, b.Retransmissions, rel(float64(a.Retransmissions), float64(b.Retransmissions)),
					a.RTTMeanMs, b.RTTMeanMs, rel(a.RTTMeanMs, b.RTTMeanMs), fct)
			}
			if sim.RTI != nil && em.RTI != nil {
				fmt.Printf("| %s | %s | (RTI) | %.3f / %.3f | %s |||||||||\n", name, cc, *sim.RTI, *em.RTI, rel(*sim.RTI, *em.RTI))
			}
			os.Stdout.Sync()
		}
	}
	return nil
}

// simFlow is one simulated flow of fidelity -sim.
type simFlow struct {
	scenario, cc string
	flow         experiment.FlowResult
}

// simFlows runs the simulator's side of the fidelity table.
func simFlows(names []string, ccs string, dur time.Duration, side sides) ([]simFlow, map[[2]string]*float64, error) {
	var out []simFlow
	rti := map[[2]string]*float64{}
	for _, name := range names {
		if _, ok := skip[name]; ok {
			continue
		}
		for _, cc := range strings.Split(ccs, ",") {
			s, err := load(name, cc, dur)
			if err == nil {
				err = side.both(s)
			}
			if err == nil {
				err = side.sim(s)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%s/%s: %w", name, cc, err)
			}
			sim, _, err := experiment.Run(context.Background(), s)
			if err != nil {
				return nil, nil, fmt.Errorf("%s/%s sim: %w", name, cc, err)
			}
			for _, a := range sim.Flows {
				out = append(out, simFlow{name, cc, a})
			}
			rti[[2]string{name, cc}] = sim.RTI
		}
	}
	return out, rti, nil
}

// refCounts counts the flows within target of the kernel reference, per
// metric, and the flows the reference has.
func refCounts(flows []simFlow, ref kernelRef) (in [3]int, scored int) {
	for i := range flows {
		ok3, _, ok := ref.score(flows[i].scenario, flows[i].cc, &flows[i].flow)
		if !ok {
			continue
		}
		scored++
		for m := range 3 {
			if ok3[m] {
				in[m]++
			}
		}
	}
	return in, scored
}

// fidelitySim prints the simulator's side of the fidelity table, with the
// counts that tell spurious retransmissions apart (docs/fidelity.md), and,
// given a kernel reference (-ref), the kernel's range beside each metric,
// ✗ where the simulator is outside its target, and the counts within.
func fidelitySim(names []string, ccs string, dur time.Duration, side sides, ref kernelRef) error {
	flows, rti, err := simFlows(names, ccs, dur, side)
	if err != nil {
		return err
	}
	if ref == nil {
		fmt.Println("| scenario | cc | flow | goodput Mbit/s | qdelay p95 ms | retx / drops+losses / RTOs | RTT mean ms | FCT s |")
		fmt.Println("|---|---|---|---|---|---|---|---|")
	} else {
		fmt.Println("| scenario | cc | flow | goodput Mbit/s / kernel | qdelay p95 ms / kernel | retx / kernel (drops+losses, RTOs) | RTT mean ms | FCT s |")
		fmt.Println("|---|---|---|---|---|---|---|---|")
	}
	for i, f := range flows {
		a := &f.flow
		fct := "-"
		if a.FCT != nil {
			fct = fmt.Sprintf("%.2f", *a.FCT)
		}
		if ref == nil {
			fmt.Printf("| %s | %s | %s | %.2f | %.0f | %d / %d / %d | %.0f | %s |\n",
				f.scenario, f.cc, a.Name, a.GoodputMbps, a.QdelayP95Ms, a.Retransmissions, a.Drops+a.Losses, a.RTOs, a.RTTMeanMs, fct)
		} else {
			in, ranges, ok := ref.score(f.scenario, f.cc, a)
			mark := func(m int) string {
				switch {
				case !ok:
					return " / -"
				case in[m]:
					return " / " + ranges[m]
				}
				return " ✗ / " + ranges[m]
			}
			fmt.Printf("| %s | %s | %s | %.2f%s | %.0f%s | %d%s (%d, %d) | %.0f | %s |\n",
				f.scenario, f.cc, a.Name, a.GoodputMbps, mark(0), a.QdelayP95Ms, mark(1), a.Retransmissions, mark(2),
				a.Drops+a.Losses, a.RTOs, a.RTTMeanMs, fct)
		}
		if last := i == len(flows)-1 || flows[i+1].scenario != f.scenario || flows[i+1].cc != f.cc; last {
			if r := rti[[2]string{f.scenario, f.cc}]; r != nil {
				fmt.Printf("| %s | %s | (RTI) | %.3f |||||\n", f.scenario, f.cc, *r)
			}
		}
	}
	if ref != nil {
		in, scored := refCounts(flows, ref)
		fmt.Printf("\nwithin target of the kernel reference (%d flows it has; goodput %.0f%%, qdelay p95 %.0f%%, retransmissions %.0f%%): %s %d, %s %d, %s %d\n",
			scored, 100*refTolerance[0], 100*refTolerance[1], 100*refTolerance[2],
			refMetrics[0], in[0], refMetrics[1], in[1], refMetrics[2], in[2])
	}
	return nil
}

func ceiling(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("ceiling", flag.ExitOnError)
	rates := fs.String("rates", "25,50,100,200,400", "link rates in Mbit/s")
	dur := fs.Duration("duration", 5*time.Second, "run length")
	fs.Parse(args)
	fmt.Println("| link Mbit/s | goodput Mbit/s | utilisation | lateness p50 µs | p99 µs | max µs | queue drops | realtime |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range strings.Split(*rates, ",") {
		mbps, err := strconv.ParseFloat(r, 64)
		if err != nil {
			return err
		}
		// A BDP-sized queue at 20 ms RTT, at least 100 packets.
		limit := max(100, int(math.Ceil(mbps*1e6*0.02/8/1500)))
		y := fmt.Sprintf("name: ceiling\nduration: %s\nbottleneck: {rate: %gMbps, delay: 10ms, queue: {limit: %d}}\nflows: [{name: bulk, cc: cubic}]\n", *dur, mbps, limit)
		s, err := scenario.Parse([]byte(y), "ceiling.yaml")
		if err != nil {
			return err
		}
		em, _, err := emu.Run(ctx, s, emu.Options{})
		if err != nil {
			return err
		}
		a := em.Emulator
		fmt.Printf("| %g | %.2f | %.1f%% | %.0f | %.0f | %.0f | %d | %v |\n", mbps, em.Flows[0].GoodputMbps, 100*em.Links[0].Utilization,
			a.LatenessP50Us, a.LatenessP99Us, a.LatenessMaxUs, a.QueueDrops, a.Realtime)
	}
	return nil
}
