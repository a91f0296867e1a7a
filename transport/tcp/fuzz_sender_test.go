package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/internal/fuzzbytes"
	"github.com/cclab/cclab/netsim/packet"
)

// sink takes what a sender sends and returns it to the pool.
type sink struct{ pool *packet.Pool }

func (k sink) Receive(_ clock.Time, p *packet.Packet) { k.pool.Put(p) }

// pacedAlg is a controller with a fixed pacing rate.
type pacedAlg struct {
	cc.Algorithm
	rate units.Bandwidth
}

func (p pacedAlg) PacingRate() units.Bandwidth { return p.rate }

// FuzzSenderAcks feeds a sender ACKs a peer on the wire could send (the
// UDP decoder's rules: SACK blocks non-empty, above the cumulative ACK,
// below 2^62; anything else for the cumulative ACK and the timestamp
// echo), among pauses that let its timers fire: it never panics, SND.UNA
// never goes back or past SND.NXT, nothing it counts goes negative, its
// retransmission timeout stays within its bounds, and time keeps moving.
func FuzzSenderAcks(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 5})
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 9, 1, 3, 3, 0, 4, 1, 4, 0, 2, 8, 2, 0, 0, 2, 1})
	f.Add([]byte{2, 255, 255, 255, 255, 255, 255, 255, 255, 3, 0, 1, 1, 0, 7, 3, 4})
	f.Add([]byte{12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 9, 1, 3, 3, 0, 4, 1, 4, 0, 2, 8, 2, 0, 0, 2, 1, 3, 40}) // paced
	// Timeouts, the head acknowledged, and a SACK of the next
	// retransmission but one: RACK's timer finds the one between lost and
	// the loss state turns into recovery.
	f.Add([]byte{128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 250, 3, 0, 2, 0, 0, 3, 5, 0, 0, 1, 1, 1, 0, 0, 0, 3, 5, 0, 2, 3, 50, 1})
	f.Fuzz(func(t *testing.T, b []byte) { fuzzSenderAcks(t, b, false, false) })
}

// FuzzSenderAcksECN is FuzzSenderAcks on an ECN-capable connection whose
// peer echoes CE (ECE) on the ACKs that acknowledge an odd segment count:
// CWR reductions start, turn into recoveries and are cut short by
// timeouts, with the same checks.
func FuzzSenderAcksECN(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 5})
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 9, 1, 3, 3, 0, 4, 1, 4, 0, 2, 8, 2, 0, 0, 2, 1})
	f.Add([]byte{128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 250, 3, 0, 2, 0, 0, 3, 5, 0, 0, 1, 1, 1, 0, 0, 0, 3, 5, 0, 2, 3, 50, 1})
	f.Fuzz(func(t *testing.T, b []byte) { fuzzSenderAcks(t, b, true, false) })
}

// FuzzSenderAcksWindow is FuzzSenderAcks with Config.LinuxReceiveWindow
// and ACKs that advertise windows in 700-byte steps, so the sender sends
// short segments at the window's edge (runt.go) among whole ones of 1,000
// bytes and SACK blocks fall across both. Besides FuzzSenderAcks' checks,
// the scoreboard's segments tile [SND.UNA, SND.NXT) exactly and each
// one's bytes map back to it, with Nagle on or off.
func FuzzSenderAcksWindow(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 5})
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 9, 1, 3, 3, 0, 4, 1, 4, 0, 2, 8, 2, 0, 0, 2, 1})
	// A SYN-ACK with no window, then windows of 3,500 and 6,300 bytes:
	// three whole segments and a short one, a SACK across them, time.
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 5, 0, 0, 0, 2, 9, 1, 2, 0, 1, 0, 3, 50, 1, 0, 4, 20, 2, 1, 0, 0, 3, 1, 4, 2, 0})
	f.Add([]byte{128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 250, 3, 0, 2, 0, 0, 3, 5, 0, 0, 1, 1, 1, 0, 0, 0, 3, 5, 0, 2, 3, 50, 1})
	f.Fuzz(func(t *testing.T, b []byte) { fuzzSenderAcks(t, b, false, true) })
}

