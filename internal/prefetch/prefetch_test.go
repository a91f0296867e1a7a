package prefetch

import (
	"testing"
	"unsafe"
)

// Prefetching is a hint: nil, and lines past the end of an object, must
// neither fault nor change memory.
func TestPrefetchNeverFaultsOrWrites(t *testing.T) {
	buf := make([]byte, 256)
	for i := range buf {
		buf[i] = byte(i)
	}
	Line(nil)
	Lines(nil, 4)
	Line(unsafe.Pointer(&buf[0]))
	Lines(unsafe.Pointer(&buf[0]), 8) // beyond the 256 bytes
	Lines(unsafe.Pointer(&buf[0]), 0)
	Lines(unsafe.Pointer(&buf[0]), -1)
	for i := range buf {
		if buf[i] != byte(i) {
			t.Fatalf("byte %d changed to %d", i, buf[i])
		}
	}
}

func TestRangeNeverWrites(t *testing.T) {
	buf := make([]byte, 200)
	for _, c := range []struct{ off, size uintptr }{{0, 0}, {0, 1}, {10, 64}, {63, 2}, {1, 199}, {0, 200}} {
		Range(unsafe.Pointer(&buf[c.off]), c.size)
	}
	for i := range buf {
		if buf[i] != 0 {
			t.Fatalf("byte %d changed", i)
		}
	}
}
