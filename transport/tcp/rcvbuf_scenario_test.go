package tcp_test

import (
	"testing"

	_ "github.com/cclab/cclab/cc/all"
)

// TestReceiveWindowDumbbellAgainstKernel: on dumbbell (10 Mbit/s, 25 ms
// one way, 42-packet DropTail) Linux 6.18's CUBIC, measured through cclab's
// emulator, retransmits 11-91 segments in 20 s (runs of 2026-12-01 and
// 2026-12-03: 12, 91, 11, 30, 11; docs/fidelity.md): its receiver
// acknowledges every segment while receive-buffer autotuning opens the
// window, so HyStart's ACK-train detector ends slow start at about 63
// segments after 0.25 s. Without the receive-window model the simulator's
// receiver pairs segments after its 16 quick ACKs, HyStart does not fire,
// and slow start overflows the queue: about 200 retransmissions. With
// transport.receive_window=linux the simulator must retransmit no more
// than the kernel's worst run (91; it makes 7, HyStart exiting at 63
// segments after 0.23 s), and the default must stay where it was (more
// than 150), since the default is unchanged.
func TestReceiveWindowDumbbellAgainstKernel(t *testing.T) {
	retx := func(rw string) int64 {
		return runBuiltIn(t, "dumbbell", "cubic", -1, "duration=20s", "transport.receive_window="+rw).Flows[0].Retransmissions
	}
	linux, none := retx("linux"), retx("none")
	t.Logf("dumbbell/CUBIC, 20 s: %d retransmissions with receive_window=linux, %d without; kernel 11-91", linux, none)
	if linux > 91 {
		t.Errorf("receive_window=linux: %d retransmissions, want at most the kernel's 91", linux)
	}
	if none <= 150 {
		t.Errorf("receive_window=none: %d retransmissions, want the default's slow-start overshoot (above 150)", none)
	}
}
