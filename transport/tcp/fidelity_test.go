package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// countAcks counts the ACKs the receiver sends and how many new segments
// each acknowledges.
func countAcks(h *harness) *[]int64 {
	var covered []int64
	last := int64(0)
	h.rev.drop = func(p *packet.Packet) bool {
		if p.Kind == packet.Ack {
			covered = append(covered, (p.AckNo-last)/1448)
			last = p.AckNo
		}
		return false
	}
	return &covered
}

// TestQuickAckAtStart: Linux acknowledges each of the first 16 data
// segments at once (TCP_MAX_QUICKACKS), then delays ACKs to every second
// segment; with quick ACKs off every ACK covers two segments.
func TestQuickAckAtStart(t *testing.T) {
	for _, off := range []bool{false, true} {
		cfg := Config{Bytes: 40 * 1448, NoQuickAck: off}
		h := newHarness(t, cfg, fixedWindow(40*1448), 100*units.Mbps, 20*time.Millisecond)
		covered := countAcks(h)
		h.run(t, 5*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("delivered %d of %d", h.rcv.DeliveredBytes, cfg.Bytes)
		}
		c := *covered
		if len(c) < 16 {
			t.Fatalf("quick ACK off=%v: only %d ACKs: %v", off, len(c), c)
		}
		single := 0
		for _, n := range c[:16] {
			if n == 1 {
				single++
			}
		}
		want := 16
		if off {
			want = 0
		}
		if single != want {
			t.Errorf("quick ACK off=%v: %d of the first 16 ACKs cover one segment, want %d (%v)", off, single, want, c)
		}
		if !off {
			for i, n := range c[16:] {
				if n != 2 {
					t.Errorf("ACK %d after quick-ACK mode covers %d segments, want 2 (%v)", 16+i, n, c)
					break
				}
			}
		}
	}
}

