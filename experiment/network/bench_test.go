package network

import (
	"strconv"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
)

// BenchmarkSteadyState measures the simulator once warm: each op simulates
// 10 ms of ten CUBIC flows through a 1 Gbit/s bottleneck (about 830
// data packets and their ACKs). allocs/op must be 0: no packet, event or
// scoreboard entry is allocated per packet in steady state.
func BenchmarkSteadyState(b *testing.B) {
	// ECN: the queue marks, senders reduce in CWR, receivers echo.
	const marking = "{limit: 1000, mark_threshold: 65}"
	for _, c := range []struct {
		name, cc, profile, queue string
		ecn, growth, sndbuf      bool
	}{
		{"cubic", "cubic", "", "", false, false, false}, {"bbr", "bbr", "", "", false, false, false}, {"newreno", "newreno", "", "", false, false, false},
		// Linux's pacing and the rest of the profile.
		{"bbr-linux", "bbr", "linux", "", false, false, false},
		// The profile with Linux's window growth and Disorder state, and
		// its verdict on the window's use.
		{"cubic-linux-growth", "cubic", "linux", "", false, true, false},
		// Linux's send buffer, its skbs accounted (sndbuf.go).
		{"cubic-sndbuf", "cubic", "linux", "", false, false, true},
		{"cubic-ecn", "cubic", "", marking, true, false, false},
		{"dctcp", "dctcp", "", marking, false, false, false}, // dctcp turns ECN on itself
	} {
		b.Run(c.name, func(b *testing.B) {
			s := benchScenarioWith(b, c.cc, c.profile, c.queue, c.ecn)
			if c.growth {
				s.Transport.WindowGrowth = "linux"
				s.Transport.CwndLimited = "linux"
			}
			if c.sndbuf {
				s.Transport.SendBuffer = "linux"
			}
			n, err := Build(s)
			if err != nil {
				b.Fatal(err)
			}
			// Warm up: slow start, queue build-up, pools and rings grown.
			n.Sched.RunUntil(clock.Time(3 * time.Second))
			b.ReportAllocs()
			b.ResetTimer()
			start := n.Sched.Events()
			t := n.Now()
			for b.Loop() {
				t = t.Add(10 * time.Millisecond)
				n.Sched.RunUntil(t)
			}
			b.ReportMetric(float64(n.Sched.Events()-start)/float64(b.N), "events/op")
		})
	}
}

func benchScenario(b *testing.B, cc, profile string) *scenarioT {
	b.Helper()
	return benchScenarioWith(b, cc, profile, "", false)
}

// benchScenarioWith is benchScenario with the bottleneck's queue given in
// YAML ("" for a 1000-packet DropTail) and transport.ecn.
func benchScenarioWith(b *testing.B, cc, profile, queue string, ecn bool) *scenarioT {
	b.Helper()
	if profile == "" {
		profile = "default"
	}
	if queue == "" {
		queue = "{limit: 1000}"
	}
	s, err := parseScenario(`
name: bench
profile: ` + profile + `
duration: 1000s # within the run budget (scenario.MaxEvents); b.Loop needs far less
bottleneck: {rate: 1Gbps, delay: 5ms, queue: ` + queue + `}
transport: {ecn: ` + strconv.FormatBool(ecn) + `}
flows:
  - {name: f, cc: ` + cc + `, count: 10}
`)
	if err != nil {
		b.Fatal(err)
	}
	return s
}
