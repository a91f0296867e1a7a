package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// TestAdvertisedWindowFollowsLinux: with Config.LinuxReceiveWindow every
// ACK advertises the window tcp_select_window would: the SYN-ACK the
// initial window unscaled (65,160 bytes: 45 segments of the default
// buffer's 65,536-byte window), every later ACK a multiple of the window
// scale (1024 bytes) that is either within rcv_ssthresh (rounded up to the
// scale) or exactly what the previous advertisement still offered; the
// right edge (AckNo + window) never moves left. A sender with a 600-segment
// window on a 200 ms path with a loss every 97 segments gets holes and
// out-of-order data, which is where the free space shrinks.
func TestAdvertisedWindowFollowsLinux(t *testing.T) {
	cfg := Config{Bytes: 6000 * 1448, LinuxReceiveWindow: true}
	h := newHarness(t, cfg, fixedWindow(600*1448), 20*units.Mbps, 100*time.Millisecond)
	h.fwd.drop = func(p *packet.Packet) bool {
		return p.Kind == packet.Data && !p.Retransmission && (p.Seq/1448)%97 == 50
	}
	var synAck, acks, grown int
	var edge int64
	h.rev.drop = func(p *packet.Packet) bool {
		w, ok := p.Window()
		switch {
		case p.Kind == packet.SynAck:
			synAck++
			if !ok || w != 65160 {
				t.Fatalf("SYN-ACK advertises %d (%v), want 65160", w, ok)
			}
			return false
		case p.Kind != packet.Ack:
			return false
		case !ok:
			t.Fatalf("ACK %d advertises no window", p.AckNo)
		}
		acks++
		if w%linuxWscaleUnit != 0 {
			t.Fatalf("ACK %d advertises %d bytes, not a multiple of %d", p.AckNo, w, linuxWscaleUnit)
		}
		right := p.AckNo + int64(w)
		if right < edge {
			t.Fatalf("ACK %d moves the right edge left: %d after %d", p.AckNo, right, edge)
		}
		if kept := alignUp(edge-p.AckNo, linuxWscaleUnit); int64(w) > alignUp(h.rcv.rw.ssthresh, linuxWscaleUnit) && int64(w) != kept {
			t.Fatalf("ACK %d advertises %d, above rcv_ssthresh %d and not the previous edge's %d", p.AckNo, w, h.rcv.rw.ssthresh, kept)
		}
		if right > edge {
			grown++
		}
		edge = right
		return false
	}
	h.run(t, 30*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d of %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	t.Logf("%d ACKs, %d moved the right edge", acks, grown)
	if synAck != 1 || acks < 1000 || grown < 1000 {
		t.Errorf("%d SYN-ACKs, %d ACKs, %d moved the edge: want 1, 1000 or more, 1000 or more", synAck, acks, grown)
	}
}

// TestSenderStaysWithinAdvertisedWindow: a sender never sends new data
// past the right edge of the latest window it has received (Linux's
// tcp_snd_wnd_test), and with a 600-segment congestion window on a
// 200 ms path the window, which autotuning opens one receiver RTT late,
// does hold it back (Sender.RwndLimited > 0); the transfer still
// completes. Without the option ACKs carry no window and the sender is
// never window-limited.
func TestSenderStaysWithinAdvertisedWindow(t *testing.T) {
	const delay = 100 * time.Millisecond
	for _, on := range []bool{false, true} {
		cfg := Config{Bytes: 6000 * 1448, LinuxReceiveWindow: on}
		h := newHarness(t, cfg, fixedWindow(600*1448), 20*units.Mbps, delay)
		edge, windows := windowEdges(h, delay)
		sent, beyond := 0, 0
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Kind != packet.Data {
				return false
			}
			if !p.Retransmission {
				sent++
				limit := edge()
				if on && p.Seq+int64(p.Len) > limit {
					beyond++
					if beyond == 1 {
						t.Errorf("segment %d-%d sent at %v beyond the right edge %d", p.Seq, p.Seq+int64(p.Len), h.s.Now(), limit)
					}
				}
			}
			return !p.Retransmission && (p.Seq/1448)%97 == 50
		}
		h.run(t, 30*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("on=%v: delivered %d of %d", on, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		lim, _ := h.snd.RwndLimited(h.s.Now())
		t.Logf("on=%v: %d new segments, %d beyond the window, window-limited for %v, %d windows advertised", on, sent, beyond, lim, *windows)
		if !on {
			if *windows != 0 || lim != 0 {
				t.Errorf("off: %d windows advertised, window-limited %v; want none", *windows, lim)
			}
			continue
		}
		if lim < 100*time.Millisecond {
			t.Errorf("window-limited for %v, want the window to bind (100 ms or more)", lim)
		}
	}
}

// TestWindowUpdateRule: the sender takes a window from an ACK that
// acknowledges new data, or from one that acknowledges nothing new but
// offers more; an older ACK, or a duplicate offering less, leaves it
// (tcp_may_update_window for a peer that sends no data).
func TestWindowUpdateRule(t *testing.T) {
	s := &Sender{}
	s.una, s.nxt = 1000, 5000
	s.updateWindow(packet.SynAck, 0, 65160)
	if !s.hasSndWnd || s.sndWnd != 65160 {
		t.Fatalf("after the SYN-ACK: %v %d", s.hasSndWnd, s.sndWnd)
	}
	s.established = true
	steps := []struct {
		ackNo, w, want int64
	}{
		{2000, 30000, 30000}, // new data: taken even though smaller
		{1000, 20000, 30000}, // duplicate (una not yet moved here), less: kept
		{1000, 40000, 40000}, // duplicate, more: taken
		{500, 90000, 40000},  // older than una: ignored
		{6000, 90000, 40000}, // beyond nxt: ignored
	}
	for i, st := range steps {
		s.updateWindow(packet.Ack, st.ackNo, st.w)
		if s.sndWnd != st.want {
			t.Errorf("step %d: ACK %d offering %d: window %d, want %d", i, st.ackNo, st.w, s.sndWnd, st.want)
		}
	}
}

// windowEdges records the windows the harness's receiver advertises, each
// as the right edge it offers (the SYN-ACK's from 0) and the time it
// reaches the sender (delay later). It returns the highest edge the
// sender has received by now (-1 before any) and the count of windows.
func windowEdges(h *harness, delay time.Duration) (edge func() int64, windows *int) {
	type edgeAt struct {
		at    clock.Time
		right int64
	}
	var edges []edgeAt // in arrival order at the sender
	windows = new(int)
	h.rev.drop = func(p *packet.Packet) bool {
		if w, ok := p.Window(); ok {
			*windows++
			right := p.AckNo + int64(w)
			if p.Kind == packet.SynAck {
				right = int64(w)
			}
			edges = append(edges, edgeAt{h.s.Now().Add(delay), right})
		}
		return false
	}
	return func() int64 {
		limit := int64(-1)
		for _, e := range edges {
			if e.at <= h.s.Now() {
				limit = max(limit, e.right)
			}
		}
		return limit
	}, windows
}
