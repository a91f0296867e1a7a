package packet

import "testing"

// TestECNField: the IP header's four ECN codepoints map to the bits and
// back as RFC 3168 §5 says; ECT(1) is ECN-capable and leaves as ECT(0),
// the codepoint cclab's senders use.
func TestECNField(t *testing.T) {
	for f, want := range []ECNBits{0, ECT, ECT, ECT | CE} {
		got := ECNFromField(uint8(f) | 0xb8) // DSCP bits do not matter
		if got != want {
			t.Errorf("field %02b: bits %04b, want %04b", f, got, want)
		}
		back := []uint8{0, 2, 2, 3}[f]
		if got.Field() != back {
			t.Errorf("field %02b: bits %04b back to %02b, want %02b", f, got, got.Field(), back)
		}
	}
	if (ECE | CWR).Field() != 0 {
		t.Error("TCP flags alone made an ECN field")
	}
}
