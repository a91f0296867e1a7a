package network

import "testing"

// TestSeriesBBREstimates: the time series carry a BBR flow's BtlBw and
// RTprop estimates (the data-centre paper's Figure 2(b) probe): before a
// 20 -> 5 Mbit/s drop the BtlBw estimate is near 20 Mbit/s and RTprop near
// the 40 ms propagation RTT; the max filter still holds the old rate just
// after the drop and has fallen to about 5 Mbit/s a few seconds later.
// Non-BBR flows have no estimates.
func TestSeriesBBREstimates(t *testing.T) {
	s, err := parseScenario(`
name: probe
duration: 8s
sample: 100ms
bottleneck: {rate: 20Mbps, delay: 20ms, queue: {limit: 138}, schedule: [{at: 3s, rate: 5Mbps}]}
flows: [{name: bbr, cc: bbr}, {name: cubic, cc: cubic, start: 7s}]
`)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	n.Run()
	fs := n.Series.Flows[0]
	if len(fs.BtlBwMbps) != len(fs.CwndBytes) || len(fs.RTpropMs) != len(fs.CwndBytes) {
		t.Fatalf("estimates have %d/%d samples, cwnd %d", len(fs.BtlBwMbps), len(fs.RTpropMs), len(fs.CwndBytes))
	}
	at := func(sec float64) int { return int(sec*10) - fs.Offset }
	if b := fs.BtlBwMbps[at(2.9)]; b < 17 || b > 21 {
		t.Errorf("BtlBw at 2.9 s: %.2f Mbit/s, want about 20 (payload rate 19.3)", b)
	}
	if r := fs.RTpropMs[at(2.9)]; r < 40 || r > 42 {
		t.Errorf("RTprop at 2.9 s: %.2f ms, want about 40", r)
	}
	if b := fs.BtlBwMbps[at(3.2)]; b < 17 {
		t.Errorf("BtlBw at 3.2 s: %.2f Mbit/s; the max filter should still hold about 20", b)
	}
	if b := fs.BtlBwMbps[at(6.9)]; b < 4 || b > 6 {
		t.Errorf("BtlBw at 6.9 s: %.2f Mbit/s, want about 5", b)
	}
	if c := n.Series.Flows[1]; c.BtlBwMbps != nil || c.RTpropMs != nil {
		t.Errorf("a CUBIC flow has BBR estimates")
	}
}
