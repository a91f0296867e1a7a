package tcpnc

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestWindowStudy: under erasures TCP's window shrinks and it uses less of
// it than TCP/NC, which keeps its whole window and nearly fills it (the
// slides' "TCP's window size is larger compared to its actual throughput").
func TestWindowStudy(t *testing.T) {
	rows, err := WindowStudy(context.Background(), Config{Losses: []float64{0, 0.1}, Seeds: 1, Duration: 40 * time.Second, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[2].Scheme != "tcp" || rows[3].Scheme != "tcpnc" {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows[:2] {
		if r.Efficiency < 0.95 || r.CwndPackets < 19 {
			t.Errorf("p=0 %s: window %.2f, used/window %.2f; want a full, fully used window", r.Scheme, r.CwndPackets, r.Efficiency)
		}
	}
	tcp, nc := rows[2], rows[3]
	if !(tcp.CwndPackets < nc.CwndPackets && tcp.Efficiency < nc.Efficiency-0.05 && nc.Efficiency > 0.9) {
		t.Errorf("p=0.1: TCP window %.2f used %.2f; TCP/NC window %.2f used %.2f", tcp.CwndPackets, tcp.Efficiency, nc.CwndPackets, nc.Efficiency)
	}
	if _, err := WindowStudy(context.Background(), Config{Losses: []float64{1.5}}); err == nil {
		t.Errorf("a loss of 1.5 gave no error")
	}
}

// TestSharingOverTime: the two flows' series integrate to their goodputs
// and the flows share fairly (the slides: 0.37 Mbit/s each).
func TestSharingOverTime(t *testing.T) {
	s, err := SharingOverTime(Config{Duration: 60 * time.Second}, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Mbps) != 2 || len(s.Mbps[0]) != len(s.T) || s.Jain < 0.95 {
		t.Fatalf("series %d x %d for %d times, Jain %.3f", len(s.Mbps), len(s.Mbps[0]), len(s.T), s.Jain)
	}
	for i, row := range s.Mbps {
		sum := 0.0
		for _, x := range row {
			sum += x
		}
		if got := sum / 60; math.Abs(got-s.MeanMbps[i]) > 0.02 {
			t.Errorf("flow %d: series mean %.3f, goodput %.3f", i, got, s.MeanMbps[i])
		}
	}
	if _, err := SharingOverTime(Config{}, 1, 0); err == nil {
		t.Errorf("a zero interval gave no error")
	}
}

// TestHopsStudy: over 4 lossy hops the simulated end-to-end erasure rate
// is 1-(1-q)^4, and TCP over the chain does no better than over one hop
// at that rate, while TCP/NC keeps most of the link.
func TestHopsStudy(t *testing.T) {
	rows, err := HopsStudy(context.Background(), Config{Seeds: 2, Duration: 60 * time.Second, Jobs: 2}, []float64{0.025}, 4)
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if math.Abs(r.P-(1-math.Pow(0.975, 4))) > 1e-12 || math.Abs(r.MeasuredP-r.P) > 0.02 {
		t.Errorf("end-to-end loss: model %.4f, measured %.4f", r.P, r.MeasuredP)
	}
	if !(r.TCPNC > 1.2*r.TCP && r.TCP < 1.25*r.TCP1 && r.TCP > 0.75*r.TCP1) {
		t.Errorf("TCP %.3f (one hop %.3f), TCP/NC %.3f (one hop %.3f)", r.TCP, r.TCP1, r.TCPNC, r.TCPNC1)
	}
	if _, err := HopsStudy(context.Background(), Config{}, []float64{2}, 4); err == nil {
		t.Errorf("a per-hop loss of 2 gave no error")
	}
}

// TestNoSACK: the Reno-style option reaches every scenario the study
// builds, and the coding layer's property does not depend on SACK: TCP/NC
// without selective acknowledgements still keeps and fills its window under
// erasures while plain TCP's shrinks.
func TestNoSACK(t *testing.T) {
	cfg := Config{NoSACK: true}
	cfg.defaults()
	s, err := cfg.scenario("x", cfg.Rate, 1, 0.1, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Transport.SACK == nil || *s.Transport.SACK {
		t.Fatalf("NoSACK: scenario transport.sack = %v, want false", s.Transport.SACK)
	}
	def := Config{}
	def.defaults()
	if s, _ := def.scenario("x", def.Rate, 1, 0.1, 0, 1); s.Transport.SACK != nil {
		t.Fatalf("default: transport.sack set to %v, want the transport's default", *s.Transport.SACK)
	}
	rows, err := WindowStudy(context.Background(), Config{Losses: []float64{0.1}, Seeds: 1, Duration: 40 * time.Second, Jobs: 2, NoSACK: true})
	if err != nil {
		t.Fatal(err)
	}
	tcp, nc := rows[0], rows[1]
	if !(tcp.CwndPackets < nc.CwndPackets/2 && nc.Efficiency > 0.9) {
		t.Errorf("no SACK, p=0.1: TCP window %.2f used %.2f; TCP/NC window %.2f used %.2f", tcp.CwndPackets, tcp.Efficiency, nc.CwndPackets, nc.Efficiency)
	}
	sack, err := WindowStudy(context.Background(), Config{Losses: []float64{0.1}, Seeds: 1, Duration: 40 * time.Second, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sack[0] == tcp {
		t.Errorf("TCP with and without SACK gave identical rows %+v: the option changed nothing", tcp)
	}
}
