package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc/estimate"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// tap calls f with every packet before passing it on.
type tap struct {
	to packet.Receiver
	f  func(now clock.Time, p *packet.Packet)
}

func (t *tap) Receive(now clock.Time, p *packet.Packet) {
	t.f(now, p)
	t.to.Receive(now, p)
}

// TestOldestRTTSampleAgainstModel: on a lossless transfer with delayed
// ACKs, after every ACK the sender's SRTT and RTO are those of an
// estimator fed, per ACK, the RTT of the first segment the ACK newly
// acknowledges (Linux's seq_rtt) with OldestRTTSample, or of the last one
// by default, and the minimum RTT is the least last-segment RTT either
// way. The model times segments from the wire, not from the scoreboard.
// With a window of three segments, delayed ACKs pair segments that left
// at different times, so the two rules give different estimates, which
// the test requires.
func TestOldestRTTSampleAgainstModel(t *testing.T) {
	const mss = 1448
	for _, oldest := range []bool{false, true} {
		cfg := Config{MSS: mss, Bytes: 400 * mss, NoQuickAck: true, OldestRTTSample: oldest}
		s := sim.New()
		pool := &packet.Pool{}
		fwd := &wire{s: s, pool: pool, rate: 10 * units.Mbps, delay: 20 * time.Millisecond}
		rev := &wire{s: s, pool: pool, delay: 20 * time.Millisecond}
		sent := map[int64]clock.Time{} // segment start -> first send time
		out := &tap{to: fwd, f: func(now clock.Time, p *packet.Packet) {
			if p.Kind == packet.Data {
				if _, ok := sent[p.Seq]; !ok {
					sent[p.Seq] = now
				}
			}
		}}
		// A window of three segments: each delayed ACK pairs the last
		// segment of one flight with the first of the next.
		snd := NewSender(cfg, 0, s, pool, out, &stepWindow{s: s, window: func(clock.Time) units.Bytes { return 3 * mss }})
		rcv := NewReceiver(cfg, 0, s, pool, rev)
		fwd.to = rcv
		ref := estimate.NewRTT(snd.cfg.MinRTO)
		var minRTT time.Duration
		var una int64
		acks, differ := 0, 0
		rev.to = &tap{to: snd, f: func(now clock.Time, p *packet.Packet) {
			if p.Kind == packet.SynAck && acks == 0 {
				// The handshake's sample, from the SYN's echoed time.
				r := now.Sub(p.EchoAt)
				ref.UpdateSeq(r, 0, 0)
				minRTT = r
				acks++
				return
			}
			if p.Kind != packet.Ack || p.AckNo <= una {
				return
			}
			first, ok1 := sent[una]
			last, ok2 := sent[(p.AckNo-1)/mss*mss]
			if !ok1 || !ok2 {
				t.Fatalf("ACK %d: segments %d and %d were never sent", p.AckNo, una, (p.AckNo-1)/mss*mss)
			}
			sample := now.Sub(last)
			if oldest {
				sample = now.Sub(first)
			}
			if first != last {
				differ++
			}
			ref.UpdateSeq(sample, p.AckNo, snd.nxt)
			if r := now.Sub(last); minRTT == 0 || r < minRTT {
				minRTT = r
			}
			una = p.AckNo
			acks++
		}}
		snd.Start(0)
		for s.Step() {
			if acks > 0 && (snd.rtt.SRTT() != ref.SRTT() || snd.currentRTO() != ref.LinuxRTO(snd.cfg.InitialRTO, snd.cfg.MaxRTO) || snd.rtt.Min() != minRTT) {
				t.Fatalf("oldest=%v, after %d ACKs: SRTT %v RTO %v min %v; the model's %v %v %v", oldest, acks,
					snd.rtt.SRTT(), snd.currentRTO(), snd.rtt.Min(), ref.SRTT(), ref.LinuxRTO(snd.cfg.InitialRTO, snd.cfg.MaxRTO), minRTT)
			}
		}
		if rcv.DeliveredBytes != cfg.Bytes || snd.Stats().Retransmissions != 0 {
			t.Fatalf("oldest=%v: delivered %d with %d retransmissions, want %d and none", oldest, rcv.DeliveredBytes, snd.Stats().Retransmissions, cfg.Bytes)
		}
		if differ < 10 {
			t.Fatalf("oldest=%v: only %d of %d ACKs covered segments sent at different times", oldest, differ, acks)
		}
	}
}
