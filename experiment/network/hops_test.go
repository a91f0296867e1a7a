package network

import (
	"math"
	"testing"
)

// TestLossHops: a flow's loss applied on four hops in series erases
// 1-(1-q)^4 of its packets (TCP/NC's end-to-end loss over a daisy chain).
func TestLossHops(t *testing.T) {
	s, err := parseScenario(`
name: hops
duration: 60s
bottleneck: {rate: 10Mbps, delay: 10ms, queue: {limit: 1000}}
flows: [{name: f, cc: cubic, count: 10, loss: {model: bernoulli, p: 0.02}, loss_hops: 4}]
`)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	n.Run()
	var sent, lost int64
	for _, f := range n.Flows {
		sent += f.Sender.Stats().SegmentsSent
		lost += f.LastHopLosses
	}
	got := float64(lost) / float64(sent)
	want := 1 - math.Pow(0.98, 4)
	se := math.Sqrt(want * (1 - want) / float64(sent))
	if math.Abs(got-want) > 4*se || sent < 10000 {
		t.Errorf("%d of %d packets lost (%.4f), want %.4f ± %.4f", lost, sent, got, want, 4*se)
	}
	if _, err := parseScenario("name: x\nduration: 1s\nbottleneck: {rate: 1Mbps}\nflows: [{name: f, cc: cubic, loss_hops: 3}]\n"); err == nil {
		t.Errorf("loss_hops without a loss model gave no error")
	}
}
