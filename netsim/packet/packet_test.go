package packet

import (
	"testing"
	"unsafe"
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

// TestPoolSlabs: packets handed out across slab boundaries, the huge-page
// slabs included (from hugeFrom packets on), are distinct, zeroed, within
// their slab and counted once each; packets returned are reused before
// any new one.
func TestPoolSlabs(t *testing.T) {
	var pool Pool
	n := hugeFrom + hugeSlab + 100 // into the second huge slab
	seen := make(map[*Packet]bool, n)
	all := make([]*Packet, 0, n)
	for i := range n {
		p := pool.Get()
		if seen[p] {
			t.Fatalf("packet %d handed out twice", i)
		}
		if *p != (Packet{}) {
			t.Fatalf("packet %d not zeroed: %+v", i, *p)
		}
		seen[p] = true
		p.Seq = int64(i) // written, so that an overlap would show
		all = append(all, p)
	}
	if pool.Allocated() != n || pool.Live() != n {
		t.Fatalf("allocated %d live %d, want %d", pool.Allocated(), pool.Live(), n)
	}
	for i, p := range all {
		if p.Seq != int64(i) {
			t.Fatalf("packet %d overwritten by another (seq %d)", i, p.Seq)
		}
	}
	// The first huge slab starts on a huge page boundary.
	if a := uintptr(unsafe.Pointer(all[hugeFrom])); a%(2<<20) != 0 {
		t.Errorf("the first huge slab starts at %#x, not on a 2 MB boundary", a)
	}
	for _, p := range all[:1000] {
		pool.Put(p)
	}
	for range 1000 {
		pool.Get()
	}
	if pool.Allocated() != n {
		t.Fatalf("allocated %d after reusing 1000, want %d", pool.Allocated(), n)
	}
}
