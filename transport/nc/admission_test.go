package nc

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAdmission drives the back-pressure with a TCP-like sender: new
// segments beyond the coding window wait in order, a retransmission of a
// waiting segment is not queued twice, a retransmission of a segment in the
// window is added at once, and every segment enters the encoder exactly
// once, in order, as acknowledgements slide the window.
func TestAdmission(t *testing.T) {
	enc, err := NewEncoder(EncoderConfig{Config: Config{Window: 4}, Redundancy: 1}, rand.NewPCG(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	var a Admission
	var added []uint64
	add := func(idx uint64) {
		if idx >= enc.end {
			added = append(added, idx)
		}
		if _, err := enc.Add(idx, nil); err != nil {
			t.Fatalf("Add(%d): %v", idx, err)
		}
	}
	for idx := range uint64(10) {
		if a.Offer(enc, idx) {
			add(idx)
		}
	}
	if want := []uint64{0, 1, 2, 3}; !slices.Equal(added, want) {
		t.Fatalf("added %v before any ACK, want %v", added, want)
	}
	if a.Held != 6 {
		t.Errorf("Held = %d, want 6", a.Held)
	}
	if a.Offer(enc, 5) {
		t.Error("a retransmission of waiting segment 5 was admitted")
	}
	if !a.Offer(enc, 1) {
		t.Error("a retransmission of segment 1, in the window, was held")
	}
	if a.Held != 6 {
		t.Errorf("Held = %d after retransmissions, want 6", a.Held)
	}
	for seen := uint64(2); seen <= 10; seen += 2 {
		if err := enc.OnAck(seen, seen+4); err != nil {
			t.Fatal(err)
		}
		for idx, ok := a.Next(enc); ok; idx, ok = a.Next(enc) {
			add(idx)
		}
		if want := min(seen+4, 10); enc.end != want {
			t.Fatalf("after seen = %d the encoder ends at %d, want %d", seen, enc.end, want)
		}
	}
	if want := []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(added, want) {
		t.Errorf("segments entered the encoder as %v, want %v", added, want)
	}
	if a.head != 0 || len(a.held) != 0 {
		t.Errorf("queue not reset once drained: head %d, len %d", a.head, len(a.held))
	}
}
