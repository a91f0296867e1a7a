package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/experiment"
)

// TestKernelCCAgainstKernel holds the simulator's Hybla and Westwood+ to
// Linux 6.18's TCP running the same algorithms as BPF struct_ops programs
// (bench/kernelcc: this kernel has neither module), through the emulator,
// one run each on 2026-12-06 (`go run ./bench/emu fidelity -json` with the
// sets below; docs/fidelity.md, "Hybla and Westwood+ in the kernel"),
// with NewReno beside them as the control, on a lossy link (10 Mbit/s, 50
// ms, 1% random loss, whose many losses make one run representative):
// goodput within 8% and retransmissions within 10%. The satellite link of
// the same section (600 ms RTT, 0.1% loss), where a run's few random
// losses decide its course, is compared over ten seeds instead
// (TestSatelliteSeedsAgainstKernel); its single runs of 2026-12-06 and
// 2026-12-07 stay in testdata as records (the first Hybla run lost 2,123
// segments at its sender's TUN device, netns.TxQueueLen).
func TestKernelCCAgainstKernel(t *testing.T) {
	for _, c := range []struct {
		ref  string
		sets []string
		dur  time.Duration
		ccs  string
	}{
		{"testdata/kernel-kernelcc-lossy-2026-12-06.jsonl",
			[]string{"bottleneck.loss.model=bernoulli", "bottleneck.loss.p=0.01"}, 30 * time.Second, "westwood,hybla,newreno"},
	} {
		ref, err := loadRef([]string{c.ref})
		if err != nil {
			t.Fatal(err)
		}
		flows, _, err := simFlows([]string{"dumbbell"}, c.ccs, c.dur, sides{sets: c.sets})
		if err != nil {
			t.Fatal(err)
		}
		if len(flows) == 0 {
			t.Fatalf("%s: no simulated flows", c.ref)
		}
		for _, f := range flows {
			runs := ref[refKey{f.scenario, f.cc, f.flow.Name}]
			if len(runs) != 1 {
				t.Fatalf("%s: %d kernel runs of %s %s, want 1", c.ref, len(runs), f.cc, f.flow.Name)
			}
			k := runs[0]
			sim := refValues(&f.flow)
			t.Logf("%s %s: goodput %.2f / %.2f Mbit/s, retransmissions %.0f / %.0f (simulator / kernel)", c.ref, f.cc, sim[0], k[0], sim[2], k[2])
			if d := math.Abs(sim[0]/k[0] - 1); d > 0.08 {
				t.Errorf("%s %s: goodput %.2f Mbit/s, the kernel's %.2f (%.0f%% apart, want within 8%%)", c.ref, f.cc, sim[0], k[0], 100*d)
			}
			if d := math.Abs(sim[2]/k[2] - 1); d > 0.10 {
				t.Errorf("%s %s: %.0f retransmissions, the kernel's %.0f (%.0f%% apart, want within 10%%)", c.ref, f.cc, sim[2], k[2], 100*d)
			}
		}
	}
}

// deviceLossExempt lists the reference runs that lost packets at their own
// TUN devices and are kept on purpose, by file and controller, with why.
var deviceLossExempt = map[[2]string]string{
	{"testdata/kernel-kernelcc-satellite-2026-12-06.jsonl", "hybla"}: "kept as the record of the loss; TestSatelliteSeedsAgainstKernel reads Hybla from satelliteHyblaSeeds",
}

