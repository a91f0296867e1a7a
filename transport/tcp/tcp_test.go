package tcp

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/newreno"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// wire is a one-way path with a serialisation rate, a propagation delay and
// a drop rule, for driving a sender and receiver without the network
// package.
type wire struct {
	s     *sim.Scheduler
	pool  *packet.Pool
	to    packet.Receiver
	rate  units.Bandwidth
	delay time.Duration
	free  clock.Time // when the serialiser is next idle
	drop  func(p *packet.Packet) bool
	// hold, if set, adds a packet's extra delay after serialisation (it
	// may then arrive after later packets: reordering).
	hold func(p *packet.Packet) time.Duration
	n    int
}

type arrival struct {
	w *wire
}

func (a arrival) Handle(now clock.Time, arg any) { a.w.to.Receive(now, arg.(*packet.Packet)) }

func (w *wire) Receive(now clock.Time, p *packet.Packet) {
	w.n++
	if w.drop != nil && w.drop(p) {
		w.pool.Put(p)
		return
	}
	start := max(now, w.free)
	done := start
	if w.rate > 0 {
		done = start.Add(w.rate.TxTime(p.Size))
	}
	w.free = done
	if w.hold != nil {
		done = done.Add(w.hold(p))
	}
	w.s.At(done.Add(w.delay), arrival{w}, p)
}

type harness struct {
	s        *sim.Scheduler
	pool     *packet.Pool
	snd      *Sender
	rcv      *Receiver
	fwd, rev *wire
}

func newHarness(t *testing.T, cfg Config, alg cc.Algorithm, rate units.Bandwidth, delay time.Duration) *harness {
	t.Helper()
	h := &harness{s: sim.New(), pool: &packet.Pool{}}
	h.fwd = &wire{s: h.s, pool: h.pool, rate: rate, delay: delay}
	h.rev = &wire{s: h.s, pool: h.pool, delay: delay}
	h.snd = NewSender(cfg, 0, h.s, h.pool, h.fwd, alg)
	h.rcv = NewReceiver(cfg, 0, h.s, h.pool, h.rev)
	h.fwd.to, h.rev.to = h.rcv, h.snd
	return h
}

func reno(mss units.Bytes) cc.Algorithm {
	return newreno.New(mss, map[string]float64{"iw": 10, "beta": 0.5})
}

func (h *harness) run(t *testing.T, until time.Duration) {
	t.Helper()
	h.snd.Start(0)
	h.s.RunUntil(clock.Time(until))
}

func TestSingleLossFastRetransmit(t *testing.T) {
	cfg := Config{Bytes: 200 * 1448}
	h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
	dropped := false
	h.fwd.drop = func(p *packet.Packet) bool {
		// Lose the 15th segment once.
		if p.Seq == 14*1448 && !dropped {
			dropped = true
			return true
		}
		return false
	}
	h.run(t, 10*time.Second)
	st := h.snd.Stats()
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	if st.RTOs != 0 || st.FastRecoveries != 1 || st.Retransmissions != 1 {
		t.Errorf("RTOs=%d recoveries=%d retransmissions=%d, want 0, 1, 1", st.RTOs, st.FastRecoveries, st.Retransmissions)
	}
	if n := h.snd.LostRetransmits(); n != 0 {
		t.Errorf("%d lost retransmissions, want 0", n)
	}
}

func TestLostRetransmissionRecoveredWithoutTimeout(t *testing.T) {
	cfg := Config{Bytes: 400 * 1448}
	h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
	seen := 0
	h.fwd.drop = func(p *packet.Packet) bool {
		// Lose segment 30 and its first retransmission; new data keeps
		// flowing, so the retransmission's loss is detectable by time order.
		if p.Seq == 30*1448 {
			seen++
			return seen <= 2
		}
		return false
	}
	h.run(t, 20*time.Second)
	st := h.snd.Stats()
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	if st.RTOs != 0 || st.Retransmissions != 2 {
		t.Errorf("RTOs=%d retransmissions=%d, want 0 and 2", st.RTOs, st.Retransmissions)
	}
	// Linux's TCPLostRetransmit counts the first retransmission, found
	// lost by time order.
	if n := h.snd.LostRetransmits(); n != 1 {
		t.Errorf("%d lost retransmissions, want 1", n)
	}
}