// fuzzSenderAcks is the fuzz targets' body, on an ECN connection if ecn,
// with the peer's window if window.
func fuzzSenderAcks(t *testing.T, b []byte, ecn, window bool) {
	c := fuzzbytes.New(b)
	const mss = 1000
	cfg := Config{MSS: mss, LinuxReceiveWindow: window}
	win := units.Bytes(0) // the window the next ACK advertises, with window
	if ecn {
		cfg.ECN = ECNRFC3168
	}
	sel := c.Byte()
	switch sel % 4 {
	case 1:
		cfg.NoSACK = true
	case 2:
		cfg.NoRACK = true
	case 3:
		cfg.PacketTimers, cfg.AckInterval = true, 5*time.Millisecond
	}
	s := sim.New()
	pool := &packet.Pool{}
	alg := reno(mss)
	// The top bit also starts recovery as Linux does (it keeps its
	// meaning in the pacing rate below, so the inputs keep theirs),
	// with RACK's time rule for retransmissions, as the profile pairs
	// them, so that a loss state can turn into recovery on an ACK.
	cfg.LinuxRecoveryStart = sel&128 != 0
	cfg.RACKRetransmissions = cfg.LinuxRecoveryStart
	// And with Linux's window growth and Disorder state (disorder.go).
	cfg.LinuxWindowGrowth = cfg.LinuxRecoveryStart
	// And with Linux's verdict on the window's use (cwndlimited.go).
	cfg.LinuxCwndLimited = cfg.LinuxRecoveryStart
	// And with Linux's timing of the loss probe against the RTO (tlp.go).
	cfg.LinuxTLPTimer = cfg.LinuxRecoveryStart
	if sel&4 != 0 { // paced as Linux paces (linuxpacing.go)
		cfg.LinuxPacing = true
		alg = pacedTSO{pacedAlg{alg, units.Bandwidth(1+int64(sel>>3)) * units.Mbps}, 2}
	}
	snd := NewSender(cfg, 0, s, pool, sink{pool}, alg)
	if window && sel&64 != 0 {
		snd.UseNagle() // with the peer's window, bit 6 leaves Nagle on (runt.go)
	}
	snd.Start(0)
	ack := func(kind packet.Kind, ackNo int64, echo clock.Time, blocks ...packet.Block) {
		p := pool.Get()
		p.Kind, p.AckNo, p.EchoAt = kind, ackNo, echo
		if window {
			p.SetWindow(win)
		}
		if ecn && (ackNo/mss)&1 != 0 {
			p.ECN = packet.ECE
		}
		for _, bl := range blocks {
			if bl.Start < bl.End && bl.Start > ackNo && bl.End <= 1<<62 && int(p.NSACK) < packet.MaxSACK {
				p.SACK[p.NSACK] = bl
				p.NSACK++
			}
		}
		snd.Receive(s.Now(), p)
	}
	s.RunUntil(clock.Time(time.Millisecond))
	ack(packet.SynAck, 0, clock.Time(int64(c.Uint64())>>int(c.Byte()%64)))
	una := int64(0)
	for c.More() {
		st := snd.State()
		switch c.Byte() % 5 {
		case 0: // an ACK near the window, with blocks near it
			a := st.SndUna + int64(c.Byte()%16)*mss - mss
			if window {
				win = units.Bytes(c.Byte()%64) * 700
			}
			var bl []packet.Block
			for range c.Byte() % 4 {
				s0 := st.SndUna + int64(c.Byte()%32)*mss + int64(c.Byte()%3)*mss/2
				bl = append(bl, packet.Block{Start: s0, End: s0 + int64(c.Byte()%8+1)*mss})
			}
			ack(packet.Ack, a, s.Now().Add(-time.Duration(c.Byte())*time.Millisecond), bl...)
		case 1: // anything at all
			ack(packet.Ack, int64(c.Uint64()), clock.Time(int64(c.Uint64())), packet.Block{Start: int64(c.Uint64() >> 2), End: int64(c.Uint64() >> 2)})
		case 2: // a duplicate
			ack(packet.Ack, st.SndUna, s.Now())
		case 3: // time passes: timers fire
			s.RunUntil(s.Now().Add(time.Duration(c.Byte()) * time.Duration(c.Byte()%4+1) * time.Millisecond))
		case 4: // a SYN-ACK again, or out of the blue
			ack(packet.SynAck, int64(c.Uint64()), clock.Time(int64(c.Uint64())))
		}
		st = snd.State()
		if st.SndUna < una || st.SndUna > st.SndNxt {
			t.Fatalf("SND.UNA %d (was %d), SND.NXT %d", st.SndUna, una, st.SndNxt)
		}
		una = st.SndUna
		if st.InFlight < 0 || snd.sacked < 0 || snd.lost < 0 || snd.retransOut < 0 || snd.outBytes < 0 {
			t.Fatalf("negative counts: in flight %d, sacked %d, lost %d, retransmitted out %d, outstanding %d",
				st.InFlight, snd.sacked, snd.lost, snd.retransOut, snd.outBytes)
		}
		if rto := snd.RTO(); rto < snd.cfg.MinRTO || rto > snd.cfg.MaxRTO {
			t.Fatalf("RTO %v outside [%v, %v]", rto, snd.cfg.MinRTO, snd.cfg.MaxRTO)
		}
		if w := snd.CC().CongestionWindow(); w <= 0 {
			t.Fatalf("window %d", w)
		}
		if window {
			checkTiling(t, snd)
		}
	}
}

