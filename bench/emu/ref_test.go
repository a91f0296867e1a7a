package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/experiment"
)

var idleKernel = []string{
	"testdata/kernel-idle-2026-12-03-pass1.jsonl",
	"testdata/kernel-idle-2026-12-03-pass2.jsonl",
}

// idleKernelLater holds two more idle passes, of every scenario the
// emulator runs (idleKernel's five and bbr-bw-probe, bbr-rtt-probe and
// dc-paper), taken on 2026-12-05 on another host (docs/fidelity.md, "The
// idle passes on a second host").
var idleKernelLater = []string{
	"testdata/kernel-idle-2026-12-05-pass1.jsonl",
	"testdata/kernel-idle-2026-12-05-pass2.jsonl",
}

// TestSimulatorAgainstIdleKernel scores the simulator against the idle
// kernel passes behind docs/fidelity.md's first table (18 flows of five
// scenarios and three controllers; targets: goodput within 5%,
// queueing-delay p95 within 20%, retransmissions within 25% of the
// kernel's range), and against the passes of a second host, on those
// five scenarios and on three more (18 flows). The counts are floors: a
// change that moves the simulator away from Linux on balance fails here,
// by default and with profile: linux; one that moves it closer raises the
// documented figures.
func TestSimulatorAgainstIdleKernel(t *testing.T) {
	first, err := loadRef(idleKernel)
	if err != nil {
		t.Fatal(err)
	}
	later, err := loadRef(idleKernelLater)
	if err != nil {
		t.Fatal(err)
	}
	five := []string{"cellular", "deepcc-cellular", "dumbbell", "lossy", "satcom-uhf"}
	three := []string{"bbr-bw-probe", "bbr-rtt-probe", "dc-paper"}
	for _, c := range []struct {
		set []string
		// floors against idleKernel, and idleKernelLater on five and three
		first, laterFive, laterThree [3]int
	}{
		// 13, 15, 12 and 11, 14, 11: the trace link in mm-link's order at
		// an opportunity's instant (2026-12-06; 13, 15, 10 and 10, 15, 9
		// before) brings cellular's NewReno retransmissions in against
		// both hosts, its BBR's against the first, deepcc-cellular's
		// BBR's against the second and cellular's CUBIC goodput in
		// against both; it takes cellular's NewReno goodput out of the
		// first host's range and deepcc-cellular's BBR queueing delay
		// out of the second's (148 ms against 191-200).
		{nil, [3]int{13, 15, 12}, [3]int{11, 14, 11}, [3]int{12, 17, 12}},
		// 15, 15 against idleKernel: Reno's whole segments (2026-12-04)
		// moved one of lossy's two NewReno flows of this one seed out of
		// target on goodput and queueing delay (16, 16 before); over ten
		// seeds both flows are closer to the kernel than before
		// (TestRenoWholeSegmentsAgainstKernel). Linux's pacing (2026-12-06;
		// 15, 15, 14; 15, 16, 12; 17, 18, 8 before it) brings
		// retransmissions in on deepcc-cellular's and lossy's BBR and on
		// dc-paper (three of its BBR flows, two NewReno flows beside its
		// BBR background), and takes goodput out on lossy's two-flow races
		// with BBR and on dc-paper's four flows' shares of this one seed;
		// over seeds both workloads come closer to the kernel
		// (TestLinuxPacingAgainstKernel). Linux's start of recovery
		// (2026-12-06, later; 16, 15, 14; 13, 16, 14; 14, 18, 13 before
		// it) brings retransmissions in on lossy's BBR and dc-paper's
		// CUBIC flows and queueing delay in on lossy's races, and moves
		// this one seed's shares of dc-paper's four-flow races (goodput
		// out on five of its twelve flows, in on one); over seeds BBR
		// comes closer to the kernel (TestRecoveryStartAgainstKernel).
		// Linux's turn from the loss state into recovery (2026-12-06,
		// evening) moves dc-paper's CUBIC shares (one flow with a timeout)
		// and brings one more flow's goodput in. The trace link in
		// mm-link's order at an opportunity's instant (2026-12-06, later;
		// 17, 16, 14 and 13, 17, 15 before) brings cellular's CUBIC and
		// NewReno retransmissions in against the first host and CUBIC's
		// against the second. Short segments at the window's edge
		// (2026-12-06, night; 17, 16, 16 and 13, 17, 16 before) bring cellular's
		// BBR retransmissions in against the first host (4,028 against
		// 3,494-3,783; 4,747 before) and take those of lossy's CUBIC flow
		// racing BBR out against the second (1,054 against 757-801; 988
		// before), a race whose seeds move either way (over ten seeds
		// 1,051 against 1,050 before). Linux's PRR joining the profile
		// (2026-12-07; 17, 16, 17 and 13, 17, 15 unchanged, 11, 18, 16
		// before) takes three of dc-paper's four CUBIC flows' resends of
		// this one seed under the kernel's range (144 a run against 174
		// before and the kernel's 194-247); over ten seeds the four flows
		// resend 171 a run against 176 before and the kernel's 205, at
		// 7.47 Mbit/s against 7.70 and the kernel's 7.58
		// (TestLinuxPRRInProfileAgainstKernel). Short segments counted as
		// whole packets under the window (2026-12-07; 17, 16, 17 and 13,
		// 17, 15 before) bring cellular's NewReno goodput and queueing
		// delay into target against the first host (10.39 Mbit/s and 72
		// ms against 10.43-10.51 and 76; 9.52 and 53 before) and take
		// cellular's CUBIC goodput (11.87 Mbit/s against 10.92-11.17;
		// 11.70 before) and satcom-uhf's BBR goodput of this one seed out
		// against both (0.28 against 0.30-0.31; over 40 seeds the
		// transfer's median comes to 16.96 s from 16.84, the kernel's
		// 16.98).
		{[]string{"profile=linux"}, [3]int{16, 17, 17}, [3]int{12, 17, 15}, [3]int{11, 18, 14}},
	} {
		flows, _, err := simFlows(append(slices.Clone(five), three...), "cubic,bbr,newreno", 20*time.Second, sides{sets: c.set})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct {
			what  string
			ref   kernelRef
			names []string
			floor [3]int
		}{
			{"idle kernel, 2026-12-03", first, five, c.first},
			{"idle kernel, 2026-12-05", later, five, c.laterFive},
			{"idle kernel, 2026-12-05", later, three, c.laterThree},
		} {
			var these []simFlow
			for _, f := range flows {
				if slices.Contains(r.names, f.scenario) {
					these = append(these, f)
				}
			}
			in, scored := refCounts(these, r.ref)
			t.Logf("%v against the %s, %v: within target in %v of %d flows (goodput, qdelay p95, retransmissions)", c.set, r.what, r.names, in, scored)
			if scored != 18 {
				t.Fatalf("%v, %s %v: %d flows scored, want 18", c.set, r.what, r.names, scored)
			}
			for m := range 3 {
				if in[m] < r.floor[m] {
					t.Errorf("%v against the %s, %v: %s within target for %d flows, fewer than the documented %d", c.set, r.what, r.names, refMetrics[m], in[m], r.floor[m])
				}
			}
		}
	}
}