func TestTimeoutBackoff(t *testing.T) {
	cfg := Config{Bytes: 10 * 1448, MinRTO: 200 * time.Millisecond}
	h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 10*time.Millisecond)
	var sends []clock.Time
	blackout := clock.Time(5 * time.Second)
	h.fwd.drop = func(p *packet.Packet) bool {
		if p.Retransmission {
			sends = append(sends, h.s.Now())
		}
		// Everything after the first flight is lost until the blackout
		// ends: only timeouts can recover.
		return p.Retransmission && h.s.Now() < blackout || !p.Retransmission && p.Seq >= 2*1448
	}
	h.run(t, 60*time.Second)
	if len(sends) < 4 {
		t.Fatalf("only %d retransmissions", len(sends))
	}
	// Successive timeouts double (RFC 6298 §5.5).
	for i := 2; i < 4; i++ {
		g1, g2 := sends[i-1].Sub(sends[i-2]), sends[i].Sub(sends[i-1])
		if r := float64(g2) / float64(g1); r < 1.99 || r > 2.01 {
			t.Errorf("timeout gap %v then %v: ratio %.3f, want 2", g1, g2, r)
		}
	}
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Errorf("delivered %d after the blackout, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
}

func TestRTTEstimatorRFC6298(t *testing.T) {
	e := NewRTTEstimator(200 * time.Millisecond)
	rto := func() time.Duration { return e.RTO(time.Second, 60*time.Second) }
	if rto() != time.Second {
		t.Errorf("initial RTO %v, want 1s", rto())
	}
	e.Update(100 * time.Millisecond)
	// SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR = 300 ms.
	if e.SRTT() != 100*time.Millisecond || e.RTTVar() != 50*time.Millisecond || rto() != 300*time.Millisecond {
		t.Errorf("after one sample: srtt %v rttvar %v rto %v", e.SRTT(), e.RTTVar(), rto())
	}
	e.Update(200 * time.Millisecond)
	// RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5.
	if e.SRTT() != 112500*time.Microsecond || e.RTTVar() != 62500*time.Microsecond {
		t.Errorf("after two samples: srtt %v rttvar %v", e.SRTT(), e.RTTVar())
	}
	if got, want := rto(), 362500*time.Microsecond; got != want {
		t.Errorf("RTO %v, want %v", got, want)
	}
}

// TestReceiverSACKAgainstModel feeds random segment arrivals and checks the
// receiver's cumulative ACK and SACK blocks against a set of received
// segments.
func TestReceiverSACKAgainstModel(t *testing.T) {
	const mss = 100
	for seed := range uint64(30) {
		rnd := rand.New(rand.NewPCG(seed, 9))
		var acks []*packet.Packet
		r, recv := segmentReceiver(mss, func(_ *packet.Pool, p *packet.Packet) { acks = append(acks, p) })
		have := map[int]bool{}
		for range 200 {
			k := rnd.IntN(60)
			have[k] = true
			recv(k)
			a := acks[len(acks)-1]
			next := 0
			for have[next] {
				next++
			}
			if a.AckNo != int64(next*mss) {
				t.Fatalf("seed %d: ACK %d, want %d", seed, a.AckNo, next*mss)
			}
			var blocks []packet.Block
			for i := range int(a.NSACK) {
				b := a.SACK[i]
				blocks = append(blocks, b)
				if b.Start <= a.AckNo || b.End <= b.Start || b.Start%mss != 0 || b.End%mss != 0 {
					t.Fatalf("seed %d: bad block %+v with ACK %d", seed, b, a.AckNo)
				}
				for q := b.Start / mss; q < b.End/mss; q++ {
					if !have[int(q)] {
						t.Fatalf("seed %d: block %+v covers missing segment %d", seed, b, q)
					}
				}
				// Blocks are maximal: the segments on either side are missing.
				if have[int(b.Start/mss)-1] || have[int(b.End/mss)] {
					t.Fatalf("seed %d: block %+v is not maximal", seed, b)
				}
			}
			// The newest out-of-order segment is in the first block.
			if k > next && (len(blocks) == 0 || !(blocks[0].Start <= int64(k*mss) && int64(k*mss) < blocks[0].End)) {
				t.Fatalf("seed %d: first block %v does not hold the newest segment %d", seed, blocks, k)
			}
			if r.DeliveredBytes != units.Bytes(next*mss) {
				t.Fatalf("seed %d: delivered %d, want %d", seed, r.DeliveredBytes, next*mss)
			}
		}
	}
}

