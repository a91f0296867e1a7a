package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// ackRecord is one ACK the receiver sent: how many new segments it
// covers, and the receive window's state just after the segment that
// triggered it (Config.LinuxReceiveWindow).
type ackRecord struct {
	at       clock.Time
	covered  int64
	ssthresh int64 // rcv_ssthresh
	clamp    int64 // window_clamp
}

func recordAcks(h *harness) *[]ackRecord {
	var recs []ackRecord
	last := int64(0)
	h.rev.drop = func(p *packet.Packet) bool {
		if p.Kind != packet.Ack {
			return false
		}
		r := ackRecord{at: h.s.Now(), covered: (p.AckNo - last) / 1448}
		if w := h.rcv.rw; w != nil {
			r.ssthresh, r.clamp = w.ssthresh, w.clamp
		}
		last = p.AckNo
		recs = append(recs, r)
		return false
	}
	return &recs
}

// TestReceiveWindowAcksEachSegmentWhileItGrows: with Linux's receive
// window (rcvbuf.go) the receiver acknowledges at once every segment that
// raises rcv_ssthresh (tcp_grow_window's icsk_ack.quick |= 1), which it
// does by two segments per segment until the window clamp; then ACKs go
// back to every second segment. The sender keeps 30 segments in flight on
// a 40 ms path, so the application reads 31 segments in the receiver's
// first RTT against the 10 of rcvq_space.space, and autotuning raises the
// clamp once, one RTT after the connection is established, to 2 x 31 +
// 4 x 31 x (31 - 10) / 10 segments' worth (tcp_rcvbuf_grow), and never
// again (the rate no longer grows). Without the option only the 16 quick
// ACKs of the connection's start cover one segment.
func TestReceiveWindowAcksEachSegmentWhileItGrows(t *testing.T) {
	const segs = 600
	for _, on := range []bool{false, true} {
		cfg := Config{Bytes: segs * 1448, LinuxReceiveWindow: on}
		h := newHarness(t, cfg, fixedWindow(30*1448), 100*units.Mbps, 20*time.Millisecond)
		acks := recordAcks(h)
		var firstData clock.Time = clock.Never
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Kind == packet.Data && firstData == clock.Never {
				firstData = h.s.Now() + clock.Time(20*time.Millisecond) // its arrival
			}
			return false
		}
		h.run(t, 5*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("on=%v: delivered %d of %d", on, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		a := *acks
		single := 0
		for _, r := range a {
			if r.covered == 1 {
				single++
			}
		}
		if !on {
			if single != maxQuickAcks {
				t.Errorf("off: %d ACKs cover one segment, want the %d quick ACKs", single, maxQuickAcks)
			}
			continue
		}
		// A segment that grows the window is acknowledged at once: when
		// the one before grew it too, its ACK covers it alone (the first
		// after a pause may also cover a segment held for a delayed ACK).
		// Once the window has stopped growing, ACKs cover two.
		lastGrowth := 0
		for i := 1; i < len(a); i++ {
			if a[i].ssthresh > a[i-1].ssthresh {
				if a[i].covered != 1 && lastGrowth == i-1 {
					t.Fatalf("ACK %d at %v grew the window to %d but covers %d segments", i, a[i].at, a[i].ssthresh, a[i].covered)
				}
				lastGrowth = i
			}
		}
		for i := lastGrowth + 1; i < len(a); i++ {
			if a[i].covered != 2 {
				t.Fatalf("ACK %d at %v, after the window reached %d (clamp %d), covers %d segments, want 2",
					i, a[i].at, a[lastGrowth].ssthresh, a[i].clamp, a[i].covered)
			}
		}
		w := h.rcv.rw
		// rcv_ssthresh stops one segment short of the clamp: the segment
		// itself is in the receive queue when tcp_grow_window looks.
		if got := a[lastGrowth].ssthresh; got < w.clamp-2*1448 || got > w.clamp {
			t.Errorf("window stopped growing at %d, want within two segments below the clamp %d", got, w.clamp)
		}
		if single < 130 {
			t.Errorf("%d ACKs cover one segment, want 130 or more (the window grows from 65160 to %d bytes, 2896 per segment)", single, w.clamp)
		}
		// One growth, one receiver RTT (40 ms, from the SYN-ACK's
		// timestamp echo) after the first data segment, to the value
		// tcp_rcvbuf_grow computes from what was read in that RTT.
		if w.grows != 1 {
			t.Errorf("autotuning grew the buffer %d times, want 1", w.grows)
		}
		if rtt := time.Duration(w.rttUs8>>3) * time.Microsecond; rtt != 40*time.Millisecond {
			t.Errorf("receiver RTT %v, want 40ms", rtt)
		}
		grewAt := clock.Never
		for _, r := range a {
			if r.clamp > 81920 {
				grewAt = r.at
				break
			}
		}
		if d := grewAt.Sub(firstData); d < 40*time.Millisecond || d > 42*time.Millisecond {
			t.Errorf("clamp grew %v after the first data segment, want one RTT (40 ms)", d)
		}
		c, old := w.space, int64(linuxInitCwnd*1448)
		if c != 31*1448 {
			t.Errorf("read %d bytes in the first RTT, want 31 segments", c)
		}
		win := 2*c + (2*c*(c-old)/old)<<1
		if want := winFromSpace(w.ratio, spaceFromWin(w.ratio, win)); w.clamp != want {
			t.Errorf("clamp %d, want %d (tcp_rcvbuf_grow of %d read after %d)", w.clamp, want, c, old)
		}
	}
}

// TestReceiveWindowClampGrowsPerRTT: through slow start (NewReno on a path
// that never drops) autotuning raises the clamp once per receiver RTT, by
// about the sender's doubling or more, so the window keeps growing and
// nearly every ACK covers one segment; clamps follow each other no faster
// than the receiver's RTT.
func TestReceiveWindowClampGrowsPerRTT(t *testing.T) {
	cfg := Config{Bytes: 3000 * 1448, LinuxReceiveWindow: true}
	h := newHarness(t, cfg, reno(1448), units.Gbps, 20*time.Millisecond)
	acks := recordAcks(h)
	h.run(t, 5*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d of %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	var at []clock.Time
	var clamps []int64
	single := 0
	for i, r := range *acks {
		if i > 0 && r.clamp != (*acks)[i-1].clamp {
			at, clamps = append(at, r.at), append(clamps, r.clamp)
		}
		if r.covered == 1 {
			single++
		}
	}
	if len(clamps) < 4 {
		t.Fatalf("clamp changed %d times (%v), want one per RTT of slow start", len(clamps), clamps)
	}
	// The first change is the measured scaling ratio (tcp_measure_rcv_mss);
	// autotuning's follow.
	for i := 2; i < len(clamps); i++ {
		if d := at[i].Sub(at[i-1]); d < 40*time.Millisecond {
			t.Errorf("clamp grew %v after the previous growth, less than the receiver's RTT", d)
		}
		if clamps[i] < 3*clamps[i-1]/2 {
			t.Errorf("clamp %d after %d: want at least 1.5 times in slow start", clamps[i], clamps[i-1])
		}
	}
	if n := len(*acks); single < n*85/100 {
		t.Errorf("%d of %d ACKs cover one segment, want 85%% or more", single, n)
	}
}

// TestReceiverRTTFromEchoAfterResentSYN: on a path whose RTT meets the
// initial RTO (1 s: a satellite hop) the SYN is resent just before the
// SYN-ACK arrives, and the resent SYN reaches the receiver just before
// the first data. Timed from the latest SYN, the receiver's one RTT
// sample is a millisecond and its RTO the 200-ms floor; with the receive
// window's timestamp echo it is timed from the SYN-ACK the data answers,
// as Linux does, and the RTO follows the path's 1-s RTT.
func TestReceiverRTTFromEchoAfterResentSYN(t *testing.T) {
	for _, linux := range []bool{false, true} {
		h := newHarness(t, Config{Bytes: 20 * 1448, LinuxReceiveWindow: linux}, reno(1448), 10*units.Mbps, 500*time.Millisecond)
		h.run(t, 5*time.Second)
		if h.rcv.DeliveredBytes != 20*1448 {
			t.Fatalf("linux %v: delivered %d", linux, h.rcv.DeliveredBytes)
		}
		if rtos := h.snd.Stats().RTOs; rtos != 1 {
			t.Fatalf("linux %v: %d timeouts, want the SYN's one", linux, rtos)
		}
		rto := h.rcv.qa.rto
		switch {
		case linux && (rto < 2900*time.Millisecond || rto > 3100*time.Millisecond):
			t.Errorf("with the echo: receiver RTO %v, want about 3 s (1 s RTT + 2 x 1 s)", rto)
		case !linux && rto > 300*time.Millisecond:
			t.Errorf("without it: receiver RTO %v; the resent SYN should have made it the 200-ms floor (the known distortion)", rto)
		}
	}
}

// TestAutotuningCountsWhatTheApplicationRead: the application reads
// what arrived once per instant, and since 6.16 tcp_rcv_space_adjust
// subtracts what is still queued behind the segment it has just copied
// (copied -= inq), so a measurement closed by a burst counts the burst's
// first segment only. With the sender's 30 segments arriving together
// each round (a link without serialisation delay) every measurement reads
// about one segment, never more than the 10 of rcvq_space.space, and the
// buffer never grows; the same window spread out by a 100 Mbit/s link
// (TestReceiveWindowAcksEachSegmentWhileItGrows) grows it once. The
// receive queue holds the burst until the read, so the window advertised
// during a burst shrinks by what has arrived and is unread.
func TestAutotuningCountsWhatTheApplicationRead(t *testing.T) {
	// Long enough not to end within the run: the transfer's last segments
	// would arrive alone.
	cfg := Config{Bytes: 100000 * 1448, LinuxReceiveWindow: true}
	h := newHarness(t, cfg, fixedWindow(30*1448), 0, 20*time.Millisecond)
	var wins []int64
	h.rev.drop = func(p *packet.Packet) bool {
		if w, ok := p.Window(); ok && p.Kind == packet.Ack {
			wins = append(wins, int64(w))
		}
		return false
	}
	h.run(t, 5*time.Second)
	if got, want := h.rcv.DeliveredBytes, units.Bytes(120*30*1448); got < want {
		t.Fatalf("delivered %d bytes, want 120 rounds of 30 segments (%d) or more", got, want)
	}
	w := h.rcv.rw
	if w.grows != 0 || w.space != linuxInitCwnd*1448 {
		t.Errorf("bursts of 30 segments: buffer grew %d times, last measurement %d bytes; want no growth from the 10-segment start", w.grows, w.space)
	}
	if w.unread != 0 || w.readT.Armed() {
		t.Errorf("%d bytes left unread, read timer armed %v", w.unread, w.readT.Armed())
	}
	// Within one burst the window falls as the queue fills: the last
	// ACK of a round advertises less than the first.
	fell := false
	for i := 1; i < len(wins); i++ {
		if wins[i] < wins[i-1]-1448 {
			fell = true
		}
	}
	if !fell {
		t.Error("no ACK advertised less than the one before it: the unread burst does not count against the window")
	}
}
