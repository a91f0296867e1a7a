package fuzzbytes

import "testing"

// TestChoices: bytes are read in order, a pick is the byte modulo the
// options, and past the end every read is zero and More is false.
func TestChoices(t *testing.T) {
	c := New([]byte{7, 2, 0, 0, 0, 0, 0, 0, 1, 2})
	if !c.More() || c.Pick(5) != 2 || c.Of("a", "b", "c") != "c" {
		t.Fatal("picks do not follow the bytes")
	}
	if v := c.Uint64(); v != 0x0102 {
		t.Fatalf("Uint64 %#x", v)
	}
	if c.Uint64() != 0 || c.Byte() != 0 || c.Pick(3) != 0 || c.More() {
		t.Fatal("past the end, reads are not zero")
	}
}
