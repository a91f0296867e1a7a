package network

import (
	"fmt"
	"math"
	"testing"

	"github.com/cclab/cclab/core/clock"
)

func codedScenario(loss, r float64, payload bool, bytes string, seed int) string {
	coding := ""
	if r > 0 {
		coding = fmt.Sprintf("coding: {redundancy: %g, payload: %v}", r, payload)
	}
	return fmt.Sprintf(`
name: nc
seed: %d
duration: 300s
bottleneck: {rate: 2Mbps, delay: 20ms, queue: {limit: 50}}
transport: {recv_window: 43440B}
flows:
  - {name: f, cc: newreno, bytes: %s, loss: {p: %g}, %s}
`, seed, bytes, loss, coding)
}

// TestCodedTransferDecodesExactly sends real payload bytes through the
// coding layer over random erasures: every segment must decode to the bytes
// sent, exactly once, in order.
func TestCodedTransferDecodesExactly(t *testing.T) {
	for _, tc := range []struct{ loss, r float64 }{{0, 1}, {0.05, 1.1}, {0.1, 1.2}, {0.2, 1.3}, {0.1, 1.05}} {
		for seed := 1; seed <= 3; seed++ {
			n := build(t, codedScenario(tc.loss, tc.r, true, "500KB", seed))
			n.Run()
			f := n.Flows[0]
			k := f.Coding
			if !f.Done() || f.Receiver.DeliveredBytes != 500_000 {
				t.Fatalf("p=%g R=%g seed %d: delivered %d of 500000 bytes", tc.loss, tc.r, seed, f.Receiver.DeliveredBytes)
			}
			if k.PayloadErrors != 0 {
				t.Errorf("p=%g R=%g seed %d: %d segments decoded to the wrong bytes", tc.loss, tc.r, seed, k.PayloadErrors)
			}
			if st := k.dec.State(); st.Decoded*1448 < 500_000 {
				t.Errorf("decoder decoded %d segments, want all %d", st.Decoded, (500_000+1447)/1448)
			}
			conserve(t, n)
		}
	}
}

// TestCodingWithoutLossIsPlainTCP: with R = 1 and no erasures every coded
// packet is innovative and the transfer takes as long as plain TCP's, up
// to the coding header's extra bytes.
func TestCodingWithoutLossIsPlainTCP(t *testing.T) {
	plain := build(t, codedScenario(0, 0, false, "2MB", 1))
	plain.Run()
	coded := build(t, codedScenario(0, 1, false, "2MB", 1))
	coded.Run()
	pf, cf := plain.Flows[0], coded.Flows[0]
	if !pf.Done() || !cf.Done() {
		t.Fatal("a transfer did not finish")
	}
	if k := cf.Coding; k.NonInnovative != 0 || k.Innovative != k.Coded {
		t.Errorf("%d coded packets, %d innovative, %d not: want every packet innovative", k.Coded, k.Innovative, k.NonInnovative)
	}
	a, b := pf.Receiver.DoneAt.Seconds(), cf.Receiver.DoneAt.Seconds()
	if math.Abs(b-a)/a > 0.05 {
		t.Errorf("coded transfer took %.3f s, plain TCP %.3f s: want within 5%%", b, a)
	}
}

// TestCodingMasksErasures: at 10% erasures TCP/NC with R just above
// 1/(1-p) keeps its rate while plain TCP backs off.
func TestCodingMasksErasures(t *testing.T) {
	var tcpG, ncG float64
	for seed := 1; seed <= 3; seed++ {
		a := build(t, codedScenario(0.1, 0, false, "3MB", seed))
		a.Run()
		b := build(t, codedScenario(0.1, 1.15, false, "3MB", seed))
		b.Run()
		tcpG += 3e6 * 8 / a.Flows[0].Receiver.DoneAt.Sub(clock.Time(0)).Seconds()
		ncG += 3e6 * 8 / b.Flows[0].Receiver.DoneAt.Sub(clock.Time(0)).Seconds()
	}
	if ncG < 1.5*tcpG {
		t.Errorf("TCP/NC %.0f bit/s vs TCP %.0f bit/s at 10%% erasures: want at least 1.5x", ncG/3, tcpG/3)
	}
}
