package network

import (
	"fmt"
	"strings"
	"testing"
)

// scaleScenario is issue 19's workload: n long-lived NewReno flows starting
// over the first second through one bottleneck, 20 ms RTT, 10 s.
func scaleScenario(n int, rate string, limit int) string {
	return fmt.Sprintf(`
name: scale
seed: 1
duration: 10s
bottleneck: {rate: %s, delay: 10ms, queue: {discipline: droptail, limit: %d}}
flows:
  - {name: bulk, cc: newreno, count: %d, start_spread: 1s}
`, rate, limit, n)
}

// BenchmarkScale runs issue 19's workload whole, one simulation per op, and
// reports events/op and ns/event: the cost per event is what must not grow
// with the number of flows or the window. Run with -benchtime=1x or 3x; it
// is not part of go test.
func BenchmarkScale(b *testing.B) {
	cases := []struct {
		name string
		yml  string
	}{
		{"flows=100", scaleScenario(100, "1Gbps", 1000)},
		{"flows=1000", scaleScenario(1000, "1Gbps", 1000)},
		{"flows=10000", scaleScenario(10000, "10Gbps", 10000)},
		{"one-flow-10Mbps", scaleScenario(1, "10Mbps", 1000)},
		{"one-flow-10Gbps", strings.Replace(scaleScenario(1, "10Gbps", 42000), "10s", "2s", 1)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s, err := parseScenario(c.yml)
			if err != nil {
				b.Fatal(err)
			}
			var events uint64
			for b.Loop() {
				n, err := Build(s)
				if err != nil {
					b.Fatal(err)
				}
				n.Run()
				events += n.Sched.Events()
			}
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
		})
	}
}
