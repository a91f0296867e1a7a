package endpoint

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/emu/netns"
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

// TestInFlight: the kernel's pipe from a sample, as tcp_packets_in_flight
// computes it, and never below zero when the counters were read between
// updates (more SACKed and lost than out).
func TestInFlight(t *testing.T) {
	for _, c := range []struct {
		s    Sample
		want uint32
	}{
		{Sample{Unacked: 100}, 100},
		{Sample{Unacked: 100, Sacked: 30, Lost: 20, RetransOut: 5}, 55},
		{Sample{Unacked: 10, Sacked: 8, Lost: 5, RetransOut: 1}, 0},
	} {
		if got := c.s.InFlight(); got != c.want {
			t.Errorf("%+v: in flight %d, want %d", c.s, got, c.want)
		}
	}
}

// TestKernelCCRefusal: a controller the kernel lacks is refused with the
// ones it offers, and for Hybla and Westwood+ with the script that adds
// them as BPF programs (bench/kernelcc); newreno maps to reno.
func TestKernelCCRefusal(t *testing.T) {
	avail, err := Available()
	if err != nil {
		t.Skipf("no %s here: %v", availablePath, err)
	}
	if k, err := KernelCC("newreno"); err != nil || k != "reno" {
		t.Errorf("KernelCC(newreno) = %q, %v; want reno", k, err)
	}
	for _, c := range []struct {
		name string
		hint bool
	}{{"hybla", true}, {"westwood", true}, {"nosuchcc", false}} {
		if slices.Contains(avail, c.name) {
			continue // registered here (a module, or bench/kernelcc's program)
		}
		_, err := KernelCC(c.name)
		if err == nil {
			t.Fatalf("KernelCC(%s) accepted a controller the kernel does not list", c.name)
		}
		msg := err.Error()
		if !strings.Contains(msg, "this kernel offers: "+strings.Join(avail, ", ")) {
			t.Errorf("KernelCC(%s): %q does not list the kernel's controllers", c.name, msg)
		}
		if got := strings.Contains(msg, "bench/kernelcc/load.sh"); got != c.hint {
			t.Errorf("KernelCC(%s): %q mentions bench/kernelcc: %v, want %v", c.name, msg, got, c.hint)
		}
	}
}

// TestNagleClearsNoDelay: a kernel sender keeps the TCP_NODELAY that Go's
// net package sets on every TCP socket unless TCPConfig.Nagle asks for
// Nagle's algorithm (scenario transport.nagle), when it clears it before
// its first write. Over loopback in a namespace of its own.
func TestNagleClearsNoDelay(t *testing.T) {
	if err := netns.Check(); err != nil {
		t.Skipf("emulator unavailable: %v", err)
	}
	ns, err := netns.Create(netns.Name("nagle"))
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	clk := clock.NewReal()
	lo := netip.MustParseAddr("127.0.0.1")
	for i, nagle := range []bool{false, true} {
		port := uint16(5001 + i)
		sink, err := ListenTCP(ns, lo, port, 0, clk)
		if err != nil {
			t.Fatal(err)
		}
		snd := StartTCP(ns, netip.AddrPortFrom(lo, port), TCPConfig{CC: "cubic", Nagle: nagle}, clk)
		want := 1
		if nagle {
			want = 0
		}
		got := -1
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			snd.mu.Lock()
			raw := snd.raw
			snd.mu.Unlock()
			if raw == nil {
				continue
			}
			_ = raw.Control(func(fd uintptr) { got, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY) })
			if got == want {
				break
			}
		}
		if _, err := snd.Stop(); err != nil {
			t.Errorf("nagle %v: %v", nagle, err)
		}
		sink.Close()
		if got != want {
			t.Errorf("nagle %v: TCP_NODELAY is %d, want %d", nagle, got, want)
		}
	}
}
