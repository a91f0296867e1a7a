package network

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cclab/cclab/experiment/scenario"
)

// TestKernelHZPrecedence: a flow's transport.kernel_hz wins over the
// scenario's, 0 included (exact timers under a scenario-wide or profile
// wheel), and an unset one takes the scenario's.
func TestKernelHZPrecedence(t *testing.T) {
	hz := func(v int) *int { return &v }
	show := func(t *scenario.Transport) string {
		if t == nil || t.KernelHZ == nil {
			return "unset"
		}
		return fmt.Sprint(*t.KernelHZ)
	}
	for _, c := range []struct {
		def  scenario.Transport
		over *scenario.Transport
		want int
	}{
		{scenario.Transport{}, nil, 0},
		{scenario.Transport{KernelHZ: hz(250)}, nil, 250},
		{scenario.Transport{KernelHZ: hz(250)}, &scenario.Transport{}, 250},
		{scenario.Transport{KernelHZ: hz(250)}, &scenario.Transport{KernelHZ: hz(0)}, 0},
		{scenario.Transport{KernelHZ: hz(250)}, &scenario.Transport{KernelHZ: hz(1000)}, 1000},
		{scenario.Transport{}, &scenario.Transport{KernelHZ: hz(100)}, 100},
	} {
		if got := kernelHZ(c.def, c.over); got != c.want {
			t.Errorf("scenario %s, flow %s: kernel_hz %d, want %d", show(&c.def), show(c.over), got, c.want)
		}
	}
}

// TestKernelHZOptOut: under profile linux-host, whose wheel makes the
// flows' timers fire on 4 ms jiffies, kernel_hz: 0 in the scenario or in
// every flow gives exactly the run of profile linux with Linux's RTT
// sample, SACK compression and exact timers, and the wheel changes the
// run.
func TestKernelHZOptOut(t *testing.T) {
	run := func(head, flowTransport string) []string {
		flows, _ := runFlows(t, head+`
name: hz
seed: 2
duration: 3s
bottleneck: {rate: 20Mbps, delay: 10ms, queue: {discipline: droptail, limit: 30}}
flows:
  - {name: a, cc: cubic, count: 12, start_spread: 3ms`+flowTransport+`}
`, 3*time.Second)
		return flows
	}
	exact := run("profile: linux\ntransport: {srtt_sample: oldest, sack_compression: true}\n", "")
	wheel := run("profile: linux-host\n", "")
	if reflect.DeepEqual(exact, wheel) {
		t.Fatal("profile linux-host ran as profile linux with exact timers: no wheel")
	}
	if got := run("profile: linux-host\ntransport: {kernel_hz: 0}\n", ""); !reflect.DeepEqual(got, exact) {
		t.Errorf("scenario-wide kernel_hz: 0 under linux-host: not exact timers\n got %v\nwant %v", got, exact)
	}
	if got := run("profile: linux-host\n", ", transport: {kernel_hz: 0}"); !reflect.DeepEqual(got, exact) {
		t.Errorf("every flow's kernel_hz: 0 under linux-host: not exact timers\n got %v\nwant %v", got, exact)
	}
	if got := run("profile: linux\ntransport: {srtt_sample: oldest, kernel_hz: 250, sack_compression: true}\n", ""); !reflect.DeepEqual(got, wheel) {
		t.Errorf("profile linux with srtt_sample oldest, kernel_hz 250 and sack_compression true is not linux-host")
	}
}

// TestKernelPhase: the wheel's phase is drawn from the run's seed (one
// seed, one phase; another seed, another), transport.kernel_phase pins
// it, and on flows started together it is what makes seeds differ: with
// the phase pinned every seed gives the same run, with it drawn they do
// not, and a seed's drawn run is the run at the phase it drew.
func TestKernelPhase(t *testing.T) {
	const file = `
name: phase
duration: 3s
profile: linux-host
bottleneck: {rate: 20Mbps, delay: 10ms, queue: {discipline: droptail, limit: 30}}
flows:
  - {name: a, cc: cubic, count: 12}
`
	build := func(seed int64, sets ...string) *Network {
		t.Helper()
		s, err := scenario.ParseWithOverrides([]byte(file), "phase.yaml", "", seed, sets)
		if err != nil {
			t.Fatal(err)
		}
		n, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	p1, p1again, p2 := build(1).wheelPhase, build(1).wheelPhase, build(2).wheelPhase
	if p1 != p1again || p1 == p2 {
		t.Fatalf("drawn phases: seed 1 %v and %v, seed 2 %v: want one per seed", p1, p1again, p2)
	}
	if p := build(1, "transport.kernel_phase=8ms").wheelPhase; p != 8*time.Millisecond {
		t.Fatalf("kernel_phase 8ms: phase %v", p)
	}
	run := func(seed int64, sets ...string) []string {
		t.Helper()
		flows, _ := runBuilt(build(seed, sets...), 3*time.Second)
		return flows
	}
	pinned1, pinned2 := run(1, "transport.kernel_phase=0s"), run(2, "transport.kernel_phase=0s")
	if !reflect.DeepEqual(pinned1, pinned2) {
		t.Fatal("kernel_phase 0s: seeds 1 and 2 differ, though nothing else in the run is random")
	}
	drawn1, drawn2 := run(1), run(2)
	if reflect.DeepEqual(drawn1, drawn2) {
		t.Error("drawn phases: seeds 1 and 2 gave the same run")
	}
	if at := run(2, fmt.Sprintf("transport.kernel_phase=%dns", p2.Nanoseconds())); !reflect.DeepEqual(at, drawn2) {
		t.Error("seed 2's run is not the run at the phase it drew")
	}
}
