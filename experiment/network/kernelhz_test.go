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