// segmentReceiver returns a receiver that acknowledges every segment at
// once, handing each ACK and the pool it came from to onAck, and recv,
// which hands it segment k of mss bytes at time 0.
func segmentReceiver(mss units.Bytes, onAck func(pool *packet.Pool, p *packet.Packet)) (*Receiver, func(k int)) {
	pool := &packet.Pool{}
	sink := receiverFunc(func(_ clock.Time, p *packet.Packet) { onAck(pool, p) })
	r := NewReceiver(Config{MSS: mss, NoDelayedAck: true}, 0, sim.New(), pool, sink)
	return r, func(k int) {
		p := pool.Get()
		p.Seq, p.Len = int64(k)*int64(mss), mss
		r.Receive(0, p)
	}
}

type receiverFunc func(now clock.Time, p *packet.Packet)

func (f receiverFunc) Receive(now clock.Time, p *packet.Packet) { f(now, p) }

// TestDeliveryRateMatchesLink checks the delivery-rate samples against the
// bottleneck rate once the pipe is full.
func TestDeliveryRateMatchesLink(t *testing.T) {
	alg := &recorder{Algorithm: reno(1448)}
	h := newHarness(t, Config{}, alg, 10*units.Mbps, 10*time.Millisecond)
	h.run(t, 3*time.Second)
	if len(alg.rates) < 100 {
		t.Fatalf("only %d rate samples", len(alg.rates))
	}
	late := alg.rates[len(alg.rates)/2:]
	slices.Sort(late)
	med := late[len(late)/2]
	// Goodput rate: 1448 payload bytes per 1500 wire bytes at 10 Mbit/s.
	want := 10e6 * 1448 / 1500
	if med < 0.97*want || med > 1.03*want {
		t.Errorf("median delivery rate %.0f bit/s, want %.0f within 3%%", med, want)
	}
}

type recorder struct {
	cc.Algorithm
	rates []float64
}

func (r *recorder) OnAck(now clock.Time, a *cc.Ack) {
	if a.Rate.Valid() && !a.Rate.IsAppLimited {
		r.rates = append(r.rates, float64(a.Rate.DeliveryRate))
	}
	r.Algorithm.OnAck(now, a)
}

func TestDelayedAcks(t *testing.T) {
	h := newHarness(t, Config{Bytes: 100 * 1448}, reno(1448), 100*units.Mbps, 5*time.Millisecond)
	h.run(t, 5*time.Second)
	if h.rcv.DeliveredBytes != 100*1448 {
		t.Fatalf("delivered %d", h.rcv.DeliveredBytes)
	}
	// Every second segment is acknowledged (plus at most a few timer ACKs).
	if acks := h.rev.n; acks < 50 || acks > 60 {
		t.Errorf("%d ACKs for 100 segments, want about 50", acks)
	}
}

func BenchmarkTransfer(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		s := sim.New()
		pool := &packet.Pool{}
		fwd := &wire{s: s, pool: pool, rate: units.Gbps, delay: time.Millisecond}
		rev := &wire{s: s, pool: pool, delay: time.Millisecond}
		snd := NewSender(Config{Bytes: 10000 * 1448}, 0, s, pool, fwd, reno(1448))
		rcv := NewReceiver(Config{}, 0, s, pool, rev)
		fwd.to, rev.to = rcv, snd
		snd.Start(0)
		s.Run()
	}
}

