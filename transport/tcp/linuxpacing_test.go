package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// sendLog records each data segment's send time, in send order.
type sendLog struct {
	pool *packet.Pool
	at   []clock.Time
}

func (l *sendLog) Receive(_ clock.Time, p *packet.Packet) {
	if p.Kind == packet.Data {
		l.at = append(l.at, p.SentAt)
	}
	l.pool.Put(p)
}

// pacedTSO is a paced controller that Linux paces inside TCP, as BBR
// (cc.InternallyPaced), with its fewest segments a send.
type pacedTSO struct {
	cc.Algorithm
	least int64
}

func (p pacedTSO) MinTSOSegs() int64 { return p.least }

// pacedRun runs a bulk sender paced at rate for d behind a scheduler whose
// timers fire late by late, and returns its data segments' send times.
// Nothing acknowledges them, so d must stay below the initial RTO (1 s).
func pacedRun(t *testing.T, linux bool, rate units.Bandwidth, late, d time.Duration) []clock.Time {
	t.Helper()
	s := sim.New()
	var pool packet.Pool
	log := &sendLog{pool: &pool}
	snd := NewSender(Config{NoHandshake: true, LinuxPacing: linux}, 0, lateScheduler{s, late}, &pool, log, pacedTSO{pacedWindow{rate}, 2}) // bulk
	snd.Start(0)
	s.RunUntil(clock.Time(d))
	return log.at
}

// TestLinuxPacingSendsPairs: at 12 Mbit/s Linux sends two segments at a
// time (tcp_tso_segs' minimum; a millisecond at that rate is one
// segment), the first ten at once, then each pair the pair's payload
// time after the last, so the payload, not the packet, goes at the rate:
// 3.6% more segments a second than pacing each 1500-byte packet.
func TestLinuxPacingSendsPairs(t *testing.T) {
	const rate = 12_000_000
	const d = 900 * time.Millisecond
	at := pacedRun(t, true, rate, 0, d)
	for i := range 10 {
		if at[i] != 0 {
			t.Fatalf("segment %d sent at %v, want the first ten unpaced at 0", i, at[i])
		}
	}
	gap := units.Bandwidth(rate).TxTime(2 * 1448)
	for i := 10; i+1 < len(at); i += 2 {
		if at[i+1] != at[i] {
			t.Fatalf("segments %d and %d sent at %v and %v, want one send", i, i+1, at[i], at[i+1])
		}
		if want := clock.Time(0).Add(time.Duration((i-8)/2) * gap); at[i] != want {
			t.Fatalf("segment %d sent at %v, want %v (pairs %v apart after the first ten)", i, at[i], want, gap)
		}
	}
	perPacket := pacedRun(t, false, rate, 0, d)
	want := 10 + float64(d)/float64(gap)*2
	if got := float64(len(at)); got < want-2 || got > want+2 {
		t.Errorf("%v segments in %v, want %.0f", got, d, want)
	}
	if ratio := float64(len(at)) / float64(len(perPacket)); ratio < 1.03 || ratio > 1.05 {
		t.Errorf("%d segments against %d paced per packet: %.3fx, want the packet's 1500/1448", len(at), len(perPacket), ratio)
	}
}

// TestLinuxPacingCreditsLateness: a send that comes late shortens the
// next gap by its lateness, at most by half (tcp_update_skb_after_send's
// "OS jitter" credit), so a pacer 300 µs late every time keeps its rate
// (gaps of 1.93 ms), and one 1.5 ms late sends a pair every half gap plus
// its lateness.
func TestLinuxPacingCreditsLateness(t *testing.T) {
	const rate = 12_000_000
	gap := units.Bandwidth(rate).TxTime(2 * 1448)
	for _, c := range []struct {
		late, period time.Duration
	}{
		{300 * time.Microsecond, gap},
		{1500 * time.Microsecond, gap - gap/2 + 1500*time.Microsecond},
	} {
		at := pacedRun(t, true, rate, c.late, 900*time.Millisecond)
		// The pairs after the first paced one.
		first, last := at[12], at[len(at)-1]
		pairs := (len(at) - 1 - 12) / 2
		got := time.Duration(last-first) / time.Duration(pairs)
		if d := got - c.period; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("timers %v late: a pair every %v, want %v", c.late, got, c.period)
		}
	}
}

// TestTSOSegs: tcp_tso_segs, a millisecond of data at the pacing rate,
// at least the controller's minimum (2 unless it sets one), more on a
// path whose minimum RTT is below 16 ms, at most 64 KB.
func TestTSOSegs(t *testing.T) {
	for _, c := range []struct {
		rate   units.Bandwidth
		least  int64 // 0: the controller sets none
		minRTT time.Duration
		want   int64
	}{
		{1_000_000, 1, 0, 1},   // BBR below 1.2 Mbit/s
		{1_000_000, 0, 0, 2},   // net.ipv4.tcp_min_tso_segs
		{12_000_000, 2, 0, 2},  // 1464 bytes a ms: one segment
		{100_000_000, 2, 0, 8}, // 12,207 bytes a ms
		{12_000_000, 2, 40 * time.Millisecond, 2},
		{12_000_000, 2, time.Millisecond, 23},          // + 64 KB >> (1000 >> 9)
		{12_000_000, 2, 10 * time.Millisecond, 2},      // + 64 KB >> 19: nothing
		{1_000_000_000, 2, 40 * time.Millisecond, 45},  // 64 KB
		{1_000_000_000, 2, 100 * time.Microsecond, 45}, // still 64 KB
	} {
		s := sim.New()
		var pool packet.Pool
		var alg pacedWindow
		snd := NewSender(Config{NoHandshake: true}, 0, s, &pool, discard{&pool}, alg)
		if c.least > 0 {
			snd.cc = pacedTSO{alg, c.least}
		}
		if c.minRTT > 0 {
			snd.rtt.Update(c.minRTT)
		}
		if got := snd.tsoSegs(c.rate); got != c.want {
			t.Errorf("rate %v, minimum %d, min RTT %v: %d segments, want %d", c.rate, c.least, c.minRTT, got, c.want)
		}
	}
}

