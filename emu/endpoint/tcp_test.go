package endpoint

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestBBRModelOf: the kernel reports the bandwidth in bytes per second
// over two 32-bit words and the gains in 1/256ths (bbr_get_info).
func TestBBRModelOf(t *testing.T) {
	// 5 GB/s needs the high word: 5e9 = 1<<32 + 705032704.
	got := bbrModelOf(&unix.TCPBBRInfo{Bw_lo: 705032704, Bw_hi: 1, Min_rtt: 40256, Pacing_gain: 739, Cwnd_gain: 512})
	want := BBRModel{BtlBw: 40e9, RTprop: 40256 * time.Microsecond, PacingGain: 739.0 / 256, CwndGain: 2}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