// TestTimedAcks checks the Mockets acknowledgement policy: one ACK per
// interval while data arrives, carrying SACK blocks, and a complete,
// exactly-once transfer under loss.
func TestTimedAcks(t *testing.T) {
	cfg := Config{Bytes: 300 * 1448, AckInterval: 20 * time.Millisecond}
	h := newHarness(t, cfg, fixedWindow(60*1448), 10*units.Mbps, 20*time.Millisecond)
	rnd := rand.New(rand.NewPCG(5, 5))
	h.fwd.drop = func(p *packet.Packet) bool { return p.Kind == packet.Data && rnd.Float64() < 0.05 }
	h.run(t, 30*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	// 300 segments at 10 Mbit/s take about 0.35 s: a few dozen ACKs at one
	// per 20 ms, far fewer than one per segment or per two.
	if acks := h.rev.n; acks > 60 {
		t.Errorf("%d ACKs for %d segments with a 20 ms SACK timer, want at most 60", acks, h.fwd.n)
	}
}

// fixedWindow is a controller with a constant window, as Mockets uses.
type fixedWindow units.Bytes

func (w fixedWindow) OnPacketSent(clock.Time, units.Bytes, units.Bytes, bool) {}
func (w fixedWindow) OnAck(clock.Time, *cc.Ack)                               {}
func (w fixedWindow) OnCongestionEvent(clock.Time, *cc.LossEvent)             {}
func (w fixedWindow) OnRecoveryEnd(clock.Time)                                {}
func (w fixedWindow) OnRetransmissionTimeout(clock.Time, units.Bytes)         {}
func (w fixedWindow) CongestionWindow() units.Bytes                           { return units.Bytes(w) }
func (w fixedWindow) PacingRate() units.Bandwidth                             { return 0 }

// TestPRRSpreadsTheReduction checks RFC 6937: during fast recovery a Reno
// sender keeps sending, about one segment for every two delivered, instead
// of falling silent until half the window has drained.
func TestPRRSpreadsTheReduction(t *testing.T) {
	cfg := Config{Bytes: 400 * 1448, NoDelayedAck: true}
	h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
	dropped := false
	var sends []clock.Time
	var recStart clock.Time
	h.snd.OnAck = func(now clock.Time, s *Sender) {
		if s.phase == recovery && recStart == 0 {
			recStart = now
		}
	}
	h.fwd.drop = func(p *packet.Packet) bool {
		if h.snd.phase == recovery {
			sends = append(sends, h.s.Now())
		}
		if p.Seq == 60*1448 && !dropped {
			dropped = true
			return true
		}
		return false
	}
	h.run(t, 10*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	if h.snd.Stats().FastRecoveries != 1 {
		t.Fatalf("%d recoveries, want 1", h.snd.Stats().FastRecoveries)
	}
	// The window at the loss is about 70 segments; recovery lasts one RTT,
	// in which PRR sends one segment for every two delivered, from the
	// start.
	if len(sends) < 8 {
		t.Fatalf("only %d segments sent during recovery", len(sends))
	}
	// Without PRR nothing, not even the fast retransmission, goes out
	// until half the window has drained, half an RTT (20 ms) later.
	early := 0
	for _, at := range sends {
		if at.Sub(recStart) < 8*time.Millisecond {
			early++
		}
	}
	if early < 3 {
		t.Errorf("%d of %d recovery segments sent in the first 8 ms of the 40 ms RTT, want the reduction spread (>= 3)", early, len(sends))
	}
}

// TestFirstEnd: the receiver's block search agrees with sort.Search on
// random sorted, disjoint blocks, at every boundary and between them.
func TestFirstEnd(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		var b []packet.Block
		at := int64(rnd.IntN(10))
		for range rnd.IntN(12) {
			start := at + int64(rnd.IntN(5)+1)
			end := start + int64(rnd.IntN(5)+1)
			b = append(b, packet.Block{Start: start, End: end})
			at = end
		}
		for x := int64(-1); x <= at+2; x++ {
			want := sort.Search(len(b), func(k int) bool { return b[k].End >= x })
			if got := firstEnd(b, x); got != want {
				t.Fatalf("blocks %v, x %d: firstEnd %d, sort.Search %d", b, x, got, want)
			}
		}
	}
}

// TestLostRetransmissionFoundByRACKTimeRule loses segment 30 and its first
// retransmission, with the transfer ending two segments after that
// retransmission, sent within a quarter of the minimum RTT of it; segment
// 5 arrives after segment 6, so the path is known to reorder and RACK's
// reordering window is a quarter of the minimum RTT. The default gap rule
// then has no later delivery to judge the retransmission by and waits for
// the timeout; Linux's time rule (Config.RACKRetransmissions) marks it an
// RTT plus the reordering window after it was sent, on the reordering
// timer, since the last ACK comes before that.
func TestLostRetransmissionFoundByRACKTimeRule(t *testing.T) {
	for _, rackRule := range []bool{false, true} {
		cfg := Config{Bytes: 104 * 1448, RACKRetransmissions: rackRule}
		h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
		h.fwd.hold = func(p *packet.Packet) time.Duration {
			if p.Seq == 5*1448 && !p.Retransmission {
				return 2 * time.Millisecond
			}
			return 0
		}
		var retx []clock.Time
		var lastOriginal, lastAck clock.Time
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Retransmission {
				retx = append(retx, h.s.Now())
			} else {
				lastOriginal = h.s.Now()
			}
			return p.Seq == 30*1448 && len(retx) <= 1
		}
		h.rev.drop = func(p *packet.Packet) bool {
			if len(retx) == 1 {
				lastAck = h.s.Now() + clock.Time(h.rev.delay)
			}
			return false
		}
		h.run(t, 20*time.Second)
		st := h.snd.Stats()
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("rack rule %v: delivered %d, want %d", rackRule, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		if len(retx) != 2 || st.Retransmissions != 2 {
			t.Fatalf("rack rule %v: %d retransmissions (%v), want 2", rackRule, st.Retransmissions, retx)
		}
		minRTT := h.snd.rtt.Min()
		reo := minRTT / 4
		if !h.snd.reordSeen {
			t.Fatalf("rack rule %v: no reordering seen; the case needs it", rackRule)
		}
		if gap := lastOriginal.Sub(retx[0]); gap <= 0 || gap >= reo {
			t.Fatalf("rack rule %v: the last original went %v after the first retransmission; the case needs (0, %v)", rackRule, gap, reo)
		}
		// Found by the timeout or by RACK's time rule, the lost
		// retransmission is counted once either way (Linux counts it in
		// tcp_timeout_mark_lost and in tcp_rack_detect_loss).
		if n := h.snd.LostRetransmits(); n != 1 {
			t.Errorf("rack rule %v: %d lost retransmissions, want 1", rackRule, n)
		}
		if !rackRule {
			if st.RTOs != 1 {
				t.Errorf("gap rule: %d timeouts, want 1 (no later delivery to judge the retransmission by)", st.RTOs)
			}
			continue
		}
		if st.RTOs != 0 {
			t.Errorf("rack rule: %d timeouts, want 0", st.RTOs)
		}
		// Judged neither before an RTT plus the reordering window has
		// passed since it was sent, nor by an ACK (the last came before
		// that): by the reordering timer, before the 200 ms minimum RTO
		// could have fired.
		d := retx[1].Sub(retx[0])
		if d < minRTT+reo || d >= 200*time.Millisecond {
			t.Errorf("rack rule: second retransmission %v after the first, want within [%v, 200ms)", d, minRTT+reo)
		}
		if !(lastAck < retx[1]) {
			t.Errorf("rack rule: the last ACK arrived at %v, not before the second retransmission at %v: the timer was not needed", lastAck, retx[1])
		}
	}
}

// TestArmRACK: one ACK's deadlines for an original and a retransmission
// arm the reordering timer for the earlier, whichever rule found it, and a
// retransmission's deadline never pushes back the timer, while an
// original's replaces a stale one (the order the two rules run in does not
// matter; it once did).
func TestArmRACK(t *testing.T) {
	ms := func(n int) clock.Time { return clock.Time(time.Duration(n) * time.Millisecond) }
	never := clock.Never
	for _, c := range []struct {
		name             string
		armed            clock.Time // the timer's deadline before the ACK
		orig, retx, want clock.Time
	}{
		{"nothing waits", never, never, never, never},
		{"retransmission earlier than original", never, ms(100), ms(80), ms(80)},
		{"original earlier than retransmission", never, ms(80), ms(100), ms(80)},
		{"original replaces a stale deadline", ms(50), ms(100), never, ms(100)},
		{"retransmission keeps an earlier deadline", ms(50), never, ms(100), ms(50)},
		{"retransmission brings the timer forward", ms(150), never, ms(100), ms(100)},
		{"both, after a stale deadline", ms(50), ms(120), ms(90), ms(90)},
	} {
		h := newHarness(t, Config{Bytes: 10 * 1448}, reno(1448), 10*units.Mbps, 20*time.Millisecond)
		if c.armed != never {
			h.snd.rackT.Reset(c.armed)
		}
		h.snd.armRACK(0, c.orig, c.retx, true)
		if got := h.snd.rackT.Deadline(); got != c.want {
			t.Errorf("%s: timer at %v, want %v", c.name, got, c.want)
		}
	}
}

// TestOutOfOrderBlocksAgainstModel: the receiver's out-of-order blocks
// (the live ones, from oooHead on) are exactly the maximal runs of
// received segments above rcvNxt after every arrival, while arrivals
// mostly fill the lowest holes (as repairs do, so blocks are absorbed from
// the front) and new data keeps arriving above, which makes the block
// array fill up, move its live blocks down and grow.
func TestOutOfOrderBlocksAgainstModel(t *testing.T) {
	const mss = 100
	for seed := range uint64(20) {
		rnd := rand.New(rand.NewPCG(seed, 11))
		r, recv := segmentReceiver(mss, (*packet.Pool).Put)
		have := map[int]bool{}
		top := 0
		for step := range 3000 {
			var k int
			next := int(r.RcvNxt() / mss)
			switch x := rnd.IntN(10); {
			case x < 4: // new data, leaving a gap now and then
				top += 1 + rnd.IntN(3)
				k = top
			case x < 8: // a low hole
				k = next + rnd.IntN(4)
			default: // anywhere
				k = next + rnd.IntN(top-next+2)
			}
			have[k] = true
			top = max(top, k)
			recv(k)
			next = 0
			for have[next] {
				next++
			}
			var want []packet.Block
			for q := next; q <= top+2; q++ {
				if have[q] && !have[q-1] {
					want = append(want, packet.Block{Start: int64(q * mss)})
				}
				if have[q] && !have[q+1] {
					want[len(want)-1].End = int64((q + 1) * mss)
				}
			}
			got := r.ooo[r.oooHead:]
			if r.RcvNxt() != int64(next*mss) || !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: rcvNxt %d, blocks %v; want %d, %v", seed, step, r.RcvNxt(), got, next*mss, want)
			}
			if len(r.ooo) == 0 && r.oooHead != 0 || int(r.oooHead) > len(r.ooo) {
				t.Fatalf("seed %d step %d: head %d of %d blocks", seed, step, r.oooHead, len(r.ooo))
			}
		}
	}
}

