package hugepage

import (
	"testing"
	"unsafe"
)

// TestAligned: the slice has the length and capacity asked for, is zeroed,
// and starts on a huge page boundary when the element size divides Size;
// other element sizes still get their length.
func TestAligned(t *testing.T) {
	b := Aligned[[128]byte](3 * Size / 128)
	if len(b) != 3*Size/128 || cap(b) != len(b) {
		t.Fatalf("len %d cap %d, want %d", len(b), cap(b), 3*Size/128)
	}
	if a := uintptr(unsafe.Pointer(&b[0])); a%Size != 0 {
		t.Errorf("starts at %#x, not on a huge page boundary", a)
	}
	for i := range b {
		if b[i] != ([128]byte{}) {
			t.Fatalf("element %d not zeroed", i)
		}
		b[i][0] = 1
	}
	odd := Aligned[[1728]byte](2000)
	if len(odd) != 2000 {
		t.Fatalf("len %d, want 2000", len(odd))
	}
	if len(Aligned[int64](0)) != 0 {
		t.Fatal("a zero-length request returned elements")
	}
	Advise(unsafe.Pointer(&b[0]), 10) // less than a huge page: a no-op
}
