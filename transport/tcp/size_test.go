package tcp

import (
	"testing"
	"unsafe"
)

// BenchmarkSizes reports the per-flow and per-segment struct sizes quoted in
// docs/performance.md.
func BenchmarkSizes(b *testing.B) {
	for b.Loop() {
	}
	b.ReportMetric(float64(unsafe.Sizeof(segment{})), "segment-B")
	b.ReportMetric(float64(unsafe.Sizeof(Sender{})), "Sender-B")
	b.ReportMetric(float64(unsafe.Sizeof(Receiver{})), "Receiver-B")
}