// TestReferencesLostNothingAtTheirDevices: every kernel run in testdata
// that carries the kernels' counters put on the emulated path all it sent:
// its device drops are zero, or, in files older than that count, the
// segments the senders' namespace sent (Tcp.OutSegs and RetransSegs)
// exceed the packets the forwarder read by at most a handful (segments
// still between socket and device when the counters were read). A run
// whose sender lost packets at its own device is no reference for the
// simulator, whose only losses are the path's.
func TestReferencesLostNothingAtTheirDevices(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no reference files: %v", err)
	}
	checked := 0
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			type run struct {
				Emulator *struct {
					Packets     int64  `json:"packets"`
					DeviceDrops *int64 `json:"device_drops"`
				} `json:"emulator"`
				KernelCounters *struct {
					Sender map[string]int64 `json:"sender"`
				} `json:"kernel_counters"`
			}
			// fidelity -json writes the kernel's run as "emu", seeds
			// -json as "result".
			var row struct {
				CC     string `json:"cc"`
				Emu    *run   `json:"emu"`
				Result *run   `json:"result"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%s:%d: %v", path, i+1, err)
			}
			r := row.Emu
			if r == nil {
				r = row.Result
			}
			if r == nil || r.Emulator == nil || r.KernelCounters == nil {
				continue
			}
			checked++
			a, s := r.Emulator, r.KernelCounters.Sender
			unseen := s["Tcp.OutSegs"] + s["Tcp.RetransSegs"] - a.Packets
			lost := unseen > 5 || a.DeviceDrops != nil && *a.DeviceDrops > 0
			why, exempt := deviceLossExempt[[2]string{path, row.CC}]
			switch {
			case lost && !exempt:
				t.Errorf("%s:%d (%s): %d segments sent that the forwarder never read (device drops %v)", path, i+1, row.CC, unseen, a.DeviceDrops)
			case !lost && exempt:
				t.Errorf("%s:%d (%s): exempt (%s) but lost nothing at its devices", path, i+1, row.CC, why)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d runs with the kernels' counters, want the 50 or more in testdata", checked)
	}
}

// satelliteHyblaSeeds is the kernel's Hybla (bench/kernelcc) on the 600 ms
// satellite dumbbell of TestKernelCCAgainstKernel over seeds 1-10, 30 s
// each (2026-12-07 06:35-06:41, idle; bench/emu seeds -all -cc hybla -seeds
// 10 -set bottleneck.delay=300ms,bottleneck.queue.limit=500,
// bottleneck.loss.model=bernoulli,bottleneck.loss.p=0.001,duration=30s
// -json FILE dumbbell, its kernel lines), the emulator's TUN devices
// queueing 10,000 packets (no device drops).
const satelliteHyblaSeeds = "testdata/kernel-satellite-hybla-seeds-2026-12-07.jsonl"

// TestSatelliteHyblaSendBufferAgainstKernel: Hybla on the satellite path
// is held by Linux's 4 MiB send buffer for seconds (3.06 s of seed 1's
// 30); with send_buffer: linux, which counts each outstanding skb's
// overhead as the kernel does, the simulator's means over the same ten
// seeds come within 5% of the kernel's goodput, 8% of its RTT mean, 15% of
// its receive-window-limited time and 20% of its retransmissions (8.15
// Mbit/s, 969 ms, 3.51 s and 5,287 against 7.94, 928, 3.33 and 5,218;
// the runs spread over 2,392-8,759 retransmissions in the kernel and as
// widely in the simulator). Without the buffer the simulator sends past
// it: 8.35 Mbit/s, 1,054 ms and 4.54 s rwnd-limited, which fails three of
// the four.
func TestSatelliteHyblaSendBufferAgainstKernel(t *testing.T) {
	sets := []string{"profile=linux", "transport.send_buffer=linux", "bottleneck.delay=300ms", "bottleneck.queue.limit=500",
		"bottleneck.loss.model=bernoulli", "bottleneck.loss.p=0.001", "duration=30s"}
	k := seedsFlows(t, satelliteHyblaSeeds, "hybla", 10)
	s := simFlowsOf(simResults(t, "scenarios/dumbbell.yaml", "hybla", 10, sets))
	checkMeans(t, "hybla", k, s, []meanCheck{{"goodput Mbit/s", goodputOf, 0.05}, {"RTT mean ms", rttMeanOf, 0.08}, {"rwnd-limited s", rwndLimitedOf, 0.15}, {"retransmissions", retxOf, 0.20}})
}

// satelliteSeeds is the kernel's CUBIC, NewReno and Westwood+ (the last
// as bench/kernelcc's BPF program) on the satellite dumbbell of
// satelliteHyblaSeeds, seeds 1-10 each (2026-12-07 08:00-08:17, idle;
// bench/emu seeds -all -cc cubic,newreno, then -cc westwood, with the
// same sets and profile=linux, which the emulator ignores), no device
// drops in any run.
const satelliteSeeds = "testdata/kernel-satellite-seeds-2026-12-07.jsonl"

// TestSatelliteSeedsAgainstKernel holds profile linux to the kernel over
// ten seeds of the 600 ms satellite path (10 Mbit/s, 500 packets, 0.1%
// random loss), where one run says little: a run's few random losses
// decide whether a flow leaves slow start early (CUBIC 1.90 Mbit/s on
// seed 2) or overflows the queue with hundreds of drops (NewReno seeds 1,
// 3, 4, 8 and 10), and the kernel's CUBIC took either of two outcomes on
// seed 1 in four runs. Over the ten seeds the simulator's means are within
// 8% of the kernel's goodput and 15% of its retransmissions for all four
// controllers (measured: CUBIC +0.6% and +2%, NewReno +5% and +10%,
// Westwood+ +7% and +11%, Hybla +5% and +12%, against
// satelliteHyblaSeeds), and CUBIC, whose runs are decided by the random
// losses alone, matches run by run: nine of its ten seeds within 1% of
// the kernel's goodput. NewReno's and Westwood+'s extra retransmissions
// are their slow starts' overshoot (1,004-1,014 drops against the
// kernel's 825-847), which Linux's send buffer and its writer's wake-ups
// cut (docs/fidelity.md, "The satellite path over ten seeds").
func TestSatelliteSeedsAgainstKernel(t *testing.T) {
	sets := []string{"profile=linux", "bottleneck.delay=300ms", "bottleneck.queue.limit=500",
		"bottleneck.loss.model=bernoulli", "bottleneck.loss.p=0.001", "duration=30s"}
	for _, c := range []struct {
		cc, ref  string
		runByRun int // seeds whose goodput must be within 1% of the kernel's run
	}{
		{"cubic", satelliteSeeds, 8},
		{"newreno", satelliteSeeds, 5},
		{"westwood", satelliteSeeds, 0},
		{"hybla", satelliteHyblaSeeds, 0},
	} {
		k := seedsFlows(t, c.ref, c.cc, 10)
		s := simFlowsOf(simResults(t, "scenarios/dumbbell.yaml", c.cc, 10, sets))
		checkMeans(t, c.cc, k, s, []meanCheck{{"goodput Mbit/s", goodputOf, 0.08}, {"retransmissions", retxOf, 0.15}})
		same := 0
		for i := range k {
			if math.Abs(s[i].GoodputMbps/k[i].GoodputMbps-1) <= 0.01 {
				same++
			}
		}
		t.Logf("%s: %d of 10 seeds within 1%% of the kernel's goodput", c.cc, same)
		if same < c.runByRun {
			t.Errorf("%s: %d of 10 seeds within 1%% of the kernel's goodput, want at least %d", c.cc, same, c.runByRun)
		}
	}
}

// seedsRuns reads the kernel's runs of cc from a file of `bench/emu seeds
// -json` lines with one flow each, by seed (1..seeds, each once).
func seedsRuns(t *testing.T, file, cc string, seeds int) []*emu.Result {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*emu.Result, seeds)
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var row struct {
			CC     string      `json:"cc"`
			Result *emu.Result `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil || row.Result == nil || len(row.Result.Flows) != 1 {
			t.Fatalf("%s:%d: want a line of seeds -json with one flow (%v)", file, i+1, err)
		}
		if row.CC != cc {
			continue
		}
		seed := row.Result.Seed
		if seed < 1 || seed > uint64(seeds) || out[seed-1] != nil {
			t.Fatalf("%s:%d: %s seed %d, want each of seeds 1-%d once", file, i+1, cc, seed, seeds)
		}
		out[seed-1] = row.Result
	}
	for i, r := range out {
		if r == nil {
			t.Fatalf("%s: no %s run of seed %d", file, cc, i+1)
		}
	}
	return out
}

// seedsFlows is seedsRuns' flows, each with its rwnd-limited time.
func seedsFlows(t *testing.T, file, cc string, seeds int) []*experiment.FlowResult {
	t.Helper()
	out := make([]*experiment.FlowResult, seeds)
	for i, r := range seedsRuns(t, file, cc, seeds) {
		if out[i] = &r.Flows[0]; out[i].RwndLimitedS == nil {
			t.Fatalf("%s: %s seed %d has no rwnd-limited time", file, cc, i+1)
		}
	}
	return out
}

// simFlowsOf is each one-flow result's flow, in order.
func simFlowsOf(rs []*experiment.Result) []*experiment.FlowResult {
	out := make([]*experiment.FlowResult, len(rs))
	for i, r := range rs {
		out[i] = &r.Flows[0]
	}
	return out
}

func goodputOf(f *experiment.FlowResult) float64 { return f.GoodputMbps }
func rttMeanOf(f *experiment.FlowResult) float64 { return f.RTTMeanMs }
func retxOf(f *experiment.FlowResult) float64    { return float64(f.Retransmissions) }

// rwndLimitedOf is the flow's receive-window-limited time, 0 where the
// result has none (a simulator without receive_window linux).
func rwndLimitedOf(f *experiment.FlowResult) float64 {
	if f.RwndLimitedS == nil {
		return 0
	}
	return *f.RwndLimitedS
}

// meanCheck is a measure whose mean over the seeds the simulator must
// keep within tol of the kernel's, as a fraction of it.
type meanCheck struct {
	what string
	v    func(*experiment.FlowResult) float64
	tol  float64
}

// checkMeans holds the simulator's flows s to the kernel's k, seed by
// seed's means, on each measure.
func checkMeans(t *testing.T, label string, k, s []*experiment.FlowResult, checks []meanCheck) {
	t.Helper()
	for _, c := range checks {
		km, sm := meanOf(k, c.v), meanOf(s, c.v)
		dev, ok := nearMean(sm, km, c.tol)
		t.Logf("%s %s: %.2f over the seeds, kernel %.2f (%+.1f%%)", label, c.what, sm, km, 100*dev)
		if !ok {
			t.Errorf("%s %s: %.2f, %+.1f%% from the kernel's %.2f (want within %g%%)", label, c.what, sm, 100*dev, km, 100*c.tol)
		}
	}
}

// meanOf is v's mean over the flows.
func meanOf(fs []*experiment.FlowResult, v func(*experiment.FlowResult) float64) float64 {
	xs := make([]float64, len(fs))
	for i, f := range fs {
		xs[i] = v(f)
	}
	return stat.Mean(xs, nil)
}
