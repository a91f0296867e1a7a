package nc

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// pipe is a steady-state coded connection for benchmarks and allocation
// tests: a FIFO network of fixed depth (in packets) in each direction,
// Bernoulli erasures on the forward path, preallocated packets.
type pipe struct {
	enc     *Encoder
	dec     *Decoder
	loss    *rand.Rand
	p       float64
	payload []byte

	fwd        []Coded // ring of coded packets in flight
	fHead, fN  int
	acks       []Receipt // ring of acknowledgements in flight
	aHead, aN  int
	depth      int
	next       uint64
	delivered  uint64
	stalls     int
	innovative int
}

func newPipe(tb testing.TB, window, payloadSize int, r, p float64) *pipe {
	tb.Helper()
	cfg := Config{Window: window, PayloadSize: payloadSize}
	enc, err := NewEncoder(EncoderConfig{Config: cfg, Redundancy: r}, rand.NewPCG(1, 1))
	if err != nil {
		tb.Fatal(err)
	}
	dec, err := NewDecoder(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	depth := max(1, window/4) // a quarter window each way: the window stays busy
	pl := &pipe{enc: enc, dec: dec, loss: rand.New(rand.NewPCG(2, 2)), p: p, depth: depth,
		fwd: make([]Coded, 8*depth+8), acks: make([]Receipt, 8*depth+8)}
	if payloadSize > 0 {
		pl.payload = make([]byte, payloadSize)
		for i := range pl.fwd {
			pl.fwd[i] = Coded{Coeffs: make([]byte, 0, window), Payload: make([]byte, 0, payloadSize+lenHeader)}
		}
	} else {
		for i := range pl.fwd {
			pl.fwd[i] = Coded{Coeffs: make([]byte, 0, window)}
		}
	}
	return pl
}

// step hands one packet from TCP (or, when the window is full, retransmits
// the oldest unseen one as TCP would after a timeout) and moves the network.
func (pl *pipe) step(tb testing.TB) {
	index := pl.next
	if pl.enc.Full() {
		index = pl.enc.State().Start
		pl.stalls++
	} else {
		pl.next++
	}
	var pld []byte
	if pl.payload != nil {
		pld = pl.payload[:int(index%uint64(len(pl.payload)))]
	}
	n, err := pl.enc.Add(index, pld)
	if err != nil {
		tb.Fatal(err)
	}
	for range n {
		slot := &pl.fwd[(pl.fHead+pl.fN)%len(pl.fwd)]
		// Add asked for n > 0 packets only if the window is not empty, and
		// the acknowledged limit is always above the acknowledged start, so
		// Next cannot fail here.
		if err := pl.enc.Next(slot); err != nil {
			tb.Fatal(err)
		}
		if pl.loss.Float64() < pl.p {
			continue
		}
		if pl.fN == len(pl.fwd) {
			tb.Fatal("forward ring overflow")
		}
		pl.fN++
	}
	for pl.fN > pl.depth {
		r, err := pl.dec.Receive(&pl.fwd[pl.fHead])
		if err != nil {
			tb.Fatal(err)
		}
		if r.Innovative {
			pl.innovative++
		}
		pl.delivered = r.DeliverTo
		pl.fHead = (pl.fHead + 1) % len(pl.fwd)
		pl.fN--
		if pl.aN == len(pl.acks) {
			tb.Fatal("ack ring overflow")
		}
		pl.acks[(pl.aHead+pl.aN)%len(pl.acks)] = r
		pl.aN++
	}
	for pl.aN > pl.depth {
		a := pl.acks[pl.aHead]
		if err := pl.enc.OnAck(a.Ack, a.Limit); err != nil {
			tb.Fatal(err)
		}
		pl.aHead = (pl.aHead + 1) % len(pl.acks)
		pl.aN--
	}
}

// TestSteadyStateDoesNotAllocate checks the per-packet path (Add, Next,
// Receive, OnAck) in both modes.
func TestSteadyStateDoesNotAllocate(t *testing.T) {
	for _, payload := range []int{0, 1448} {
		pl := newPipe(t, 64, payload, 1.2, 0.1)
		for range 2000 {
			pl.step(t)
		}
		if allocs := testing.AllocsPerRun(500, func() { pl.step(t) }); allocs != 0 {
			t.Errorf("payload %d: %g allocations per packet, want 0", payload, allocs)
		}
		// With R(1-p) = 1.08 and a window-limited sender, about 70% of the
		// steps hand down new data; the rest are TCP-like retransmissions
		// while the window is full. Well over half must get through.
		if pl.delivered < 1250 {
			t.Errorf("payload %d: only %d packets delivered after 2500 steps", payload, pl.delivered)
		}
	}
}

func BenchmarkCoding(b *testing.B) {
	for _, bc := range []struct {
		window, payload int
	}{{32, 0}, {128, 0}, {32, 1448}, {128, 1448}} {
		b.Run(fmt.Sprintf("window=%d/payload=%d", bc.window, bc.payload), func(b *testing.B) {
			pl := newPipe(b, bc.window, bc.payload, 1.2, 0.1)
			for range 4 * bc.window {
				pl.step(b)
			}
			b.ReportAllocs()
			start := pl.delivered
			for b.Loop() {
				pl.step(b)
			}
			b.ReportMetric(float64(pl.delivered-start)/float64(b.N), "delivered/op")
		})
	}
}
