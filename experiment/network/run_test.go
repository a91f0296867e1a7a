package network

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/transport/tcp"
)

// TestCancelActsWithinASecond: hardening 5. Cancellation was checked every
// 100 ms of simulated time, so a run whose events are dense in simulated
// time (a 1 µs RTO bound, a fast link) ignored Ctrl-C for minutes. Now the
// context is looked at every few thousand events.
func TestCancelActsWithinASecond(t *testing.T) {
	for _, yml := range []string{
		// Timers every microsecond: 100 simulated ms take ~10^5 events.
		"name: t\nduration: 100s\nbottleneck: {rate: 10Mbps, delay: 10ms, loss: {p: 0.5}}\ntransport: {min_rto: 1us, max_rto: 1us}\nflows: [{cc: newreno}]\n",
		// A terabit link: 100 simulated ms are ~5e7 events.
		"name: t\nduration: 10s\nbottleneck: {rate: 1000Gbps, delay: 1ms}\nflows: [{cc: newreno}]\nbackground: [{type: cbr, rate: 1000Gbps}]\n",
	} {
		n := build(t, yml)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		err := n.RunContext(ctx)
		took := time.Since(start)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want cancellation", err)
		}
		// 200 ms until the cancel, then at most one check interval; a
		// second of slack for the shared machine.
		if took > 1200*time.Millisecond {
			t.Errorf("cancellation took %v after the cancel", took-200*time.Millisecond)
		}
	}
}

// TestAbsurdRunsRefusedUpFront: hardening 4, 5 and 6. Each ran out of
// memory or ran for hours; now Build (and Validate) refuse them with the
// estimate.
func TestAbsurdRunsRefusedUpFront(t *testing.T) {
	base := "name: t\nbottleneck: {rate: 10Mbps}\nflows: [{cc: newreno}]\n"
	tests := []struct{ name, yml, want string }{
		{"terabit for 1e6 s", "name: t\nduration: 1000000s\nbottleneck: {rate: 1000Gbps}\nflows: [{cc: newreno}]\n", "would simulate about 5e+14 events"},
		{"CBR at 1e15bps", base + "background: [{type: cbr, rate: 1e15bps}]\n", "events"},
		{"arrivals every ns", base + "background: [{type: arrivals, cc: newreno, size: 10KB, interval: 1ns}]\n", "flows in total"},
		{"10 million flows", "name: t\nbottleneck: {rate: 10Mbps}\nflows:\n" + strings.Repeat("  - {cc: newreno, count: 100000}\n", 100), "flows in total"},
		{"sample 1us", "name: t\nduration: 60s\nsample: 1us\nbottleneck: {rate: 10Mbps}\nflows: [{cc: newreno}]\n", "sample less often"},
		{"rto 1ns", "name: t\nbottleneck: {rate: 10Mbps}\ntransport: {min_rto: 1ns, max_rto: 1ns}\nflows: [{cc: newreno}]\n", "test.yaml:3:22: transport.min_rto: must be at least 1µs"},
		{"max_rto below the default min", "name: t\nbottleneck: {rate: 10Mbps}\ntransport: {max_rto: 1ms}\nflows: [{cc: newreno}]\n", "test.yaml:3:22: transport.max_rto: need min_rto <= max_rto"},
		{"recv_window 0B", "name: t\nbottleneck: {rate: 10Mbps}\ntransport: {recv_window: 0B}\nflows: [{cc: newreno}]\n", "transport.recv_window: must be at least one MSS"},
	}
	for _, tt := range tests {
		_, err := parseScenarioAs(tt.yml)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
	// Build checks too: a caller may set Sample after validation.
	s, err := parseScenarioAs("name: t\nduration: 60s\nbottleneck: {rate: 10Mbps}\nflows: [{cc: newreno}]\n")
	if err != nil {
		t.Fatal(err)
	}
	s.Sample.V = time.Microsecond
	if _, err := Build(s); err == nil || !strings.Contains(err.Error(), "sample less often") {
		t.Errorf("Build with a 1µs sample: %v", err)
	}
}

func parseScenarioAs(yml string) (*scenarioT, error) {
	s, err := parseScenario(yml)
	if err != nil {
		return nil, errors.New(strings.Replace(err.Error(), "bench.yaml", "test.yaml", 1))
	}
	return s, nil
}

// BenchmarkSteadyStateInterruptible is BenchmarkSteadyState/cubic run
// through RunUntilOr with a context check, as RunContext does: the cost of
// interruptibility (a counter per event, ctx.Err every 4096 events).
func BenchmarkSteadyStateInterruptible(b *testing.B) {
	n, err := Build(benchScenario(b, "cubic", ""))
	if err != nil {
		b.Fatal(err)
	}
	n.Sched.RunUntil(clock.Time(3 * time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := func() bool { return ctx.Err() != nil }
	b.ReportAllocs()
	b.ResetTimer()
	t := n.Now()
	for b.Loop() {
		t = t.Add(10 * time.Millisecond)
		n.Sched.RunUntilOr(t, checkEvery, stop)
	}
}

// TestScenarioDefaultsAreTheTransports: validation's bounds (a byte queue
// holds a full packet, recv_window holds an MSS) use the scenario's
// defaults, which must be the transport's.
func TestScenarioDefaultsAreTheTransports(t *testing.T) {
	c := tcp.Config{}.WithDefaults()
	if c.MSS != scenario.DefaultMSS || c.Header != scenario.DefaultHeader {
		t.Errorf("transport defaults MSS %d, header %d; scenario's %d, %d", c.MSS, c.Header, scenario.DefaultMSS, scenario.DefaultHeader)
	}
}