// checkTiling checks that the scoreboard's segments, short ones among
// them, tile [SND.UNA, SND.NXT), that segAt maps each one's first and
// last bytes back to it, and that the pipe's count of what they lack of
// an MSS (shortPipe) is theirs, each counted as the byte counters count
// it (outstanding, less SACKed and marked lost, plus retransmitted).
func checkTiling(t *testing.T, snd *Sender) {
	t.Helper()
	at := snd.una
	var out, short units.Bytes
	for k := snd.unaSeg; k < snd.nxtSeg(); k++ {
		g := snd.seg(k)
		in := units.Bytes(1)
		if g.sacked {
			in--
		}
		if g.lost {
			in--
		}
		if g.retrans {
			in++
		}
		short += in * (snd.cfg.MSS - g.len)
		if st := snd.segStart(k); st != at || g.len <= 0 || g.len > snd.cfg.MSS {
			t.Fatalf("segment %d starts at %d with %d bytes, want a start at %d and 1-%d bytes", k, st, g.len, at, snd.cfg.MSS)
		}
		if a, b := snd.segAt(at), snd.segAt(at+int64(g.len)-1); a != k || b != k {
			t.Fatalf("segment %d [%d, %d): its bytes map to %d and %d", k, at, at+int64(g.len), a, b)
		}
		at += int64(g.len)
		out += g.len
	}
	if at != snd.nxt || out != snd.outBytes {
		t.Fatalf("segments end at %d with %d bytes, SND.NXT %d, %d outstanding", at, out, snd.nxt, snd.outBytes)
	}
	var got units.Bytes
	if snd.rare != nil {
		got = snd.rare.pipeShort
	}
	if got != short {
		t.Fatalf("the pipe counts %d bytes of short segments' shortfall, its segments %d", got, short)
	}
	// Disorder is looked at per ACK; a timeout between ACKs leaves the
	// open state, and the next ACK sees it.
	if snd.caState == caDisorder && snd.phase == open && snd.sacked == 0 && snd.renoSacked == 0 && snd.lost == 0 && snd.retransOut == 0 && (snd.n == 0 || !snd.seg(snd.unaSeg).everRetrans) {
		t.Fatal("Disorder with nothing SACKed, lost or retransmitted outstanding")
	}
}
