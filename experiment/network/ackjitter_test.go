package network

import (
	"math"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/rng"
	"github.com/cclab/cclab/netsim/packet"
)

// TestJitterAckDraws: ACKs further apart than the jitter get a delay of
// the path's plus a uniform draw in [0, J), whose mean is J/2 within
// four standard errors; ACKs closer together are held back only as far
// as the flow's previous ACK, so every flow's ACKs arrive in the order
// they were sent, and one flow's order does not hold back another's.
func TestJitterAckDraws(t *testing.T) {
	const j = 100 * time.Microsecond
	const d = 10 * time.Millisecond
	n := &Network{ackJitter: j, jitterRnd: rng.New(7).Stream("bottleneck/ack_jitter")}

	// Sparse: one ACK per millisecond.
	const k = 20000
	var sum float64
	for i := range k {
		now := clock.Time(time.Duration(i) * time.Millisecond)
		got := n.noisyAck(0, now, d, inOrderAck)
		if got < d || got >= d+j {
			t.Fatalf("ACK %d: delay %v, want in [%v, %v)", i, got, d, d+j)
		}
		sum += float64(got - d)
	}
	mean := sum / k
	se := float64(j) / math.Sqrt(12) / math.Sqrt(k)
	if math.Abs(mean-float64(j)/2) > 4*se {
		t.Errorf("mean added delay %.0f ns, want %.0f ± %.0f", mean, float64(j)/2, 4*se)
	}

	// Dense: two flows' ACKs interleaved 10 µs apart, closer than the
	// jitter.
	last := [2]clock.Time{clock.Time(time.Hour), clock.Time(time.Hour)}
	held := 0
	for i := range k {
		now := clock.Time(time.Hour + time.Duration(i)*10*time.Microsecond)
		f := int32(1 + i%2)
		got := n.noisyAck(f, now, d, inOrderAck)
		at := now.Add(got)
		if at < last[f-1] {
			t.Fatalf("flow %d: ACK %d arrives at %v, before the previous one (%v)", f, i, at, last[f-1])
		}
		if at == last[f-1] {
			held++ // its draw fell before the previous ACK's arrival
		} else if got < d || got >= d+j {
			t.Fatalf("flow %d: ACK %d's delay %v, want in [%v, %v) unless held to its previous ACK", f, i, got, d, d+j)
		}
		last[f-1] = at
	}
	if held == 0 {
		t.Errorf("no ACK was held back for order: the dense case does not test it")
	}
	// A third flow's ACK over a shorter path is not held back by the
	// others' later arrivals.
	now := clock.Time(time.Hour + k*10*time.Microsecond)
	if got := n.noisyAck(3, now, 0, inOrderAck); got >= j {
		t.Errorf("flow 3's ACK delayed %v, want under %v: held back by other flows", got, j)
	}
}

// inOrderAck and sackedAck are ACKs without and with SACK blocks.
var inOrderAck, sackedAck = &packet.Packet{Kind: packet.Ack}, &packet.Packet{Kind: packet.Ack, NSACK: 1}

func ackOf(sacked bool) *packet.Packet {
	if sacked {
		return sackedAck
	}
	return inOrderAck
}

// TestAckReadDelay: an ACK of in-order data following another takes the
// path's delay plus the read delay; an ACK carrying SACK blocks, the
// first ACK without after one (it fills the hole) and a SYN-ACK, the
// path's delay alone; with ack_jitter too the jitter's draw adds to both, and a SACKed
// ACK right behind a delayed in-order one waits for it, as a flow's ACKs
// keep their order.
func TestAckReadDelay(t *testing.T) {
	const r = 80 * time.Microsecond
	const d = 10 * time.Millisecond
	n := &Network{ackReadDelay: r}
	for i := range 64 {
		now := clock.Time(time.Duration(i) * time.Millisecond) // sparse: never held for order
		// Every eighth ACK carries SACK blocks; the one after it fills the hole.
		sacked, fills := i%8 == 3, i%8 == 4
		want := d + r
		if sacked || fills {
			want = d
		}
		if got := n.noisyAck(0, now, d, ackOf(sacked)); got != want {
			t.Fatalf("ACK %d (sacked %v, fills the hole %v): delay %v, want %v", i, sacked, fills, got, want)
		}
	}
	// A SYN-ACK waits for no read, and the flow's first ACK after it, of
	// in-order data, does.
	if got := n.noisyAck(5, 0, d, &packet.Packet{Kind: packet.SynAck}); got != d {
		t.Errorf("a SYN-ACK: delay %v, want %v", got, d)
	}
	if got := n.noisyAck(5, clock.Time(time.Millisecond), d, inOrderAck); got != d+r {
		t.Errorf("a flow's first ACK: delay %v, want %v", got, d+r)
	}

	// With the jitter too: SACKed, filling the hole, in-order, in turn.
	n.ackJitter = 50 * time.Microsecond
	n.jitterRnd = rng.New(8).Stream("bottleneck/ack_jitter")
	base := clock.Time(time.Hour)
	for i := range 3000 {
		now := base.Add(time.Duration(i) * time.Millisecond)
		lo := d
		if i%3 == 2 {
			lo = d + r
		}
		if got := n.noisyAck(1, now, d, ackOf(i%3 == 0)); got < lo || got >= lo+n.ackJitter {
			t.Fatalf("ACK %d (kind %d of SACKed, filling, in-order): delay %v, want in [%v, %v)", i, i%3, got, lo, lo+n.ackJitter)
		}
	}
	// Dense: a SACKed ACK 10 µs behind a delayed in-order one waits for it.
	for i := range 100 {
		now := base.Add(time.Hour + time.Duration(i)*time.Millisecond)
		n.noisyAck(2, now, d, inOrderAck)
		inOrder := now.Add(time.Microsecond)
		first := n.noisyAck(2, inOrder, d, inOrderAck)
		sacked := now.Add(10 * time.Microsecond)
		second := n.noisyAck(2, sacked, d, sackedAck)
		if first < d+r {
			t.Fatalf("pair %d: the in-order ACK's delay %v, want at least %v", i, first, d+r)
		}
		if sacked.Add(second) < inOrder.Add(first) {
			t.Fatalf("pair %d: the SACKed ACK arrives %v before the in-order one ahead of it", i, inOrder.Add(first).Sub(sacked.Add(second)))
		}
	}
}