// TestAbsorbedBlocksDoNotMove: repairs that fill the lowest hole one after
// another, as a recovery's retransmissions do, absorb blocks without moving
// the blocks above them (moving them cost a copy of every block per repair:
// 30% of a 10 Gbit/s flow's CPU time).
func TestAbsorbedBlocksDoNotMove(t *testing.T) {
	const mss, holes = 100, 2000
	r, recv := segmentReceiver(mss, (*packet.Pool).Put)
	for k := 1; k < 2*holes; k += 2 {
		recv(k)
	}
	if n := len(r.ooo) - int(r.oooHead); n != holes {
		t.Fatalf("%d blocks, want %d", n, holes)
	}
	last := &r.ooo[len(r.ooo)-1]
	for k := 0; k < 2*holes-2; k += 2 {
		recv(k)
		if &r.ooo[len(r.ooo)-1] != last {
			t.Fatalf("after repairing segment %d the highest block moved", k)
		}
	}
	// Segment 2*holes-2 is still missing; the highest block is left.
	if r.RcvNxt() != int64((2*holes-2)*mss) || len(r.ooo)-int(r.oooHead) != 1 {
		t.Fatalf("rcvNxt %d with %d blocks left", r.RcvNxt(), len(r.ooo)-int(r.oooHead))
	}
}