// TestAckFirst: with quick ACKs off, AckFirst acknowledges the first data
// segment alone (ns-3.37's receiver), and every later ACK pairs two
// segments, so the pairing is shifted by one from the plain receiver's.
func TestAckFirst(t *testing.T) {
	cfg := Config{Bytes: 41 * 1448, NoQuickAck: true, AckFirst: true}
	h := newHarness(t, cfg, fixedWindow(41*1448), 100*units.Mbps, 20*time.Millisecond)
	covered := countAcks(h)
	h.run(t, 5*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d of %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	c := *covered
	if len(c) != 21 || c[0] != 1 {
		t.Fatalf("%d ACKs %v; want 21, the first covering one segment", len(c), c)
	}
	for i, n := range c[1:] {
		if n != 2 {
			t.Fatalf("ACK %d covers %d segments, want 2 (%v)", i+1, n, c)
		}
	}
}

// TestHandshakeAck: the sender's handshake ACK crosses the forward link
// before the first data segment, delaying it by its transmission time, and
// the receiver takes it for no data.
func TestHandshakeAck(t *testing.T) {
	const rate, delay = 10 * units.Mbps, 20 * time.Millisecond
	firstData := [2]clock.Time{clock.Never, clock.Never}
	for i, on := range []bool{false, true} {
		cfg := Config{Bytes: 20 * 1448, HandshakeAck: on}
		h := newHarness(t, cfg, fixedWindow(20*1448), rate, delay)
		h.rcv.OnDeliver = func(now clock.Time, _ units.Bytes) { firstData[i] = min(firstData[i], now) }
		h.run(t, 5*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes || h.rcv.Segments != 20 || h.rcv.Duplicates != 0 {
			t.Fatalf("handshake ACK %v: delivered %d, %d segments, %d duplicates; want %d, 20, 0", on, h.rcv.DeliveredBytes, h.rcv.Segments, h.rcv.Duplicates, cfg.Bytes)
		}
		want := 21 // the SYN and 20 segments
		if on {
			want++
		}
		if h.fwd.n != want {
			t.Errorf("handshake ACK %v: %d packets forward, want %d", on, h.fwd.n, want)
		}
	}
	if d := firstData[1].Sub(firstData[0]); d != rate.TxTime(52) {
		t.Errorf("the handshake ACK delayed the first data segment by %v, want its transmission time %v", d, rate.TxTime(52))
	}
}

// TestQuickAckAfterIdle: a data segment after an idle gap longer than the
// receiver's RTO re-enters quick-ACK mode (tcp_event_data_recv).
func TestQuickAckAfterIdle(t *testing.T) {
	cfg := Config{}
	h := newHarness(t, cfg, fixedWindow(1448), 100*units.Mbps, 10*time.Millisecond)
	_ = h
	r := h.rcv
	r.Receive(0, &packet.Packet{Kind: packet.Syn})
	// First data 20 ms after the SYN: receiver RTO = 20 + max(40, 200) ms.
	feed := func(at time.Duration, k int64) {
		p := h.pool.Get()
		p.Kind, p.Seq, p.Len = packet.Data, k*1448, 1448
		r.Receive(clock.Time(at), p)
	}
	for k := int64(0); k < 16; k++ {
		feed(20*time.Millisecond+time.Duration(k)*time.Millisecond, k)
	}
	if r.qa.quick != 0 {
		t.Fatalf("%d quick ACKs left after 16 segments", r.qa.quick)
	}
	feed(100*time.Millisecond, 16) // 64 ms gap: below the RTO
	if r.qa.quick != 0 || r.pending != 1 {
		t.Fatalf("after a short gap: quick=%d pending=%d, want a delayed ACK", r.qa.quick, r.pending)
	}
	feed(500*time.Millisecond, 17) // 400 ms gap: above 220 ms
	if r.pending != 0 || r.qa.quick != maxQuickAcks-1 {
		t.Fatalf("after an idle gap: pending=%d quick=%d, want an immediate ACK and %d left", r.pending, r.qa.quick, maxQuickAcks-1)
	}
}

// TestTailLossProbe: the last two segments of a transfer are lost. A probe
// about two SRTT after the last ACK retransmits the last segment; its SACK
// lets RACK mark the other lost; no RTO. Without TLP the RTO repairs it.
func TestTailLossProbe(t *testing.T) {
	for _, off := range []bool{false, true} {
		cfg := Config{Bytes: 60 * 1448, NoTLP: off}
		h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
		lose := map[int64]bool{58 * 1448: true, 59 * 1448: true}
		var probeAt, lastSend clock.Time
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Retransmission && probeAt == 0 {
				probeAt = h.s.Now()
			} else if !p.Retransmission {
				lastSend = h.s.Now()
			}
			if lose[p.Seq] {
				delete(lose, p.Seq)
				return true
			}
			return false
		}
		var doneAt clock.Time
		h.snd.OnDone = func(now clock.Time) { doneAt = now }
		h.run(t, 10*time.Second)
		st := h.snd.Stats()
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("TLP off=%v: delivered %d of %d", off, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		if off {
			if st.RTOs != 1 || st.TLPs != 0 {
				t.Errorf("without TLP: RTOs=%d TLPs=%d, want 1 and 0", st.RTOs, st.TLPs)
			}
			continue
		}
		if st.RTOs != 0 || st.TLPs != 1 || st.Retransmissions != 2 {
			t.Errorf("RTOs=%d TLPs=%d retransmissions=%d, want 0, 1, 2", st.RTOs, st.TLPs, st.Retransmissions)
		}
		srtt := h.snd.RTT().SRTT()
		// The last ACK before the probe arrives about one RTT after the
		// last send; the PTO is 2 SRTT + 2 ms after it.
		if gap := probeAt.Sub(lastSend); gap < 2*srtt || gap > 4*srtt {
			t.Errorf("probe %v after the last new segment, want between 2 and 4 SRTT (SRTT %v)", gap, srtt)
		}
		if d := doneAt.Sub(probeAt); d > 3*srtt {
			t.Errorf("transfer completed %v after the probe, want within 3 SRTT", d)
		}
	}
}

// TestTLPNewData: a bulk flow whose window's tail is lost while
// application data remains probes with new data; no retransmission beyond
// the lost segments and no RTO.
func TestRACKTailHole(t *testing.T) {
	for _, off := range []bool{false, true} {
		// A hole with a single SACKed segment above it: DupThresh never
		// triggers, RACK's time order does.
		cfg := Config{Bytes: 30 * 1448, NoRACK: off}
		h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
		dropped := false
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Seq == 28*1448 && !dropped {
				dropped = true
				return true
			}
			return false
		}
		h.run(t, 10*time.Second)
		st := h.snd.Stats()
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("delivered %d of %d", h.rcv.DeliveredBytes, cfg.Bytes)
		}
		if !off && (st.RTOs != 0 || st.Retransmissions != 1 || st.TLPs != 0) {
			t.Errorf("RTOs=%d TLPs=%d retransmissions=%d, want 0, 0, 1", st.RTOs, st.TLPs, st.Retransmissions)
		}
		if off && st.RTOs == 0 && st.TLPs == 0 {
			t.Errorf("without RACK the hole was repaired without a probe or a timeout: %+v", st)
		}
	}
}