// TestAckReadShare: with a share q of in-order ACKs waiting, the
// share that wait is q within four standard errors, and each waits the
// read delay exactly; q = 0 delays none.
func TestAckReadShare(t *testing.T) {
	const r, d, k = 80 * time.Microsecond, 10 * time.Millisecond, 20000
	for _, q := range []float64{0, 0.3} {
		n := &Network{ackReadDelay: r, ackReadShare: q, readRnd: rng.New(9).Stream("bottleneck/ack_read_delay")}
		waited := 0
		for i := range k {
			got := n.noisyAck(0, clock.Time(time.Duration(i)*time.Millisecond), d, inOrderAck)
			switch got {
			case d + r:
				waited++
			case d:
			default:
				t.Fatalf("q %g, ACK %d: delay %v, want %v or %v", q, i, got, d, d+r)
			}
		}
		share := float64(waited) / k
		if se := math.Sqrt(q * (1 - q) / k); math.Abs(share-q) > 4*se || (q == 0 && waited > 0) {
			t.Errorf("q %g: %.4f of in-order ACKs waited, want %g ± %.4f", q, share, q, 4*se)
		}
	}
}

// TestAckJitterRuns: a zero jitter is no jitter (same events and
// counters); a jitter gives the same run for the same seed and another
// for another seed.
func TestAckJitterRuns(t *testing.T) {
	type result struct {
		events uint64
		stats  []string
	}
	run := func(seed int, jitter string) result {
		var r result
		r.stats, r.events = runFlows(t, `
name: jitter
seed: `+strconv.Itoa(seed)+`
duration: 2s
bottleneck: {rate: 50Mbps, delay: 5ms, queue: {discipline: droptail, limit: 60}`+jitter+`}
flows:
  - {name: a, cc: newreno, count: 8, start_spread: 0.2s}
`, 2*time.Second)
		return r
	}
	none := run(3, "")
	if zero := run(3, ", ack_jitter: 0us"); !reflect.DeepEqual(zero, none) {
		t.Errorf("ack_jitter 0 changed the run: %d events, %v; without: %d, %v", zero.events, zero.stats, none.events, none.stats)
	}
	a, b := run(3, ", ack_jitter: 200us"), run(3, ", ack_jitter: 200us")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the same seed gave two runs: %v and %v", a.stats, b.stats)
	}
	if reflect.DeepEqual(a.stats, none.stats) {
		t.Errorf("a 200 µs jitter changed nothing")
	}
	if c := run(4, ", ack_jitter: 200us"); reflect.DeepEqual(c.stats, a.stats) {
		t.Errorf("seeds 3 and 4 gave the same run")
	}
	// The read delay: none at zero; the same run for the same seed;
	// another than the jitter's, and the jitter's draws are its own (a
	// run with both differs from either).
	if zero := run(3, ", ack_read_delay: 0us"); !reflect.DeepEqual(zero, none) {
		t.Errorf("ack_read_delay 0 changed the run: %d events, %v; without: %d, %v", zero.events, zero.stats, none.events, none.stats)
	}
	ra, rb := run(3, ", ack_read_delay: 200us"), run(3, ", ack_read_delay: 200us")
	if !reflect.DeepEqual(ra, rb) {
		t.Errorf("the same seed gave two runs with ack_read_delay: %v and %v", ra.stats, rb.stats)
	}
	if reflect.DeepEqual(ra.stats, none.stats) || reflect.DeepEqual(ra.stats, a.stats) {
		t.Errorf("a 200 µs read delay changed nothing, or did what the jitter does")
	}
	if both := run(3, ", ack_jitter: 200us, ack_read_delay: 200us"); reflect.DeepEqual(both.stats, a.stats) || reflect.DeepEqual(both.stats, ra.stats) {
		t.Errorf("ack_jitter with ack_read_delay gave the run of one of them alone")
	}
}