// TestWithin: inside the kernel's range, or within the tolerance of its
// nearer end; a zero end admits only zero.
func TestWithin(t *testing.T) {
	for _, c := range []struct {
		v    float64
		vals []float64
		ok   bool
	}{
		{10, []float64{9, 11}, true},
		{11.5, []float64{9, 11}, true},  // 4.5% above 11
		{11.6, []float64{9, 11}, false}, // 5.5% above
		{8.6, []float64{9, 11}, true},   // 4.4% below 9
		{8.5, []float64{9, 11}, false},  // 5.6% below
		{0, []float64{0}, true},
		{1, []float64{0, 0}, false},
	} {
		if got := within(c.v, c.vals, 0.05); got != c.ok {
			t.Errorf("within(%g, %v, 5%%) = %v, want %v", c.v, c.vals, got, c.ok)
		}
	}
}

// TestNearMean: the deviation from the mean as a fraction, within the
// tolerance either way; a zero mean admits only zero.
func TestNearMean(t *testing.T) {
	for _, c := range []struct {
		v, mean, dev float64
		ok           bool
	}{
		{103.9, 100, 0.039, true},
		{96.1, 100, -0.039, true},
		{104.1, 100, 0.041, false},
		{95.9, 100, -0.041, false},
		{0, 0, 0, true},
		{1, 0, 0, false},
	} {
		d, ok := nearMean(c.v, c.mean, 0.04)
		if ok != c.ok || math.Abs(d-c.dev) > 1e-9 {
			t.Errorf("nearMean(%g, %g, 4%%) = %g, %v, want %g, %v", c.v, c.mean, d, ok, c.dev, c.ok)
		}
	}
}

// TestLoadRefNamesTheBadLine: a reference that is not fidelity -json
// output is refused with its file and line.
func TestLoadRefNamesTheBadLine(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{"{\"scenario\":\"x\",\"cc\":\"cubic\",\"emu\":{\"flows\":[{\"name\":\"a\"}]}}\nnot json\n", "bad.jsonl:2: "},
		{"{\"scenario\":\"x\"}\n", "bad.jsonl:1: want a line of fidelity -json"},
		{"", "bad.jsonl: empty"},
	} {
		p := filepath.Join(dir, "bad.jsonl")
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := loadRef([]string{p})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.body, err, c.want)
		}
	}
	if _, err := loadRef([]string{filepath.Join(dir, "missing.jsonl")}); err == nil {
		t.Error("a missing file accepted")
	}
}

// FuzzLoadRef: any file content is parsed or refused with an error, never
// a panic, and a parsed reference scores a flow without one.
func FuzzLoadRef(f *testing.F) {
	for _, p := range append(slices.Clone(idleKernel), idleKernelLater...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b[:min(len(b), 2000)]))
	}
	f.Add("{\"scenario\":\"x\",\"cc\":\"cubic\",\"emu\":{\"flows\":[{\"name\":\"a\",\"goodput_mbps\":-1}]}}\n")
	f.Add("")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body string) {
		p := filepath.Join(dir, "ref.jsonl")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		ref, err := loadRef([]string{p})
		if err != nil {
			return
		}
		for k := range ref {
			fl := experiment.FlowResult{Name: k.flow, GoodputMbps: 1}
			ref.score(k.scenario, k.cc, &fl)
		}
	})
}
