package vegas

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
)

// TestNS3VegasStall runs bench/ns3's single-flow Vegas scenario (10
// Mbit/s, 50 ms RTT, 100-packet DropTail, 30 s, delayed ACKs) with each
// Vegas. ns-3 3.37's TcpVegas reaches 4.95 Mbit/s there (bench/ns3/
// RESULTS.md); vegas_ns3 stalls the same way (4.955, within 5%), Linux's
// Vegas fills the link, and vegas_ns3 fed the raw RTT samples instead of
// the smoothed one fills it too (ns-3 with DelAckCount=1: 9.58).
func TestNS3VegasStall(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "bench", "scenarios", "vegas-1flow.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(cc scenario.CC) float64 {
		s, err := scenario.Parse(b, "vegas-1flow.yaml")
		if err != nil {
			t.Fatal(err)
		}
		s.Flows[0].CC = cc
		r, _, err := experiment.Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		return r.Flows[0].GoodputMbps
	}
	const ns3 = 4.95
	stalled := run(scenario.CC{Name: "vegas_ns3"})
	if d := (stalled - ns3) / ns3; d < -0.05 || d > 0.05 {
		t.Errorf("vegas_ns3: %.3f Mbit/s, ns-3 %.2f: %+.1f%%, want within 5%%", stalled, ns3, 100*d)
	}
	linux := run(scenario.CC{Name: "vegas"})
	raw := run(scenario.CC{Name: "vegas_ns3", Params: map[string]float64{"srtt": 0}})
	if linux < 9.4 || raw < 9.4 {
		t.Errorf("Linux vegas %.3f, vegas_ns3 with raw samples %.3f Mbit/s; want both above 9.4 (a clean link)", linux, raw)
	}
	t.Logf("vegas_ns3 %.3f (ns-3 %.2f), vegas %.3f, vegas_ns3 srtt=0 %.3f", stalled, ns3, linux, raw)
}

// TestNS3VegasReferences runs vegas_ns3 on bench's single-flow scenario
// (ns-3's wire: PPP header, ACK serialisation, handshake ACK; its
// receiver: no quick ACKs, first segment acknowledged alone) at other
// rates, delays and delayed-ACK settings, against ns-3 3.37's TcpVegas
// (bench/ns3/build/dumbbell --cc=TcpVegas --rate=R --delay=D --queue=100
// --duration=30s --delAckTimeout=T --delack=N; its goodput_mbps). Where
// the stall settles hangs on microseconds, so agreement within 5% on every
// setting checks the model, not one lucky operating point. ns-3's figures
// (bench/ns3/RESULTS.md) are stored, as ns-3 is not a test dependency.
func TestNS3VegasReferences(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "bench", "scenarios", "vegas-1flow.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rate, delay, delack string
		delayed             bool
		ns3                 float64
		// ns3Bytes, if set, is ns-3's bytes_delivered, which vegas_ns3
		// matches exactly: a drift check finer than 5%.
		ns3Bytes int64
	}{
		{"10Mbps", "25ms", "40ms", true, 4.9498, 18561912},
		{"10Mbps", "25ms", "200ms", true, 5.3831, 20186568},
		{"10Mbps", "25ms", "40ms", false, 9.5792, 0},
		{"20Mbps", "20ms", "40ms", true, 7.3721, 27645216},
		// ns-3 delivers 9,336,704 bytes: at 1.036 s its 40 ms delayed-ACK
		// timer fires just before the next segment arrives; in cclab that
		// segment is 2 us earlier and comes first (bench's ns-3 dumbbell
		// has 100 Gbit/s access links, 0.24 us per round trip, which
		// cclab does not model), and the runs part (-1.1%).
		{"5Mbps", "50ms", "40ms", true, 2.4898, 0},
		{"50Mbps", "10ms", "200ms", true, 14.8376, 0},
		{"10Mbps", "60ms", "200ms", true, 3.1624, 0},
		{"2Mbps", "100ms", "200ms", true, 0.9978, 0},
	} {
		s, err := scenario.Parse(b, "vegas-1flow.yaml")
		if err != nil {
			t.Fatal(err)
		}
		s.Flows[0].CC = scenario.CC{Name: "vegas_ns3"}
		for _, kv := range [][2]string{{"bottleneck.rate", c.rate}, {"bottleneck.delay", c.delay},
			{"transport.delack_timeout", c.delack}, {"transport.delayed_ack", fmt.Sprint(c.delayed)}} {
			if err := s.Set(kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		r, _, err := experiment.Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if c.ns3Bytes != 0 && r.Flows[0].BytesDelivered != c.ns3Bytes {
			t.Errorf("%s %s delack %s delayed %v: %d bytes delivered, ns-3 %d", c.rate, c.delay, c.delack, c.delayed, r.Flows[0].BytesDelivered, c.ns3Bytes)
		}
		got := r.Flows[0].GoodputMbps
		d := (got - c.ns3) / c.ns3
		if d < -0.05 || d > 0.05 {
			t.Errorf("%s %s delack %s delayed %v: %.4f Mbit/s, ns-3 %.4f (%+.1f%%), want within 5%%", c.rate, c.delay, c.delack, c.delayed, got, c.ns3, 100*d)
		}
		t.Logf("%s %s delack %s delayed %v: %.4f Mbit/s, ns-3 %.4f (%+.2f%%)", c.rate, c.delay, c.delack, c.delayed, got, c.ns3, 100*d)
	}
}