// TestNextSegmentAgainstModel: the next segment to retransmit is always
// the lowest that waits (lost, not retransmitted, not SACKed), whatever
// order losses, retransmissions lost in turn (listed below the scan's hint,
// pendingRetx), SACKs and sends come in.
func TestNextSegmentAgainstModel(t *testing.T) {
	for seed := range uint64(50) {
		rnd := rand.New(rand.NewPCG(seed, 13))
		h := newHarness(t, Config{Bytes: 1 << 30}, reno(1448), 10*units.Mbps, 20*time.Millisecond)
		s := h.snd
		const n = 300
		for range n {
			s.addSegment(0)
		}
		s.lostFront = s.nxtSeg()
		waiting := func(k int64) bool { g := s.seg(k); return g.lost && !g.retrans && !g.sacked }
		for step := range 2000 {
			k := s.unaSeg + int64(rnd.IntN(n))
			g := s.seg(k)
			switch rnd.IntN(4) {
			case 0: // marked lost
				if !g.lost && !g.sacked {
					s.markLost(k, g)
				}
			case 1: // a retransmission lost in turn (rack.go)
				if g.retrans {
					g.retrans = false
					s.pendingRetx(k)
				}
			case 2: // SACKed
				if !g.retrans {
					g.sacked = true
				}
			case 3: // the sender retransmits what nextSegment offers
				if k, ok := s.nextSegment(); ok {
					s.seg(k).retrans = true
				}
			}
			want := int64(-1)
			for q := s.unaSeg; q < s.nxtSeg(); q++ {
				if waiting(q) {
					want = q
					break
				}
			}
			got, ok := s.nextSegment()
			if !ok {
				got = -1
			}
			if got != want {
				t.Fatalf("seed %d step %d: next retransmission %d, want %d", seed, step, got, want)
			}
		}
	}
}

