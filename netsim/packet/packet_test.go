package packet

import (
	"testing"
	"unsafe"

	"github.com/cclab/cclab/core/units"
)

// A packet is read on every hop of a many-flow simulation, mostly from
// memory not in cache: it must stay within two cache lines.
func TestPacketFitsTwoCacheLines(t *testing.T) {
	if n := unsafe.Sizeof(Packet{}); n > 128 {
		t.Fatalf("Packet is %d bytes, more than two 64-byte cache lines", n)
	}
}

func TestPoolReusesZeroedPacketsAndKeepsBodies(t *testing.T) {
	var pool Pool
	p := pool.Get()
	p.Flow, p.Kind, p.Seq, p.NSACK = 7, Ack, 1448, 1
	p.SACK[0] = Block{Start: 1, End: 2}
	b := p.Body()
	b.CodeStart = 9
	b.Coeffs = append(b.Coeffs, 1, 2, 3)
	b.Payload = append(b.Payload, make([]byte, 100)...)
	q := pool.Get()
	if pool.Live() != 2 || pool.Allocated() != 2 {
		t.Fatalf("live %d allocated %d, want 2 and 2", pool.Live(), pool.Allocated())
	}
	pool.Put(p)
	pool.Put(q)
	if pool.Live() != 0 {
		t.Fatalf("live %d after returning both, want 0", pool.Live())
	}
	// Last in, first out: q, then p, and nothing new is allocated.
	if got := pool.Get(); got != q {
		t.Fatal("pool did not reuse the most recently returned packet")
	}
	r := pool.Get()
	if r != p || pool.Allocated() != 2 {
		t.Fatalf("pool allocated %d packets, want the 2 returned ones reused", pool.Allocated())
	}
	if r.Flow != 0 || r.Kind != Data || r.Seq != 0 || r.NSACK != 0 || r.SACK[0] != (Block{}) {
		t.Fatalf("reused packet not zeroed: %+v", *r)
	}
	rb := r.Body()
	if rb != b {
		t.Fatal("the pool dropped the packet's body")
	}
	if rb.CodeStart != 0 || len(rb.Coeffs) != 0 || len(rb.Payload) != 0 {
		t.Fatalf("reused body not emptied: %+v", *rb)
	}
	if cap(rb.Payload) < 100 || cap(rb.Coeffs) < 3 {
		t.Fatal("the pool dropped the body's storage")
	}
}

func TestPoolGetPutDoesNotAllocate(t *testing.T) {
	var pool Pool
	pool.Put(pool.Get())
	allocs := testing.AllocsPerRun(100, func() {
		p := pool.Get()
		p.Body().Payload = append(p.Body().Payload, 1)
		pool.Put(p)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Get/Put once warm, want 0", allocs)
	}
}

// TestWindow: an Ack or SynAck carries the window it was given, zero
// included; a data segment and an Ack nobody gave a window report none,
// and a packet back from the pool reports none (Put clears Seq).
func TestWindow(t *testing.T) {
	var pool Pool
	for _, w := range []units.Bytes{0, 1, 65160, 1 << 40} {
		for _, k := range []Kind{Ack, SynAck} {
			p := pool.Get()
			p.Kind = k
			if _, ok := p.Window(); ok {
				t.Fatalf("kind %d: a window before SetWindow", k)
			}
			p.SetWindow(w)
			if got, ok := p.Window(); !ok || got != w {
				t.Errorf("kind %d: SetWindow(%d) then Window() = %d, %v", k, w, got, ok)
			}
			pool.Put(p)
		}
	}
	p := pool.Get()
	p.Kind, p.Seq = Data, 1448
	if _, ok := p.Window(); ok {
		t.Error("a data segment's sequence number read as a window")
	}
	p.Kind = Ack
	pool.Put(p)
	if q := pool.Get(); q != p {
		t.Fatal("the pool did not reuse the packet")
	} else if _, ok := q.Window(); ok {
		t.Error("a reused packet kept its window")
	}
}
