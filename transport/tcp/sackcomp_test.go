package tcp

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/netsim/packet"
)

// compLog records the ACKs a receiver sends: when, and what they
// acknowledge cumulatively.
type compLog struct {
	pool *packet.Pool
	at   []clock.Time
	no   []int64
}

func (a *compLog) Receive(now clock.Time, p *packet.Packet) {
	if p.Kind == packet.Ack {
		a.at = append(a.at, now)
		a.no = append(a.no, p.AckNo)
	}
	a.pool.Put(p)
}

// TestSACKCompression follows Linux's __tcp_ack_snd_check on a receiver
// whose handshake measured rtt: with a hole, the first three
// out-of-order segments are acknowledged at once, later ones by one ACK
// min(1 ms, rtt/20) after the first of them, an ACK sent for another
// reason (the hole filled) takes the compressed ones with it and cancels
// the timer, and the 45th compressed in a row goes at once.
func TestSACKCompression(t *testing.T) {
	const mss = 1000
	for _, c := range []struct {
		rtt, delay time.Duration
	}{
		{20 * time.Millisecond, time.Millisecond},
		{10 * time.Millisecond, 500 * time.Microsecond},
	} {
		s := sim.New()
		pool := &packet.Pool{}
		log := &compLog{pool: pool}
		r := NewReceiver(Config{MSS: mss, NoQuickAck: true}, 0, s, pool, log)
		r.UseSACKCompression(s)
		at := func(d time.Duration, kind packet.Kind, seg int64) {
			t.Helper()
			s.RunUntil(clock.Time(d))
			p := pool.Get()
			p.Kind, p.Seq, p.Len, p.SentAt = kind, seg*mss, mss, clock.Time(d)
			r.Receive(clock.Time(d), p)
		}
		acks := func() int { return len(log.at) }
		at(0, packet.Syn, 0)
		base := c.rtt
		at(base, packet.Data, 0) // the handshake's RTT sample; pending
		for i, seg := range []int64{2, 3, 4} {
			at(base+time.Duration(i+1)*100*time.Microsecond, packet.Data, seg)
			if acks() != i+1 || log.no[i] != mss {
				t.Fatalf("rtt %v: out-of-order segment %d: %d ACKs (last %v), want %d, acknowledging %d", c.rtt, seg, acks(), log.no, i+1, mss)
			}
		}
		first := base + 400*time.Microsecond
		at(first, packet.Data, 5)
		at(first+100*time.Microsecond, packet.Data, 6)
		if acks() != 3 {
			t.Fatalf("rtt %v: the 4th and 5th out-of-order segments were acknowledged at once (%d ACKs)", c.rtt, acks())
		}
		s.RunUntil(clock.Time(first + c.delay - 1))
		if acks() != 3 {
			t.Fatalf("rtt %v: compressed ACK before %v", c.rtt, c.delay)
		}
		s.RunUntil(clock.Time(first + c.delay))
		if acks() != 4 || log.at[3] != clock.Time(first+c.delay) {
			t.Fatalf("rtt %v: compressed ACK at %v, want one at %v", c.rtt, log.at[3:], clock.Time(first+c.delay))
		}
		if got := r.AcksCompressed(); got != 1 {
			t.Errorf("rtt %v: %d ACKs compressed, want 1 (two segments, one ACK)", c.rtt, got)
		}
		next := first + c.delay + 100*time.Microsecond
		at(next, packet.Data, 7) // same hole: compressed again
		at(next+100*time.Microsecond, packet.Data, 1)
		if acks() != 5 || log.no[4] != 8*mss {
			t.Fatalf("rtt %v: the segment filling the hole: ACKs %v, want a fifth acknowledging %d", c.rtt, log.no, 8*mss)
		}
		s.RunUntil(clock.Time(next + 10*c.delay))
		if acks() != 5 {
			t.Fatalf("rtt %v: the compression timer fired after the hole was filled", c.rtt)
		}
		if got := r.AcksCompressed(); got != 2 {
			t.Errorf("rtt %v: %d ACKs compressed, want 2", c.rtt, got)
		}
		// A new hole at 8: three at once, 44 compressed, the next at once.
		start := next + 20*c.delay
		for i := range int64(3 + compSackNr + 1) {
			at(start+time.Duration(i)*time.Microsecond, packet.Data, 9+i)
		}
		if want := 5 + 3 + 1; acks() != want {
			t.Fatalf("rtt %v: %d ACKs after 48 out-of-order segments, want %d", c.rtt, acks(), want)
		}
		if got := r.AcksCompressed(); got != 2+compSackNr {
			t.Errorf("rtt %v: %d ACKs compressed, want %d", c.rtt, got, 2+compSackNr)
		}
	}
}

// TestSACKCompressionDeliversExactlyOnce: transfers over a lossy path
// with the receiver compressing SACKs complete, deliver every byte once,
// send fewer ACKs than without compression, and repeat for a seed.
func TestSACKCompressionDeliversExactlyOnce(t *testing.T) {
	const segs = 3000
	run := func(seed uint64, compress bool) (delivered int64, acks int, compressed int64, done clock.Time) {
		cfg := Config{Bytes: segs * 1448}
		h := newHarness(t, cfg, reno(1448), 20_000_000, 10*time.Millisecond)
		if compress {
			h.rcv.UseSACKCompression(h.s)
		}
		rnd := rand.New(rand.NewPCG(seed, 17))
		h.fwd.drop = func(p *packet.Packet) bool { return p.Kind == packet.Data && rnd.Float64() < 0.03 }
		count := &tap{to: h.snd, f: func(_ clock.Time, p *packet.Packet) {
			if p.Kind == packet.Ack {
				acks++
			}
		}}
		h.rev.to = count
		h.run(t, 60*time.Second)
		return int64(h.rcv.DeliveredBytes), acks, h.rcv.AcksCompressed(), h.rcv.DoneAt
	}
	for seed := range uint64(5) {
		d, a, c, done := run(seed, true)
		if d != segs*1448 || done == clock.Never {
			t.Fatalf("seed %d: delivered %d of %d bytes, done %v", seed, d, segs*1448, done)
		}
		if c == 0 {
			t.Errorf("seed %d: no ACK compressed over a 3%% lossy path", seed)
		}
		_, aOff, _, _ := run(seed, false)
		if a >= aOff {
			t.Errorf("seed %d: %d ACKs with compression, %d without", seed, a, aOff)
		}
		if d2, a2, c2, done2 := run(seed, true); d2 != d || a2 != a || c2 != c || done2 != done {
			t.Errorf("seed %d: a second run differs", seed)
		}
	}
}