// TestRetxHeap: the heap's minimum is the least of what was pushed and not
// popped.
func TestRetxHeap(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	var h retxHeap
	var ref []int64
	for range 5000 {
		if len(ref) > 0 && rnd.IntN(3) == 0 {
			h.pop()
			ref = ref[1:]
		} else {
			k := rnd.Int64N(1000)
			h.push(k)
			ref = append(ref, k)
			slices.Sort(ref)
		}
		if h.len() != len(ref) || len(ref) > 0 && h.min() != ref[0] {
			t.Fatalf("heap of %d, min %v; want %d, %v", h.len(), h.k, len(ref), ref)
		}
	}
}

// TestPacketTimersAgainstScan: with Mockets' per-packet timers and random
// losses, after every ACK the timer stands at the earliest deadline of the
// packets still waiting on their own timers, as a scan of the whole
// window finds it (the queues by expiry count only avoid the scan).
func TestPacketTimersAgainstScan(t *testing.T) {
	for seed := range uint64(6) {
		rnd := rand.New(rand.NewPCG(seed, 17))
		cfg := Config{Bytes: 5000 * 1448, PacketTimers: true, AckInterval: time.Millisecond}
		h := newHarness(t, cfg, reno(1448), 50*units.Mbps, 20*time.Millisecond)
		h.fwd.drop = func(*packet.Packet) bool { return rnd.IntN(20) == 0 }
		checked := 0
		h.snd.OnAck = func(now clock.Time, s *Sender) {
			next := clock.Never
			for k := s.unaSeg; k < s.nxtSeg(); k++ {
				g := s.seg(k)
				if g.sacked || (g.lost && !g.retrans) {
					continue
				}
				next = min(next, g.sentAt.Add(s.packetRTO(g.timeouts)))
			}
			if next != clock.Never {
				next = max(next, now)
			}
			if got := s.rtoT.Deadline(); got != next {
				t.Fatalf("seed %d at %v: timer at %v, the scan says %v", seed, now, got, next)
			}
			checked++
		}
		h.run(t, 60*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes || h.snd.Stats().RTOs == 0 || checked < 1000 {
			t.Fatalf("seed %d: delivered %d of %d with %d timer expiries, %d ACKs checked", seed, h.rcv.DeliveredBytes, cfg.Bytes, h.snd.Stats().RTOs, checked)
		}
	}
}
