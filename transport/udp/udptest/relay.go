// Package udptest provides a lossy UDP relay for testing transports over
// real sockets on loopback: it forwards datagrams between a client and a
// server and drops, duplicates, reorders, delays, rate-limits and
// ECN-marks them as told, keeping each datagram's ECN field (on Linux).
// It is a test shim, not an emulator: it runs in user space on the wall
// clock and only on the addresses it is given (use 127.0.0.1).
package udptest

import (
	"container/heap"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/cclab/cclab/internal/ipecn"
)

// Path configures one direction of the relay.
type Path struct {
	// Loss is the probability that a datagram is dropped.
	Loss float64
	// Duplicate is the probability that a datagram is delivered twice.
	Duplicate float64
	// Reorder is the probability that a datagram is held back by
	// ReorderDelay [2ms] more than the others, so later ones overtake it.
	Reorder      float64
	ReorderDelay time.Duration
	// Delay is the one-way propagation delay.
	Delay time.Duration
	// Rate, if positive, limits the path to this many bits per second
	// (datagram payload plus 28 bytes of IP and UDP header), with a
	// drop-tail queue of QueueBytes [64 KiB].
	Rate       float64
	QueueBytes int
	// MarkBytes, if positive, with Rate, marks an ECN-capable datagram
	// CE instead of queueing it unmarked when it finds at least this
	// many bytes queued (DCTCP's step marking, RFC 8257 §3.1); a
	// datagram that is not ECN-capable is queued or dropped as without.
	MarkBytes int
}

// Stats count what the relay did in one direction.
type Stats struct {
	Forwarded, Lost, Duplicated, Reordered, QueueDrops, Marked int64
}

// Relay forwards between a client (the latest that sent to Addr) and a
// server.
type Relay struct {
	front, back *net.UDPConn
	fwd, rev    *direction
	client      netip.AddrPort
	clientMu    sync.Mutex
	wg          sync.WaitGroup
	done        chan struct{}
	once        sync.Once
}

// New starts a relay on 127.0.0.1 towards server (a loopback address).
func New(server string, fwd, rev Path, seed uint64) (*Relay, error) {
	saddr, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		return nil, err
	}
	if !saddr.IP.IsLoopback() {
		return nil, errors.New("udptest: the relay only forwards to loopback addresses")
	}
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	back, err := net.DialUDP("udp", nil, saddr)
	if err != nil {
		front.Close()
		return nil, err
	}
	for _, c := range []*net.UDPConn{front, back} {
		_ = c.SetReadBuffer(4 << 20)
		_ = c.SetWriteBuffer(4 << 20)
	}
	r := &Relay{front: front, back: back, done: make(chan struct{})}
	backECN, frontECN := newECNSocket(back), newECNSocket(front)
	r.fwd = newDirection(fwd, rand.New(rand.NewPCG(seed, 1)), func(b []byte, cp ipecn.Codepoint) {
		backECN.set(cp)
		_, _ = back.Write(b)
	}, r.done)
	r.rev = newDirection(rev, rand.New(rand.NewPCG(seed, 2)), func(b []byte, cp ipecn.Codepoint) {
		r.clientMu.Lock()
		c := r.client
		r.clientMu.Unlock()
		if c.IsValid() {
			frontECN.set(cp)
			_, _ = front.WriteToUDPAddrPort(b, c)
		}
	}, r.done)
	r.wg.Add(4)
	go r.readFront()
	go r.readBack()
	go func() { defer r.wg.Done(); r.fwd.deliver() }()
	go func() { defer r.wg.Done(); r.rev.deliver() }()
	return r, nil
}

// Addr is the address clients send to.
func (r *Relay) Addr() string { return r.front.LocalAddr().String() }

// SetPath changes a direction's impairments while the relay runs.
func (r *Relay) SetPath(forward bool, p Path) {
	d := r.rev
	if forward {
		d = r.fwd
	}
	d.mu.Lock()
	d.cfg = p.withDefaults()
	d.mu.Unlock()
}

// Stats returns the counters of the forward and reverse directions.
func (r *Relay) Stats() (fwd, rev Stats) {
	r.fwd.mu.Lock()
	fwd = r.fwd.stats
	r.fwd.mu.Unlock()
	r.rev.mu.Lock()
	rev = r.rev.stats
	r.rev.mu.Unlock()
	return fwd, rev
}

// Close stops the relay and waits for its goroutines.
func (r *Relay) Close() {
	r.once.Do(func() {
		close(r.done)
		r.front.Close()
		r.back.Close()
		r.wg.Wait()
	})
}

// ecnSocket carries datagrams' ECN fields across the relay: it reads the
// field of those received and sets it on those sent.
type ecnSocket struct {
	raw  syscall.RawConn
	cur  ipecn.Codepoint
	ok   bool
	set4 [4]func(fd uintptr)
}

