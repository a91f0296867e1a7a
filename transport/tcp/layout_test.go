package tcp

import (
	"testing"
	"time"
	"unsafe"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// TestHotLayout checks that what an ACK (a data segment) reads in the open
// state stays within the lines a simulation prefetches, and that those are
// few: a field added to the hot part that pushes it over a line, or a
// per-ACK field moved out of it, fails here.
func TestHotLayout(t *testing.T) {
	var s Sender
	hot := []struct {
		name      string
		off, size uintptr
	}{
		{"pool", unsafe.Offsetof(s.pool), unsafe.Sizeof(s.pool)},
		{"una..", unsafe.Offsetof(s.una), 3 * 8},
		{"outBytes..renoSacked", unsafe.Offsetof(s.outBytes), 5 * 8},
		{"ring", unsafe.Offsetof(s.ring), unsafe.Sizeof(s.ring)},
		{"rackXmit", unsafe.Offsetof(s.rackXmit), 16},
		{"rate", unsafe.Offsetof(s.rate), unsafe.Sizeof(s.rate)},
		{"rtt", unsafe.Offsetof(s.rtt), unsafe.Sizeof(s.rtt)},
		{"OnRTT", unsafe.Offsetof(s.OnRTT), 8},
		{"cc", unsafe.Offsetof(s.cc), unsafe.Sizeof(s.cc)},
		{"scratch", unsafe.Offsetof(s.scratch), 8},
		{"rtoT", unsafe.Offsetof(s.rtoT), unsafe.Sizeof(s.rtoT)},
		{"tlp", unsafe.Offsetof(s.tlp), unsafe.Sizeof(s.tlp)},
		{"OnAck", unsafe.Offsetof(s.OnAck), 8},
		{"out", unsafe.Offsetof(s.out), unsafe.Sizeof(s.out)},
		{"ringPeak", unsafe.Offsetof(s.ringPeak), 4},
		{"tlpSlack", unsafe.Offsetof(s.tlpSlack), 4},
		{"stats", unsafe.Offsetof(s.stats), unsafe.Sizeof(s.stats)},
	}
	for _, f := range hot {
		if f.off+f.size > senderHotBytes {
			t.Errorf("Sender.%s ends at byte %d, beyond the hot %d", f.name, f.off+f.size, senderHotBytes)
		}
	}
	var c Config
	for _, f := range []struct {
		name string
		end  uintptr
	}{
		{"MSS", unsafe.Offsetof(c.MSS) + 8}, {"Header", unsafe.Offsetof(c.Header) + 8},
		{"RecvWindow", unsafe.Offsetof(c.RecvWindow) + 8}, {"PendingQueue", unsafe.Offsetof(c.PendingQueue) + 8},
		{"InitialRTO", unsafe.Offsetof(c.InitialRTO) + 8}, {"MinRTO", unsafe.Offsetof(c.MinRTO) + 8},
		{"MaxRTO", unsafe.Offsetof(c.MaxRTO) + 8}, {"NoSACK", unsafe.Offsetof(c.NoSACK) + 1},
		{"PacketTimers", unsafe.Offsetof(c.PacketTimers) + 1}, {"NoTLP", unsafe.Offsetof(c.NoTLP) + 1},
		{"NoRACK", unsafe.Offsetof(c.NoRACK) + 1}, {"RFC6298RTO", unsafe.Offsetof(c.RFC6298RTO) + 1},
	} {
		if f.end > configHotBytes {
			t.Errorf("Config.%s ends at byte %d, beyond the hot %d", f.name, f.end, configHotBytes)
		}
	}
	if SenderHotLines > 8 {
		t.Errorf("an ACK reads %d lines of the sender, want at most 8", SenderHotLines)
	}
	var r Receiver
	if end := unsafe.Offsetof(r.ackInterval) + 8; end > unsafe.Offsetof(r.recent) {
		t.Errorf("Receiver's per-segment fields end at %d, after its hot part", end)
	}
	if ReceiverHotLines > 4 {
		t.Errorf("a segment reads %d lines of the receiver, want at most 4", ReceiverHotLines)
	}
	// Allocation size classes of 896 and 320 bytes are whole lines, so
	// every sender and receiver starts on a line.
	if n := unsafe.Sizeof(s); n > 896 {
		t.Errorf("Sender is %d bytes, over the 896-byte size class", n)
	}
	if n := unsafe.Sizeof(r); n > 320 {
		t.Errorf("Receiver is %d bytes, over the 320-byte size class", n)
	}
}

// stepWindow is a controller whose window follows a schedule of the
// simulated time.
type stepWindow struct {
	s      *sim.Scheduler
	window func(now clock.Time) units.Bytes
}

func (w *stepWindow) OnPacketSent(clock.Time, units.Bytes, units.Bytes, bool) {}
func (w *stepWindow) OnAck(clock.Time, *cc.Ack)                               {}
func (w *stepWindow) OnCongestionEvent(clock.Time, *cc.LossEvent)             {}
func (w *stepWindow) OnRecoveryEnd(clock.Time)                                {}
func (w *stepWindow) OnRetransmissionTimeout(clock.Time, units.Bytes)         {}
func (w *stepWindow) CongestionWindow() units.Bytes                           { return w.window(w.s.Now()) }
func (w *stepWindow) PacingRate() units.Bandwidth                             { return 0 }

// TestScoreboardRingFollowsTheWindow: the scoreboard grows with the window,
// keeps its size through a sawtooth (the window halving and recovering),
// shrinks once the window has stayed far below it for a ring's length of
// segments, and grows again; the transfer stays exact throughout.
func TestScoreboardRingFollowsTheWindow(t *testing.T) {
	const mss = 1448
	cfg := Config{MSS: mss, Bytes: 40000 * mss, NoDelayedAck: true}
	w := &stepWindow{}
	h := newHarness(t, cfg, w, 100*units.Mbps, 10*time.Millisecond)
	w.s = h.s
	w.window = func(now clock.Time) units.Bytes {
		switch {
		case now < clock.Time(time.Second):
			// A sawtooth between 150 and 300 segments.
			if (now/clock.Time(50*time.Millisecond))%2 == 0 {
				return 300 * mss
			}
			return 150 * mss
		case now < clock.Time(8*time.Second):
			// About 1400 segments at 4 per 22 ms round trip: two and a
			// half turns of the ring, the first of which still saw the
			// sawtooth's peak.
			return 4 * mss
		default:
			return 300 * mss
		}
	}
	h.snd.Start(0)
	h.s.RunUntil(clock.Time(300 * time.Millisecond))
	grown := &h.snd.ring[0]
	if n := len(h.snd.ring); n != 512 {
		t.Fatalf("ring of %d segments for a 300-segment window, want 512", n)
	}
	h.s.RunUntil(clock.Time(time.Second))
	if &h.snd.ring[0] != grown {
		t.Errorf("the ring was reallocated during the sawtooth")
	}
	h.s.RunUntil(clock.Time(8 * time.Second))
	if n := len(h.snd.ring); n > 32 {
		t.Errorf("ring of %d segments after 7 s at a 4-segment window, want at most 32", n)
	}
	h.s.RunUntil(clock.Time(20 * time.Second))
	if n := len(h.snd.ring); n != 512 {
		t.Errorf("ring of %d segments after the window grew back to 300, want 512", n)
	}
	if h.rcv.DeliveredBytes != cfg.Bytes || !h.snd.Done() {
		t.Fatalf("delivered %d of %d bytes (done %v)", h.rcv.DeliveredBytes, cfg.Bytes, h.snd.Done())
	}
	if st := h.snd.Stats(); st.Retransmissions != 0 || st.SegmentsSent != 40000 {
		t.Errorf("sent %d segments with %d retransmissions on a lossless path, want 40000 and 0", st.SegmentsSent, st.Retransmissions)
	}
}

// lossyPath returns flow i's configuration and wires for the tests that
// run two flows side by side: 3000 segments over 20 Mbit/s, one-way delays
// of 5+3i and 5 ms, every 97th data segment lost (congestion events too).
func lossyPath(s *sim.Scheduler, pool *packet.Pool, i int) (Config, *wire, *wire) {
	fwd := &wire{s: s, pool: pool, rate: 20 * units.Mbps, delay: time.Duration(5+3*i) * time.Millisecond}
	rev := &wire{s: s, pool: pool, delay: 5 * time.Millisecond}
	k := 0
	fwd.drop = func(p *packet.Packet) bool { k++; return k%97 == 0 }
	return Config{Bytes: 3000 * 1448}, fwd, rev
}

// TestSharedScratch: senders driven by one scheduler and sharing one
// Scratch behave exactly as with their own (the controller's arguments are
// built and consumed within one call).
func TestSharedScratch(t *testing.T) {
	run := func(share bool) [2]Stats {
		s := sim.New()
		pool := &packet.Pool{}
		var sc Scratch
		var out [2]*Sender
		for i := range out {
			cfg, fwd, rev := lossyPath(s, pool, i)
			snd := NewSender(cfg, int32(i), s, pool, fwd, reno(1448))
			rcv := NewReceiver(cfg, int32(i), s, pool, rev)
			fwd.to, rev.to = rcv, snd
			if share {
				snd.ShareScratch(&sc)
			}
			snd.Start(0)
			out[i] = snd
		}
		s.RunUntil(clock.Time(30 * time.Second))
		var st [2]Stats
		for i, snd := range out {
			if !snd.Done() {
				t.Fatalf("share=%v: flow %d did not finish", share, i)
			}
			st[i] = snd.Stats()
		}
		return st
	}
	own, shared := run(false), run(true)
	if own != shared {
		t.Errorf("stats with a shared scratch %+v, with their own %+v", shared, own)
	}
	if own[0].FastRecoveries == 0 || own[1].FastRecoveries == 0 {
		t.Errorf("no congestion events: %+v", own)
	}
}

// TestNegativeInitialRTORejected: the RTO back-off count is a byte because
// an RTO of at least 1 ns reaches any MaxRTO in 63 doublings; a negative
// initial RTO would never reach it, so it is refused.
func TestNegativeInitialRTORejected(t *testing.T) {
	c := Config{InitialRTO: -time.Second}.WithDefaults()
	if err := c.Validate(); err == nil {
		t.Fatal("a negative initial_rto passed validation")
	}
	if err := (Config{}).WithDefaults().Validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
}

// TestInitInPlace: senders and receivers made by InitSender and
// InitReceiver, in memory that held a used sender and receiver, run
// exactly as those NewSender and NewReceiver return (same statistics, same
// completion times, same number of events), on lossy paths.
func TestInitInPlace(t *testing.T) {
	type result struct {
		st     [2]Stats
		done   [2]clock.Time
		got    [2]units.Bytes
		events uint64
	}
	// used is a sender and receiver after a transfer, to initialise over.
	used := func() (Sender, Receiver) {
		s := sim.New()
		pool := &packet.Pool{}
		fwd := &wire{s: s, pool: pool, rate: 10 * units.Mbps, delay: 3 * time.Millisecond}
		rev := &wire{s: s, pool: pool, delay: 3 * time.Millisecond}
		cfg := Config{Bytes: 200 * 1448}
		snd := NewSender(cfg, 7, s, pool, fwd, reno(1448))
		rcv := NewReceiver(cfg, 7, s, pool, rev)
		fwd.to, rev.to = rcv, snd
		snd.Start(0)
		s.RunUntil(clock.Time(50 * time.Millisecond)) // mid-transfer
		return *snd, *rcv
	}
	run := func(inPlace bool) result {
		s := sim.New()
		pool := &packet.Pool{}
		var out [2]*Sender
		var rcvs [2]*Receiver
		for i := range out {
			cfg, fwd, rev := lossyPath(s, pool, i)
			var snd *Sender
			var rcv *Receiver
			if inPlace {
				blk := new(struct {
					snd Sender
					rcv Receiver
				})
				blk.snd, blk.rcv = used()
				snd, rcv = &blk.snd, &blk.rcv
				InitSender(snd, cfg, int32(i), s, pool, fwd, reno(1448))
				InitReceiver(rcv, cfg, int32(i), s, pool, rev)
			} else {
				snd = NewSender(cfg, int32(i), s, pool, fwd, reno(1448))
				rcv = NewReceiver(cfg, int32(i), s, pool, rev)
			}
			fwd.to, rev.to = rcv, snd
			snd.Start(0)
			out[i], rcvs[i] = snd, rcv
		}
		s.RunUntil(clock.Time(30 * time.Second))
		var r result
		for i, snd := range out {
			if !snd.Done() {
				t.Fatalf("inPlace=%v: flow %d did not finish", inPlace, i)
			}
			r.st[i], r.done[i], r.got[i] = snd.Stats(), rcvs[i].DoneAt, rcvs[i].DeliveredBytes
		}
		r.events = s.Events()
		return r
	}
	fresh, inPlace := run(false), run(true)
	if fresh != inPlace {
		t.Errorf("initialised in place %+v, new %+v", inPlace, fresh)
	}
	if fresh.st[0].FastRecoveries == 0 || fresh.got[0] != 3000*1448 {
		t.Errorf("no congestion events or an incomplete transfer: %+v", fresh)
	}
}
