package network

import (
	"testing"
	"time"
	"unsafe"

	"github.com/cclab/cclab/core/clock"
)

// TestFlowBlock: the scenario's flows' blocks are one array, and every
// flow's sender, receiver and their five timers live in the flow's block (the timers initialised in place, disarmed
// until the flow starts, then the retransmission timer armed), the
// receiver starts on a cache line, SegMaxRTT uses the block's slot with one
// schedule segment and its own array with several, the RTT histogram
// counts in the block, and the block is no larger than the allocations it
// replaced together (320 + 896 + 320 + 5 x 48 + 208 bytes).
func TestFlowBlock(t *testing.T) {
	if sz := unsafe.Sizeof(flowBlock{}); sz > 1984 || sz%64 != 0 {
		t.Errorf("flowBlock is %d bytes: more than the allocations it replaces, or not whole cache lines", sz)
	}
	if off := unsafe.Offsetof(flowBlock{}.flowBlockTail); off%64 != 0 {
		t.Errorf("the receiver starts at byte %d, not on a cache line", off)
	}
	// The timers an ACK or a segment re-arms each lie on one line.
	var b flowBlock
	for _, tm := range []struct {
		name string
		p    unsafe.Pointer
	}{{"retransmission", unsafe.Pointer(&b.sndT[0])}, {"loss probe", unsafe.Pointer(&b.sndT[3])}, {"delayed ACK", unsafe.Pointer(&b.rcvT[0])}} {
		off := uintptr(tm.p) - uintptr(unsafe.Pointer(&b))
		if off/64 != (off+unsafe.Sizeof(b.sndT[0])-1)/64 {
			t.Errorf("the %s timer lies across two cache lines (bytes %d-%d of the block)", tm.name, off, off+unsafe.Sizeof(b.sndT[0])-1)
		}
	}
	for _, schedule := range []string{"", "\n  schedule: [{at: 1s, rate: 50Mbps}]"} {
		s, err := parseScenario(`
name: block
seed: 1
duration: 2s
bottleneck:
  rate: 100Mbps
  delay: 5ms
  queue: {discipline: droptail, limit: 100}` + schedule + `
flows:
  - {name: a, cc: newreno, count: 5, start_spread: 0.1s}
  - {name: b, cc: cubic, count: 2, extra_delay: 3ms}
`)
		if err != nil {
			t.Fatal(err)
		}
		n, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		blocks := make([]*flowBlock, len(n.Flows))
		for i, f := range n.Flows {
			b := (*flowBlock)(unsafe.Pointer(f))
			blocks[i] = b
			if i > 0 && uintptr(unsafe.Pointer(b))-uintptr(unsafe.Pointer(blocks[i-1])) != unsafe.Sizeof(flowBlock{}) {
				t.Errorf("flow %d: its block does not follow flow %d's in one array", i, i-1)
			}
			if f.Sender != &b.snd || f.Receiver != &b.rcv {
				t.Fatalf("flow %d: sender or receiver outside its block", i)
			}
			for j, tm := range append(b.sndT[:], b.rcvT[0]) {
				if tm.Deadline() != clock.Never {
					// A zero Timer's deadline is 0: this one was not
					// initialised, or is armed before the flow starts.
					t.Errorf("flow %d: timer %d has deadline %v before the run", i, j, tm.Deadline())
				}
			}
			inBlock := len(n.Segments) == 1
			if len(f.SegMaxRTT) != len(n.Segments) || (&f.SegMaxRTT[0] == &b.segMax[0]) != inBlock {
				t.Errorf("flow %d: %d segments, SegMaxRTT of %d in the block: %v", i, len(n.Segments), len(f.SegMaxRTT), !inBlock)
			}
		}
		n.Sched.RunUntil(clock.Time(1500 * time.Millisecond))
		for i, b := range blocks {
			if !b.sndT[0].Armed() {
				t.Errorf("flow %d: the retransmission timer in its block is not armed while data is outstanding", i)
			}
			inBlock := 0
			for _, c := range b.rttCounts {
				inBlock += int(c)
			}
			if n.Flows[i].RTT.Count() > 0 && inBlock == 0 {
				t.Errorf("flow %d: its RTT histogram did not count in its block", i)
			}
			if f := n.Flows[i]; f.SegMaxRTT[len(f.SegMaxRTT)-1] == 0 && f.SegMaxRTT[0] == 0 {
				t.Errorf("flow %d: no RTT sample recorded (%q): %v", i, schedule, n.Flows[i].SegMaxRTT)
			}
		}
	}
}