func newECNSocket(c *net.UDPConn) *ecnSocket {
	e := &ecnSocket{}
	raw, err := c.SyscallConn()
	if err != nil || !ipecn.Receive(raw) {
		return e
	}
	e.raw = raw
	for cp := range e.set4 {
		e.set4[cp] = ipecn.Setter(ipecn.Codepoint(cp), &e.ok)
	}
	return e
}

// set makes the socket's next datagrams carry cp.
func (e *ecnSocket) set(cp ipecn.Codepoint) {
	if e.raw == nil || cp == e.cur {
		return
	}
	e.cur = cp
	_ = e.raw.Control(e.set4[cp])
}

func (r *Relay) readFront() {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	oob := make([]byte, ipecn.OOBLen)
	for {
		n, oobn, _, from, err := r.front.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if r.closed() {
				return
			}
			continue
		}
		// The latest client is the one answered: tests run one
		// connection at a time, each from a new socket.
		r.clientMu.Lock()
		r.client = from
		r.clientMu.Unlock()
		r.fwd.offer(buf[:n], ipecn.FromOOB(oob[:oobn]))
	}
}

func (r *Relay) readBack() {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	oob := make([]byte, ipecn.OOBLen)
	for {
		n, oobn, _, _, err := r.back.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if r.closed() {
				return
			}
			continue
		}
		r.rev.offer(buf[:n], ipecn.FromOOB(oob[:oobn]))
	}
}

func (r *Relay) closed() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (p Path) withDefaults() Path {
	if p.ReorderDelay == 0 {
		p.ReorderDelay = 2 * time.Millisecond
	}
	if p.QueueBytes == 0 {
		p.QueueBytes = 64 << 10
	}
	return p
}

// direction impairs and schedules one direction's datagrams.
type direction struct {
	mu      sync.Mutex
	cfg     Path
	rnd     *rand.Rand
	stats   Stats
	pending pendingHeap
	seq     uint64
	lastOut time.Time // departure of the last datagram from the rate limiter
	wake    chan struct{}
	send    func([]byte, ipecn.Codepoint)
	done    chan struct{}
	pool    [][]byte
}

func newDirection(p Path, rnd *rand.Rand, send func([]byte, ipecn.Codepoint), done chan struct{}) *direction {
	return &direction{cfg: p.withDefaults(), rnd: rnd, send: send, done: done, wake: make(chan struct{}, 1)}
}

type pending struct {
	at  time.Time
	seq uint64
	b   []byte
	ecn ipecn.Codepoint
}

type pendingHeap []pending

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h pendingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)   { *h = append(*h, x.(pending)) }
func (h *pendingHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (d *direction) offer(b []byte, cp ipecn.Codepoint) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.cfg
	if d.rnd.Float64() < c.Loss {
		d.stats.Lost++
		return
	}
	now := time.Now()
	at := now
	if c.Rate > 0 {
		bits := float64(len(b)+28) * 8
		start := d.lastOut
		if start.Before(now) {
			start = now
		}
		backlog := start.Sub(now).Seconds() * c.Rate / 8
		if backlog+float64(len(b)+28) > float64(c.QueueBytes) {
			d.stats.QueueDrops++
			return
		}
		if c.MarkBytes > 0 && backlog >= float64(c.MarkBytes) && cp.Capable() {
			cp = ipecn.CE
			d.stats.Marked++
		}
		d.lastOut = start.Add(time.Duration(bits / c.Rate * 1e9))
		at = d.lastOut
	}
	at = at.Add(c.Delay)
	copies := 1
	if d.rnd.Float64() < c.Duplicate {
		copies = 2
		d.stats.Duplicated++
	}
	if d.rnd.Float64() < c.Reorder {
		at = at.Add(c.ReorderDelay)
		d.stats.Reordered++
	}
	for range copies {
		var buf []byte
		if n := len(d.pool); n > 0 {
			buf, d.pool = d.pool[n-1][:0], d.pool[:n-1]
		}
		d.seq++
		heap.Push(&d.pending, pending{at: at, seq: d.seq, b: append(buf, b...), ecn: cp})
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *direction) deliver() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		d.mu.Lock()
		var wait time.Duration = time.Hour
		for len(d.pending) > 0 {
			p := d.pending[0]
			if w := time.Until(p.at); w > 0 {
				wait = w
				break
			}
			heap.Pop(&d.pending)
			d.stats.Forwarded++
			d.mu.Unlock()
			d.send(p.b, p.ecn)
			d.mu.Lock()
			d.pool = append(d.pool, p.b)
		}
		d.mu.Unlock()
		t.Reset(wait)
		select {
		case <-d.done:
			return
		case <-d.wake:
		case <-t.C:
		}
	}
}