// TestFRTOSpuriousTimeout: the ACK path stalls for 600 ms (a link outage
// holding ACKs, in order) while nothing is lost. The timeout retransmits
// the first segment; the held ACKs then acknowledge segments never
// retransmitted, so F-RTO declares the timeout spurious: nothing else is
// retransmitted and the window comes back. Without F-RTO the whole window
// is sent again.
func TestFRTOSpuriousTimeout(t *testing.T) {
	for _, off := range []bool{false, true} {
		cfg := Config{Bytes: 600 * 1448, NoFRTO: off}
		h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
		stalled := false
		var cwndBefore units.Bytes
		h.rev.drop = func(p *packet.Packet) bool {
			if now := h.s.Now(); !stalled && now > clock.Time(300*time.Millisecond) {
				stalled = true
				h.rev.free = now.Add(600 * time.Millisecond)
				cwndBefore = h.snd.CC().CongestionWindow()
			}
			return false
		}
		var cwndAfter units.Bytes
		h.snd.OnAck = func(now clock.Time, s *Sender) {
			if s.Stats().RTOs == 1 && s.phase == open && cwndAfter == 0 {
				cwndAfter = s.CC().CongestionWindow()
			}
		}
		h.run(t, 20*time.Second)
		st := h.snd.Stats()
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("F-RTO off=%v: delivered %d of %d", off, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		if st.RTOs != 1 {
			t.Fatalf("F-RTO off=%v: %d RTOs, want 1 (the stall is longer than the RTO)", off, st.RTOs)
		}
		if off {
			if st.Retransmissions < 10 || st.SpuriousRTOs != 0 {
				t.Errorf("without F-RTO: %d retransmissions, %d spurious RTOs; want the window resent", st.Retransmissions, st.SpuriousRTOs)
			}
			continue
		}
		if st.SpuriousRTOs != 1 || st.Retransmissions != 1 {
			t.Errorf("spurious RTOs=%d retransmissions=%d, want 1 and 1", st.SpuriousRTOs, st.Retransmissions)
		}
		if cwndAfter < cwndBefore {
			t.Errorf("window after the undo %d, below the %d before the timeout", cwndAfter, cwndBefore)
		}
	}
}

// TestTimeoutMinInTheProbeTimeout: with the tail of a transfer lost and two
// segments out, the probe goes exactly 2 SRTT + Config.TimeoutMin after
// the last ACK (Linux: TCP_TIMEOUT_MIN, two ticks of the kernel's clock),
// 2 ms by default and as set otherwise.
func TestTimeoutMinInTheProbeTimeout(t *testing.T) {
	for _, c := range []struct {
		set, want time.Duration
	}{{0, 2 * time.Millisecond}, {8 * time.Millisecond, 8 * time.Millisecond}} {
		cfg := Config{Bytes: 60 * 1448, TimeoutMin: c.set}
		h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
		firstRetx := loseOnceAt(h, 58*1448, 59*1448)
		var lastAck clock.Time
		var srtt time.Duration
		h.snd.OnAck = func(now clock.Time, s *Sender) {
			if *firstRetx == 0 {
				lastAck, srtt = now, s.RTT().SRTT()
			}
		}
		h.run(t, 10*time.Second)
		if h.snd.Stats().TLPs != 1 {
			t.Fatalf("timeout_min %v: %d probes, want 1", c.set, h.snd.Stats().TLPs)
		}
		if got, want := firstRetx.Sub(lastAck), 2*srtt+c.want; got != want {
			t.Errorf("timeout_min %v: probe %v after the last ACK, want 2 SRTT (%v) + %v = %v", c.set, got, srtt, c.want, want)
		}
	}
}

// TestLinuxTLPTimer: on a 300 ms path the RTO (SRTT plus at least the 200
// ms minimum) comes before the PTO (two SRTT). By default the RTO then
// repairs a lost tail and no probe goes; with Config.LinuxTLPTimer the
// probe goes in its place, as Linux's one retransmission timer sends it.
// Two cases: the transfer's last two segments lost, where the last event
// is an ACK and the probe goes one RTO after it, with no timeout at all;
// and a bulk flow whose link loses everything for 0.7 s, where the last
// events are sends (each ACK before the outage's echo lets new data out)
// and the probe goes one RTO after the first unacknowledged segment's
// transmission (tcp_rto_delta_us), is lost, and the RTO follows one RTO
// after the probe.
func TestLinuxTLPTimer(t *testing.T) {
	const delay = 150 * time.Millisecond
	for _, linux := range []bool{false, true} {
		cfg := Config{Bytes: 1000 * 1448, LinuxTLPTimer: linux}
		h := newHarness(t, cfg, reno(1448), 10*units.Mbps, delay)
		firstRetx := loseOnceAt(h, 998*1448, 999*1448)
		var lastAck clock.Time
		var rto time.Duration
		h.snd.OnAck = func(now clock.Time, s *Sender) {
			if *firstRetx == 0 {
				lastAck, rto = now, s.currentRTO()
			}
		}
		h.run(t, 20*time.Second)
		st := h.snd.Stats()
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("linux %v: delivered %d of %d", linux, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		if srtt := h.snd.RTT().SRTT(); rto >= 2*srtt {
			t.Fatalf("linux %v: RTO %v not below the PTO's 2 SRTT (%v): the case does not arise", linux, rto, 2*srtt)
		}
		if !linux {
			if st.RTOs != 1 || st.TLPs != 0 {
				t.Errorf("by default: RTOs=%d TLPs=%d, want 1 and 0", st.RTOs, st.TLPs)
			}
			continue
		}
		if st.RTOs != 0 || st.TLPs != 1 || st.Retransmissions != 2 {
			t.Errorf("linux: RTOs=%d TLPs=%d retransmissions=%d, want 0, 1, 2", st.RTOs, st.TLPs, st.Retransmissions)
		}
		if got := firstRetx.Sub(lastAck); got != rto {
			t.Errorf("linux: probe %v after the last ACK, want the RTO %v", got, rto)
		}
	}

	for _, linux := range []bool{false, true} {
		// A fixed window of 100 segments, below the path's 259: no queue,
		// so the RTT and the RTO stay put.
		cfg := Config{LinuxTLPTimer: linux}
		h := newHarness(t, cfg, fixedWindow(100*1448), 10*units.Mbps, delay)
		const from, until = clock.Time(5 * time.Second), clock.Time(5700 * time.Millisecond)
		// The sends no ACK let out after the outage begins are the
		// timers': the probe, the timeout's retransmission.
		var timerSends []clock.Time
		var lastAck, headSent clock.Time
		var rtoAtAck, rtoAtSend time.Duration
		h.snd.OnAck = func(now clock.Time, s *Sender) {
			if len(timerSends) == 0 {
				lastAck, rtoAtAck = now, s.currentRTO()
			}
		}
		h.fwd.drop = func(p *packet.Packet) bool {
			now := h.s.Now()
			if now >= from && now != lastAck {
				timerSends = append(timerSends, now)
			} else if len(timerSends) == 0 {
				headSent, rtoAtSend = h.snd.seg(h.snd.unaSeg).sentAt, h.snd.currentRTO()
			}
			return now >= from && now < until
		}
		h.run(t, 12*time.Second)
		st := h.snd.Stats()
		if len(timerSends) == 0 {
			t.Fatalf("outage, linux %v: no send without an ACK", linux)
		}
		if !linux {
			if st.TLPs != 0 || st.RTOs != 1 {
				t.Errorf("outage, by default: TLPs=%d RTOs=%d, want 0 and 1", st.TLPs, st.RTOs)
			}
			if want := lastAck.Add(rtoAtAck); timerSends[0] != want {
				t.Errorf("outage, by default: the timeout at %v, want one RTO (%v) after the last ACK, %v", timerSends[0], rtoAtAck, want)
			}
			continue
		}
		if st.TLPs != 1 || st.RTOs != 1 || len(timerSends) < 2 {
			t.Fatalf("outage, linux: TLPs=%d RTOs=%d after %d timer sends, want 1 and 1 (the probe is lost in the outage)", st.TLPs, st.RTOs, len(timerSends))
		}
		if want := headSent.Add(rtoAtSend); timerSends[0] != want {
			t.Errorf("outage, linux: probe at %v, want the head's transmission %v plus the RTO %v = %v", timerSends[0], headSent, rtoAtSend, want)
		}
		if want := timerSends[0].Add(rtoAtSend); timerSends[1] != want {
			t.Errorf("outage, linux: the timeout at %v, want one RTO (%v) after the probe, %v", timerSends[1], rtoAtSend, want)
		}
	}
}

// loseOnceAt drops the data segments starting at seqs once each on h's
// forward path; the time it returns is the first retransmission's (the
// probe's or the timeout's; 0 until one is sent).
func loseOnceAt(h *harness, seqs ...int64) *clock.Time {
	lose := map[int64]bool{}
	for _, q := range seqs {
		lose[q] = true
	}
	var first clock.Time
	h.fwd.drop = func(p *packet.Packet) bool {
		if p.Retransmission && first == 0 {
			first = h.s.Now()
		}
		if lose[p.Seq] {
			delete(lose, p.Seq)
			return true
		}
		return false
	}
	return &first
}

// TestLinuxTLPTimerArming: with Config.LinuxTLPTimer the probe is armed
// where Linux 6.18 arms it, and nowhere else. tcp_schedule_loss_probe
// refuses outside the open and CWR states, Disorder included, and arms
// the RTO instead; and tcp_ack re-arms the timer only from an ACK that
// acknowledged or SACKed data (FLAG_SET_XMIT_TIMER), so a duplicate ACK
// leaves a pending probe where it was. By default the sender keeps its
// own rule (a probe in Disorder, re-armed from every ACK).
func TestLinuxTLPTimerArming(t *testing.T) {
	// A hole near the tail with two segments SACKed above it: fewer than
	// DupThresh, so without RACK the sender stays in Disorder until a
	// timer acts. Linux's rule leaves it to the RTO.
	for _, linux := range []bool{false, true} {
		cfg := Config{Bytes: 30 * 1448, NoRACK: true, LinuxTLPTimer: linux}
		h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 10*time.Millisecond)
		loseOnceAt(h, 27*1448)
		h.run(t, 5*time.Second)
		st := h.snd.Stats()
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("disorder, linux %v: delivered %d of %d", linux, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		want := Stats{TLPs: 1}
		if linux {
			want = Stats{RTOs: 1}
		}
		if st.TLPs != want.TLPs || st.RTOs != want.RTOs {
			t.Errorf("disorder, linux %v: TLPs=%d RTOs=%d, want %d and %d", linux, st.TLPs, st.RTOs, want.TLPs, want.RTOs)
		}
	}

	// Every ACK of a loss-free transfer arrives twice, 1 µs apart: the
	// copy acknowledges nothing new.
	for _, linux := range []bool{false, true} {
		cfg := Config{Bytes: 200 * 1448, LinuxTLPTimer: linux}
		h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 10*time.Millisecond)
		dups, moved := 0, 0
		h.rev.drop = func(p *packet.Packet) bool {
			q := h.pool.Get()
			*q = *p
			at := h.s.Now().Add(h.rev.delay + time.Microsecond)
			h.s.At(at, sim.HandlerFunc(func(now clock.Time, _ any) {
				// The handshake's reply, duplicated, is no ACK of data.
				data := h.snd.una > 0
				before := h.snd.tlp.timer.Deadline()
				h.snd.Receive(now, q)
				if data && before != clock.Never {
					dups++
					if h.snd.tlp.timer.Deadline() != before {
						moved++
					}
				}
			}), nil)
			return false
		}
		h.run(t, 5*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("duplicates, linux %v: delivered %d of %d", linux, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		if st := h.snd.Stats(); st.Retransmissions != 0 || st.TLPs != 0 {
			t.Fatalf("duplicates, linux %v: %d retransmissions, %d probes: the transfer was not loss-free", linux, st.Retransmissions, st.TLPs)
		}
		if dups < 50 {
			t.Fatalf("duplicates, linux %v: only %d with a probe pending", linux, dups)
		}
		if linux && moved != 0 {
			t.Errorf("duplicates, linux: %d of %d moved the pending probe, want none", moved, dups)
		}
		if !linux && moved != dups {
			t.Errorf("duplicates, by default: %d of %d moved the pending probe, want all", moved, dups)
		}
	}
}

// TestNoProbeBeforeTheTimedAck: a receiver that acknowledges only on a
// timer (Config.AckInterval, Mockets' SACK timer) holds every ACK up to
// the interval, and the sender's RTT samples leave the hold out; on a path
// whose RTT is below the interval, a probe timeout of 2 SRTT fired before
// nearly every ACK (cclab send --ack-interval 20ms on loopback: 67 probes
// in a lossless 10 MB). The probe now waits at least SRTT plus the
// interval; on longer paths 2 SRTT already does, and nothing changes.
func TestNoProbeBeforeTheTimedAck(t *testing.T) {
	for _, delay := range []time.Duration{500 * time.Microsecond, 50 * time.Millisecond} {
		cfg := Config{Bytes: 300 * 1448, AckInterval: 20 * time.Millisecond}
		h := newHarness(t, cfg, reno(1448), 10*units.Mbps, delay)
		h.run(t, 60*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("delay %v: delivered %d of %d", delay, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		if st := h.snd.Stats(); st.TLPs != 0 || st.Retransmissions != 0 {
			t.Errorf("delay %v, lossless: %d probes and %d retransmissions, want none", delay, st.TLPs, st.Retransmissions)
		}
	}
}
