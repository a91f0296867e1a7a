package hugepage

import (
	"testing"
	"unsafe"
)

// TestAdvise: advice over ranges with and without a whole huge page inside
// (unaligned ends, a range shorter than a page) leaves the memory readable,
// writable and its contents intact; the advice itself is a hint with no
// observable effect on the data.
func TestAdvise(t *testing.T) {
	b := make([]byte, 3*Size+123)
	for i := range b {
		b[i] = byte(i)
	}
	Advise(unsafe.Pointer(&b[0]), uintptr(len(b)))
	Advise(unsafe.Pointer(&b[7]), 10)
	Advise(unsafe.Pointer(&b[1]), uintptr(len(b)-1))
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("byte %d changed to %d", i, b[i])
		}
		b[i] = ^b[i]
	}
	fresh := make([]uint64, Size) // 16 MB, not yet written
	Advise(unsafe.Pointer(&fresh[0]), uintptr(len(fresh))*8)
	for i := range fresh {
		if fresh[i] != 0 {
			t.Fatalf("word %d of fresh memory is %d", i, fresh[i])
		}
		fresh[i] = uint64(i)
	}
}
