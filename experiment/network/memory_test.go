package network

import (
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/netsim/link"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/transport/tcp"
)

// BenchmarkFlowMemory reports the live heap per flow of issue 19's 1000-flow
// workload after 3 simulated seconds (windows, scoreboards, delay lines and
// the packet pool grown), and the sizes of the per-flow and per-packet
// structs, for docs/performance.md. Run with -benchtime 1x.
func BenchmarkFlowMemory(b *testing.B) {
	s, err := parseScenario(scaleScenario(1000, "1Gbps", 1000))
	if err != nil {
		b.Fatal(err)
	}
	var perFlow float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		n, err := Build(s)
		if err != nil {
			b.Fatal(err)
		}
		n.Sched.RunUntil(clock.Time(3 * time.Second))
		runtime.GC()
		runtime.ReadMemStats(&after)
		perFlow = float64(after.HeapAlloc-before.HeapAlloc) / float64(len(n.Flows))
		runtime.KeepAlive(n)
	}
	b.ReportMetric(perFlow, "heap-B/flow")
	b.ReportMetric(float64(unsafe.Sizeof(tcp.Sender{})), "Sender-B")
	b.ReportMetric(float64(unsafe.Sizeof(tcp.Receiver{})), "Receiver-B")
	b.ReportMetric(float64(unsafe.Sizeof(Flow{})), "Flow-B")
	b.ReportMetric(float64(unsafe.Sizeof(flowBlock{})), "FlowBlock-B")
	b.ReportMetric(float64(unsafe.Sizeof(sim.Timer{})), "Timer-B")
	b.ReportMetric(float64(unsafe.Sizeof(link.DelayLine{})), "DelayLine-B")
	b.ReportMetric(float64(unsafe.Sizeof(packet.Packet{})), "Packet-B")
}
