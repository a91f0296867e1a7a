package experiment

import (
	"math"
	"testing"
)

// TestTCPBackgroundAccounting: bug 3. TCP background flows added to
// delivered only, so `cclab run datacenter` showed offered 0.00, sent 0.00,
// delivered 209 Mbit/s. Sent now counts every byte their senders sent
// (so sent >= delivered), and arrivals report their offered load: mean size
// over mean inter-arrival time, here 0.2 x 100 Mbit/s.
func TestTCPBackgroundAccounting(t *testing.T) {
	s := mustParse(t, `
name: bg
duration: 5s
bottleneck: {rate: 100Mbps, delay: 5ms, queue: {limit: 200}}
flows: [{name: f, cc: newreno}]
background:
  - {name: bulk, type: tcp, cc: newreno}
  - {name: web, type: arrivals, cc: newreno, sizes: websearch, load: 0.2}
`)
	r, _ := run(t, s)
	if len(r.Background) != 2 {
		t.Fatalf("background %+v", r.Background)
	}
	for _, b := range r.Background {
		if b.DeliveredMbps <= 0 || b.SentMbps < b.DeliveredMbps {
			t.Errorf("%s: sent %g, delivered %g Mbit/s", b.Name, b.SentMbps, b.DeliveredMbps)
		}
	}
	if bulk := r.Background[0]; bulk.OfferedMbps != 0 {
		t.Errorf("tcp entry offers %g Mbit/s; its controller sets its rate", bulk.OfferedMbps)
	}
	if web := r.Background[1]; math.Abs(web.OfferedMbps-20) > 1e-6 {
		t.Errorf("arrivals offered %g Mbit/s, want 20", web.OfferedMbps)
	}
}

// TestJainUndefinedWithoutDelivery: bug 5. With no measured flow
// delivering, Jain's index was reported as 1 (perfect fairness).
func TestJainUndefinedWithoutDelivery(t *testing.T) {
	// A 100% lossy link: nothing is delivered.
	s := mustParse(t, "name: j\nduration: 2s\nbottleneck: {rate: 1Mbps, loss: {model: gilbert-elliott, p: 1, r: 0.000001, loss_bad: 1}}\nflows: [{cc: newreno, count: 2}]\n")
	r, _ := run(t, s)
	if r.Jain != nil {
		t.Errorf("Jain %v with nothing delivered", *r.Jain)
	}
	s = mustParse(t, "name: j\nduration: 2s\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, count: 2}]\n")
	if r, _ := run(t, s); r.Jain == nil || *r.Jain < 0.5 {
		t.Errorf("Jain %v for two equal flows", r.Jain)
	}
}