// deferState is what tcp_tso_should_defer looks at.
type deferState struct {
	now, next, sent clock.Time // the send, the pacing timestamp, the oldest segment's send
	cwnd, pipe      units.Bytes
	q, left         int64 // segments a send carries, bytes left to send
	phase           phase
}

// TestDeferSend: Linux defers a send of fewer segments than one send
// carries only while each of tcp_tso_should_defer's conditions holds;
// every case below breaks one of them.
func TestDeferSend(t *testing.T) {
	const mss = 1448
	ms := func(x float64) clock.Time { return clock.Time(x * float64(time.Millisecond)) }
	base := deferState{now: ms(30), next: ms(29.5), cwnd: 20 * mss, pipe: 19 * mss, q: 2, left: 1 << 20}
	for _, c := range []struct {
		name string
		edit func(*deferState)
		want bool
	}{
		{"one segment of room, the oldest segment's ACK not due", func(*deferState) {}, true},
		{"room for a whole send", func(b *deferState) { b.pipe = 18 * mss }, false},
		{"the pacing timestamp more than 1 ms past", func(b *deferState) { b.next = ms(28.9) }, false},
		{"a third of the window free", func(b *deferState) { b.cwnd, b.pipe = 3*mss, 2*mss }, false},
		{"the oldest segment sent under half an SRTT ago", func(b *deferState) { b.sent = ms(10.5) }, false},
		{"sends of one segment", func(b *deferState) { b.q = 1 }, false},
		{"in recovery", func(b *deferState) { b.phase = recovery }, false},
		{"the last of the data fits", func(b *deferState) { b.left = 1000 }, false},
	} {
		b := base
		c.edit(&b)
		s := sim.New()
		var pool packet.Pool
		snd := NewSender(Config{NoHandshake: true, LinuxPacing: true}, 0, s, &pool, discard{&pool}, pacedTSO{pacedWindow{12_000_000}, 2})
		snd.addSegment(0).sentAt = b.sent
		snd.rtt.Update(40 * time.Millisecond)
		snd.nextSend, snd.phase = b.next, b.phase
		if got := snd.deferSend(b.now, b.cwnd, b.pipe, b.q, b.left); got != c.want {
			t.Errorf("%s: deferSend = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLinuxPacingOnlyInternallyPaced: a controller Linux does not pace
// inside TCP (a fixed or external rate, an application's) keeps the
// per-segment pacer under LinuxPacing.
func TestLinuxPacingOnlyInternallyPaced(t *testing.T) {
	s := sim.New()
	var pool packet.Pool
	log := &sendLog{pool: &pool}
	snd := NewSender(Config{NoHandshake: true, Bytes: 100 << 20, LinuxPacing: true}, 0, s, &pool, log, pacedWindow{12_000_000})
	snd.Start(0)
	s.RunUntil(clock.Time(100 * time.Millisecond))
	// 1500-byte packets at 12 Mbit/s: one a millisecond, from 0.
	for i, at := range log.at {
		if want := clock.Time(time.Duration(i) * time.Millisecond); at != want {
			t.Fatalf("segment %d sent at %v, want %v", i, at, want)
		}
	}
}

// TestSendOutsideCharges: a send outside the send loop (the timeout's
// head, a loss probe) is not held back but moves the pacing timestamp
// on, by its payload's time with LinuxPacing (Linux charges every
// transmission) and by its packet's without.
func TestSendOutsideCharges(t *testing.T) {
	const rate = 12_000_000
	for _, linux := range []bool{true, false} {
		s := sim.New()
		var pool packet.Pool
		snd := NewSender(Config{NoHandshake: true, Bytes: 100 << 20, LinuxPacing: linux}, 0, s, &pool, discard{&pool}, pacedTSO{pacedWindow{rate}, 2})
		snd.Start(0)
		s.RunUntil(clock.Time(50 * time.Millisecond))
		before, sent := snd.nextSend, snd.Stats().SegmentsSent
		snd.sendOutside(s.Now(), snd.nxtSeg(), false)
		if snd.Stats().SegmentsSent != sent+1 {
			t.Fatalf("linux %v: %d segments sent, want %d", linux, snd.Stats().SegmentsSent, sent+1)
		}
		size := snd.cfg.MSS
		if !linux {
			size += snd.cfg.Header
		}
		if want := before.Add(units.Bandwidth(rate).TxTime(size)); snd.nextSend != want {
			t.Errorf("linux %v: pacing timestamp %v after the send, want %v (%v before)", linux, snd.nextSend, want, before)
		}
	}
}
