package network

import (
	"testing"
	"time"
)

// TestCarriedSeriesFollowsTheLink: bug 4. The "throughput" series was
// in-order goodput per bin: on a link dropping from 20 to 5 Mbit/s it
// read 0 for 1.6 s while the link was saturated, then 51.8 Mbit/s in one
// bin of a 5 Mbit/s link. CarriedMbps is what the bottleneck carried for
// the flow: never above the link's rate, and never 0 while it is busy.
func TestCarriedSeriesFollowsTheLink(t *testing.T) {
	n := build(t, `
name: drop
duration: 8s
sample: 100ms
bottleneck:
  rate: 20Mbps
  delay: 20ms
  queue: {limit: 200}
  schedule: [{at: 3s, rate: 5Mbps}]
flows: [{name: f, cc: cubic}]
`)
	n.Run()
	s := n.Series
	fs := s.Flows[0]
	if len(fs.CarriedMbps) != len(fs.Mbps) || len(fs.SentMbps) != len(fs.Mbps) {
		t.Fatalf("series lengths %d %d %d", len(fs.CarriedMbps), len(fs.SentMbps), len(fs.Mbps))
	}
	var total float64
	for k, c := range fs.CarriedMbps {
		total += c * s.Interval.Seconds() * 1e6 / 8
		at := time.Duration(s.T[fs.Offset+k])
		limit := 20.0
		if at > 3*time.Second+s.Interval {
			limit = 5
		}
		// One 1500-byte packet of slack per bin for the edges.
		if c > limit+1500*8/s.Interval.Seconds()/1e6 {
			t.Errorf("t=%v: carried %.2f Mbit/s on a %g Mbit/s link", at, c, limit)
		}
		if at > 1*time.Second && c == 0 {
			t.Errorf("t=%v: carried 0 while the flow is backlogged", at)
		}
	}
	if got, want := total, float64(n.Flows[0].BottleneckBytes); got < want*0.98 || got > want {
		t.Errorf("carried series sums to %.0f bytes, the link carried %.0f", got, want)
	}
}
