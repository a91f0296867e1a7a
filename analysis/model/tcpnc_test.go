package model

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
)

// slides is the setting of Kim et al.'s slides: RTT 100 ms (our choice; the
// slides do not state it), 1000-byte packets, a per-flow maximum of
// 0.5 Mbit/s (62.5 packets/s).
func slides(p, r float64) NCParams {
	return NCParams{
		TCPParams: TCPParams{RTT: 100 * time.Millisecond, RTO: time.Second, P: p, MSS: 1000, B: 1,
			Capacity: 500 * units.Kbps},
		R: r,
	}
}

func TestNCMasksErasures(t *testing.T) {
	for _, p := range []float64{0, 0.01, 0.0963, 0.3, 0.9} {
		rOpt, err := OptimalRedundancy(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []float64{rOpt, rOpt * 1.5} {
			if r > 100 {
				continue
			}
			np := NCParams{TCPParams: params(100*time.Millisecond, p, withWmax(50)), R: r}
			e, err := TCPNC(np)
			if err != nil {
				t.Fatalf("p=%g R=%g: %v", p, r, err)
			}
			// Wmax/RTT = 500 packets/s whatever the erasure rate.
			if !relClose(e.Goodput, 500, 1e-12) || !relClose(e.SendRate, 500*r, 1e-12) || e.EffectiveLoss != 0 || e.Limit != WindowLimited {
				t.Errorf("p=%g R=%g: %+v, want goodput 500 pkt/s, send rate %g, no effective loss, window-limited", p, r, e, 500*r)
			}
		}
	}
}

// TestNCUnitRedundancyIsTCP: with R = 1 there is no redundancy to mask
// anything, and the model is Padhye's TCP (p_eff = p); with no loss both
// are Wmax/RTT.
func TestNCUnitRedundancyIsTCP(t *testing.T) {
	for _, p := range []float64{0, 0.001, 0.01, 0.05, 0.2} {
		tp := params(100*time.Millisecond, p, withWmax(64), withB(2))
		nc, err := TCPNC(NCParams{TCPParams: tp, R: 1})
		if err != nil {
			t.Fatal(err)
		}
		tcp, err := Padhye(tp)
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(nc.Goodput, tcp.Goodput, 1e-12) || !relClose(nc.SendRate, tcp.SendRate, 1e-12) || nc.EffectiveLoss != p {
			t.Errorf("p=%g: TCP/NC with R=1 %+v, TCP %+v: want equal rates and effective loss p", p, nc, tcp)
		}
	}
}

// TestNCRedundancySweep reproduces the shape of the slides' redundancy
// sweep at p = 0.0963 (1/(1-p) = 1.107) with a 0.5 Mbit/s per-flow cap:
// throughput is low for small R, reaches C(1-p) at R = 1/(1-p), and beyond
// it decreases as C/R because redundant packets waste capacity.
func TestNCRedundancySweep(t *testing.T) {
	const p = 0.0963
	rOpt, _ := OptimalRedundancy(p)
	if !relClose(rOpt, 1.10656, 1e-5) {
		t.Fatalf("1/(1-0.0963) = %g, want 1.10656", rOpt)
	}
	capPkts := 500e3 / 8 / 1000 // 62.5 packets/s
	best, bestR := 0.0, 0.0
	prev := 0.0
	for i := 0; i <= 60; i++ {
		r := 1 + float64(i)/100
		e, err := TCPNC(slides(p, r))
		if err != nil {
			t.Fatal(err)
		}
		if e.Goodput > best {
			best, bestR = e.Goodput, r
		}
		switch {
		case r < rOpt:
			if e.Goodput < prev*(1-1e-12) {
				t.Errorf("R=%g: goodput %g fell below %g before R reaches 1/(1-p)", r, e.Goodput, prev)
			}
		default:
			// Masked and capacity-limited: TCP packets at C/(8 MSS R).
			if want := capPkts / r; !relClose(e.Goodput, want, 1e-12) || e.Limit != CapacityLimited {
				t.Errorf("R=%g: goodput %g (%v), want C/(8 MSS R) = %g, capacity-limited", r, e.Goodput, e.Limit, want)
			}
		}
		prev = e.Goodput
	}
	if !relClose(best, capPkts*(1-p), 1e-9) {
		t.Errorf("best goodput %g at R=%g, want C(1-p) = %g", best, bestR, capPkts*(1-p))
	}
	low, _ := TCPNC(slides(p, 1.0))
	if low.Goodput > best/2 {
		t.Errorf("goodput at R=1 is %g, want well below half the best %g: the jump the slides show", low.Goodput, best)
	}
}

// TestNCDegradesInProportion: with R = 1/(1-p) and a capacity cap, TCP/NC's
// goodput is C(1-p), linear in p, while TCP's collapses; TCP/NC is never
// below TCP.
func TestNCDegradesInProportion(t *testing.T) {
	capPkts := 62.5
	for _, p := range []float64{0, 0.001, 0.01, 0.05, 0.1, 0.2, 0.4} {
		r, _ := OptimalRedundancy(p)
		nc, err := TCPNC(slides(p, r))
		if err != nil {
			t.Fatal(err)
		}
		if want := capPkts * (1 - p); !relClose(nc.Goodput, want, 1e-9) {
			t.Errorf("p=%g: TCP/NC goodput %g, want C(1-p) = %g", p, nc.Goodput, want)
		}
		tcp, err := Padhye(slides(p, 1).TCPParams)
		if err != nil {
			t.Fatal(err)
		}
		if tcp.Goodput > nc.Goodput*(1+1e-12) {
			t.Errorf("p=%g: TCP goodput %g above TCP/NC's %g", p, tcp.Goodput, nc.Goodput)
		}
	}
	tcp1, _ := Padhye(slides(0.01, 1).TCPParams)
	tcp10, _ := Padhye(slides(0.1, 1).TCPParams)
	// Super-linear collapse: ten times the loss costs TCP far more than
	// ten per cent (about 4x here), where TCP/NC loses 9%.
	if tcp10.Goodput > tcp1.Goodput/3 {
		t.Errorf("TCP goodput %g at p=0.1 vs %g at p=0.01: want a collapse by more than 3x", tcp10.Goodput, tcp1.Goodput)
	}
}

// TestNCMonotoneInLoss: for a fixed R, more erasures never help.
func TestNCMonotoneInLoss(t *testing.T) {
	for _, r := range []float64{1, 1.1, 1.2, 2} {
		prev := math.Inf(1)
		for i := range 999 {
			p := float64(i) / 1000
			np := slides(p, r)
			e, err := TCPNC(np)
			if err != nil {
				t.Fatalf("R=%g p=%g: %v", r, p, err)
			}
			if e.Goodput > prev*(1+1e-12) {
				t.Fatalf("R=%g: goodput rises from %g to %g at p=%g", r, prev, e.Goodput, p)
			}
			prev = e.Goodput
		}
	}
}

func TestNCWindowTrajectory(t *testing.T) {
	for _, b := range []float64{1, 2} {
		np := NCParams{TCPParams: params(100*time.Millisecond, 0.1, withWmax(20), withB(b)), R: 1.2}
		for r := 1; r <= 100; r++ {
			got, err := NCWindow(np, r)
			if err != nil {
				t.Fatal(err)
			}
			if want := math.Min(20, 1+float64(r-1)/b); got != want {
				t.Fatalf("b=%g: E[W_%d] = %g, want %g", b, r, got, want)
			}
		}
	}
	if _, err := NCWindow(NCParams{TCPParams: params(100*time.Millisecond, 0.1, withWmax(20)), R: 1.05}, 3); err == nil {
		t.Error("NCWindow with R(1-p) < 1: no error")
	}
	if _, err := NCWindow(NCParams{TCPParams: params(100*time.Millisecond, 0.1, withWmax(20)), R: 1.2}, 0); err == nil {
		t.Error("NCWindow of round 0: no error")
	}
	growth := []struct {
		p, r, b, want float64
	}{
		{0.1, 1, 1, 0.9},
		{0.1, 1.2, 1, 1},
		{0.1, 1.2, 2, 0.5},
		{0.5, 1, 2, 0.25},
	}
	for _, tt := range growth {
		got, err := NCWindowGrowth(NCParams{TCPParams: params(time.Second, tt.p, withB(tt.b)), R: tt.r})
		if err != nil || !relClose(got, tt.want, 1e-12) {
			t.Errorf("growth(p=%g, R=%g, b=%g) = %g, %v, want %g", tt.p, tt.r, tt.b, got, err, tt.want)
		}
	}
}

// TestNCDuration compares the closed-form average over a finite connection
// with a round-by-round sum.
func TestNCDuration(t *testing.T) {
	for _, tt := range []struct {
		wmax, b float64
		rounds  int
	}{{20, 1, 1}, {20, 1, 10}, {20, 1, 19}, {20, 1, 20}, {20, 1, 21}, {20, 2, 1000}, {7.5, 1, 50}, {1, 1, 30}} {
		np := NCParams{TCPParams: params(100*time.Millisecond, 0.05, withWmax(tt.wmax), withB(tt.b)), R: 1.2,
			Duration: time.Duration(tt.rounds) * 100 * time.Millisecond}
		e, err := TCPNC(np)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for r := 1; r <= tt.rounds; r++ {
			w, _ := NCWindow(np, r)
			sum += w
		}
		want := sum / float64(tt.rounds) / 0.1
		if !relClose(e.Goodput, want, 1e-9) {
			t.Errorf("Wmax=%g b=%g %d rounds: goodput %g, want mean E[W_r]/RTT = %g", tt.wmax, tt.b, tt.rounds, e.Goodput, want)
		}
	}
	// A long connection approaches the steady state.
	steady, _ := TCPNC(NCParams{TCPParams: params(100*time.Millisecond, 0.05, withWmax(20)), R: 1.2})
	long, _ := TCPNC(NCParams{TCPParams: params(100*time.Millisecond, 0.05, withWmax(20)), R: 1.2, Duration: 1000 * time.Second})
	if !relClose(long.Goodput, steady.Goodput, 0.002) || long.Goodput > steady.Goodput {
		t.Errorf("1000 s connection %g vs steady state %g pkt/s: want slightly below, within 0.2%%", long.Goodput, steady.Goodput)
	}
}

func TestNCNoNaN(t *testing.T) {
	for _, p := range []float64{0, MinLoss, 1e-6, 0.01, 0.0963, 0.5, 0.99, math.Nextafter(1, 0)} {
		for _, r := range []float64{1, 1.0001, 1.12, 2, 100} {
			for _, cfg := range []func(*TCPParams){withWmax(1), withWmax(64), func(tp *TCPParams) { tp.Capacity = units.Mbps }} {
				tp := params(10*time.Millisecond, p)
				cfg(&tp)
				for _, d := range []time.Duration{0, 10 * time.Millisecond, time.Hour} {
					e, err := TCPNC(NCParams{TCPParams: tp, R: r, Duration: d})
					if err != nil {
						t.Fatalf("p=%g R=%g %+v: %v", p, r, tp, err)
					}
					for _, v := range []float64{e.SendRate, e.Goodput, e.Window, e.EffectiveLoss} {
						if !finite(v) || v < 0 {
							t.Fatalf("p=%g R=%g d=%v: non-finite or negative output %+v", p, r, d, e)
						}
					}
				}
			}
		}
	}
}

func TestBadNCParams(t *testing.T) {
	good := NCParams{TCPParams: params(100*time.Millisecond, 0.1, withWmax(50)), R: 1.2}
	tests := []struct {
		param string
		mod   func(*NCParams)
	}{
		{"R", func(p *NCParams) { p.R = 0.99 }},
		{"R", func(p *NCParams) { p.R = 0 }},
		{"R", func(p *NCParams) { p.R = math.NaN() }},
		{"R", func(p *NCParams) { p.R = 101 }},
		{"Duration", func(p *NCParams) { p.Duration = -time.Second }},
		{"Duration", func(p *NCParams) { p.Duration = 50 * time.Millisecond }},
		{"Wmax", func(p *NCParams) { p.Wmax = 0 }}, // masked and nothing bounds the rate
		{"P", func(p *NCParams) { p.P = 1 }},
		{"RTT", func(p *NCParams) { p.RTT = 0 }},
	}
	for _, tt := range tests {
		np := good
		tt.mod(&np)
		_, err := TCPNC(np)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != tt.param {
			t.Errorf("bad %s (%+v): error %v, want a *ParamError for %s", tt.param, np, err, tt.param)
		}
	}
	if _, err := OptimalRedundancy(1); err == nil {
		t.Error("OptimalRedundancy(1): no error")
	}
	if _, err := EndToEndLoss(0.1, 0); err == nil {
		t.Error("EndToEndLoss with 0 hops: no error")
	}
	if _, err := EndToEndLoss(-0.1, 2); err == nil {
		t.Error("EndToEndLoss with q < 0: no error")
	}
}

func TestEndToEndLoss(t *testing.T) {
	for _, tt := range []struct {
		q    float64
		hops int
		want float64
	}{{0.1, 4, 0.3439}, {0.1, 1, 0.1}, {0, 5, 0}, {0.5, 2, 0.75}, {1e-12, 4, 4e-12}} {
		got, err := EndToEndLoss(tt.q, tt.hops)
		if err != nil || !relClose(got, tt.want, 1e-9) {
			t.Errorf("EndToEndLoss(%g, %d) = %g, %v, want %g", tt.q, tt.hops, got, err, tt.want)
		}
	}
}
