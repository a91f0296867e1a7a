package marlin

import (
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/scenarios"
)

// TestBackgroundPattern: the SATCOM-to-UHF scenario's background, as
// delivered: the UDP elephants send 0.8 Mbit/s in their 2-s slots of each
// 8-s period on SATCOM and stop at the switch; the TCP elephants fill the
// other slots; the mice are active throughout.
func TestBackgroundPattern(t *testing.T) {
	s, err := scenarios.Load("satcom-uhf")
	if err != nil {
		t.Fatal(err)
	}
	s.Duration.V = 20 * time.Second
	p, err := BackgroundPattern(s, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) Component {
		for _, c := range p.Components {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("no component %s in %+v", name, p.Components)
		return Component{}
	}
	udp, tcp, mice := get("udp-elephant"), get("tcp-elephant"), get("mice-1")
	if udp.Kind != "udp" || tcp.Kind != "tcp" {
		t.Errorf("kinds %s, %s", udp.Kind, tcp.Kind)
	}
	mean := func(c Component, from, to float64) float64 {
		var s float64
		n := 0
		for i, x := range p.T {
			if x > from && x <= to {
				s += c.Mbps[i]
				n++
			}
		}
		return s / float64(n)
	}
	// Slot 0.5-2 s: the UDP elephant delivers about its 0.8 Mbit/s (the
	// link is 1 Mbit/s, shared with the mice).
	if u := mean(udp, 0.5, 2); u < 0.5 || u > 0.85 {
		t.Errorf("UDP elephant in its slot: %.3f Mbit/s, want about 0.8", u)
	}
	if u := mean(udp, 2.5, 4); u > 0.05 {
		t.Errorf("UDP elephant outside its slot: %.3f Mbit/s", u)
	}
	// It stops emitting at the switch (10 s); what it had queued drains
	// over the slower link (Mbps), but it offers nothing more.
	var offered float64
	for i, x := range p.T {
		if x > 10.1 {
			offered += udp.OfferedMbps[i]
		}
	}
	if offered != 0 {
		t.Errorf("UDP elephant emitted after the switch: %.3f", offered)
	}
	if u := mean(udp, 16.5, 18); u > 0.01 {
		t.Errorf("UDP elephant delivered %.3f Mbit/s at 16.5-18 s, want 0", u)
	}
	if tcp.OfferedMbps != nil {
		t.Errorf("a TCP component has an offered series")
	}
	// A TCP elephant gets 2 s, two RTTs of the SATCOM path: it leaves slow
	// start with little delivered, but it delivers.
	if c := mean(tcp, 2, 4); c < 0.02 {
		t.Errorf("TCP elephant in its slot: %.3f Mbit/s", c)
	}
	if m := mean(mice, 0, 20); m <= 0 {
		t.Errorf("mice silent")
	}
	if len(p.Changes) != 1 || math.Abs(p.Changes[0]-10) > 1e-9 {
		t.Errorf("changes %v, want the switch at 10 s", p.Changes)
	}
	tt, m := p.Window(0, 8)
	if len(tt) != 80 || len(m) != len(p.Components) || len(m[0]) != 80 {
		t.Errorf("window: %d times, %d series", len(tt), len(m))
	}
	s.Background = nil
	if _, err := BackgroundPattern(s, time.Second); err == nil {
		t.Errorf("a scenario without background gave no error")
	}
}
