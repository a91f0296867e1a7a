// Package link is the emulator's userspace bottleneck: it reads IP packets
// from the sender namespace's TUN device, passes them through the
// simulator's own bottleneck (netsim/link: queue discipline, rate or
// Mahimahi trace, loss model, propagation delay lines) driven by real
// timestamps, and writes them to the receiver namespace's TUN device when
// they are due. Packets in the other direction (ACKs) cross an uncongested
// path with the bottleneck's current propagation delay.
//
// The forwarder runs one event loop on one locked OS thread: ppoll on the
// two TUN descriptors with a nanosecond timeout set to the simulator
// scheduler's next event, then the scheduler is advanced to the wall clock.
// Timer slack is set to 1 µs so the kernel wakes the loop on time. Code on
// other goroutines reaches the loop through Post.
//
// Packets are classified by port: every path (a flow, a background source)
// owns a receiver-side port, so the forwarder can attribute each packet to
// its path without any state in the packets.
package link

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/metrics"
	nlink "github.com/cclab/cclab/netsim/link"
	"github.com/cclab/cclab/netsim/loss"
	"github.com/cclab/cclab/netsim/packet"
)

// IP protocol numbers of the packets the forwarder attributes to paths.
const (
	TCP = 6
	UDP = 17
)

// minProcs is the GOMAXPROCS the loop runs with at least.
const minProcs = 8

// maxPacket bounds a TUN read; the devices run with MTU 1500.
const maxPacket = 2048

// Outcome is what happened to a packet at the bottleneck.
type Outcome uint8

// Outcomes.
const (
	// Sent: transmitted and propagated towards the receiver.
	Sent Outcome = iota
	// Dropped by the queue discipline.
	Dropped
	// Lost: erased by the loss model after transmission.
	Lost
)

// Record is one packet's passage through the bottleneck.
type Record struct {
	// Path is the packet's path index.
	Path int32
	// Outcome says how it left.
	Outcome Outcome
	// Size is the IP packet's length.
	Size int32
	// Arrive is when the forwarder read it, Leave when it left the queue
	// (Sent, Lost: end of transmission; Dropped: the drop).
	Arrive, Leave clock.Time
}

// Path is one flow's or source's route through the emulator and its
// counters. Counters are owned by the loop goroutine; read them after Run
// returns.
type Path struct {
	// Index is the path's number.
	Index int32
	// Proto is TCP or UDP; Port the receiver-side port.
	Proto uint8
	Port  uint16
	// ExtraDelay is added to the propagation delay in each direction.
	ExtraDelay time.Duration

	// Seen counts packets (and bytes) that entered the bottleneck;
	// Delivered those written to the receiver's TUN; Dropped those the
	// queue dropped; Lost those the loss model erased.
	Seen, Delivered, Dropped, Lost int64
	// SeenBytes and DeliveredBytes are IP bytes; DeliveredPayload is
	// transport payload bytes (TCP segment data, UDP datagram data).
	SeenBytes, DeliveredBytes, DeliveredPayload int64
	// BottleneckBytes counts bytes the link transmitted (sent or lost).
	BottleneckBytes int64
	// Marked counts packets the bottleneck's queue marked CE (RFC 3168)
	// that left it (sent or lost) with their IP header rewritten to CE.
	Marked int64
	// CWR counts the TCP segments that entered the bottleneck with the
	// CWR flag: the sender's window reductions for ECN echoes (Linux sets
	// it on the first new segment after each; RFC 3168 §6.1.2), the
	// ECN-setup SYN's CWR aside.
	CWR int64
	// Reverse counts packets carried from receiver to sender.
	Reverse int64
	// LastHop, if set, erases packets after the bottleneck (a flow's own
	// lossy access link); LastHopLost counts them.
	LastHop     loss.Model
	LastHopLost int64
	// RTT holds the round-trip times the forwarder measured for this path
	// (TCP only): from a data segment's arrival at the emulator to the
	// delivery to the sender of the ACK that exactly covers it, skipping
	// retransmitted segments (Karn).
	RTT metrics.Hist
	// Sojourn holds the time the path's packets waited in the queue before
	// their transmission began (rate mode) or before the opportunity that
	// completed them (trace mode).
	Sojourn metrics.Hist

	fwd, rev *nlink.DelayLine
	rtt      rttTracker
	f        *Forwarder
}

// InFlight returns the path's packets inside the emulator at the end:
// what entered minus what left.
func (p *Path) InFlight() int64 {
	return p.Seen - p.Delivered - p.Dropped - p.Lost - p.LastHopLost
}

// Forwarder moves packets between the two TUN devices through the
// bottleneck.
type Forwarder struct {
	// S is the event queue, advanced to the wall clock by Run.
	S *sim.Scheduler
	// Pool recycles packets and their buffers.
	Pool *packet.Pool
	// Link is the bottleneck.
	Link *nlink.Link
	// Paths lists the registered paths by index.
	Paths []*Path
	// Record, when true, keeps a Record per bottleneck packet in Records.
	Record  bool
	Records []Record
	// Capture, if set, is called with every packet the bottleneck sends
	// (those its loss model then erases included) and every reverse
	// packet, at the time it leaves (for pcap files); it must not retain
	// the slice.
	Capture func(now clock.Time, ip []byte)
	// CaptureArrival, if set, is called with every packet that reaches the
	// bottleneck, before its queue; it must not retain the slice.
	CaptureArrival func(now clock.Time, ip []byte)
	// CaptureDrop, if set, is called with every packet the bottleneck's
	// queue drops, at the drop; it must not retain the slice.
	CaptureDrop func(now clock.Time, ip []byte)
	// OnRTT, if set, receives every RTT sample.
	OnRTT func(p *Path, now clock.Time, rtt time.Duration)
	// Other counts packets of no registered path (dropped); WriteErrors
	// counts failed TUN writes.
	Other, WriteErrors int64
	// Lateness holds, for every packet written to a TUN device, how long
	// after its due time the write happened: the emulator's own timing
	// error.
	Lateness metrics.Hist
	// NoRealtime keeps the loop thread at normal priority. By default Run
	// asks for SCHED_FIFO so that a loaded machine delays packets by
	// microseconds rather than by scheduler time slices; Realtime reports
	// whether it got it.
	NoRealtime, Realtime bool

	snd, rcv int
	wake     int
	// The clock's origin is base plus shift: base is fixed in New, and
	// Run moves the origin to its own start by setting shift, which
	// endpoint goroutines reading Now meanwhile see atomically (a
	// time.Time rewritten in place is a data race for them).
	base  time.Time
	shift atomic.Int64 // nanoseconds
	byKey map[uint32]int32

	mu     sync.Mutex
	posted []func(now clock.Time)
	stop   bool
}

// New returns a forwarder between the sender-side and receiver-side TUN
// descriptors (non-blocking). build makes the bottleneck on the forwarder's
// scheduler and pool, reporting to the forwarder's observer; the forwarder
// sets its Output. The clock starts now.
func New(sndTUN, rcvTUN int, build func(s *sim.Scheduler, pool *packet.Pool, obs nlink.Observer) (*nlink.Link, error)) (*Forwarder, error) {
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	f := &Forwarder{
		S: sim.New(), Pool: &packet.Pool{},
		snd: sndTUN, rcv: rcvTUN, wake: wake,
		byKey: map[uint32]int32{},
	}
	l, err := build(f.S, f.Pool, (*observer)(f))
	if err != nil {
		unix.Close(wake)
		return nil, err
	}
	l.Output = f.output
	f.Link = l
	f.base = time.Now()
	return f, nil
}

// Close releases the forwarder's wake-up descriptor (not the TUNs).
func (f *Forwarder) Close() error { return unix.Close(f.wake) }

// Now returns the time since the forwarder was created, or since Run
// started if nothing ran before it (setup between New and Run is not part
// of the run); it is the clock of every timestamp the emulator records,
// safe from any goroutine.
func (f *Forwarder) Now() clock.Time {
	return clock.Time(time.Since(f.base) - time.Duration(f.shift.Load()))
}

// Start returns the wall-clock origin of Now.
func (f *Forwarder) Start() time.Time { return f.base.Add(time.Duration(f.shift.Load())) }

func key(proto uint8, port uint16) uint32 { return uint32(proto)<<16 | uint32(port) }

// AddPath registers a path identified by its protocol and receiver-side
// port. Call before Run.
func (f *Forwarder) AddPath(proto uint8, port uint16, extra time.Duration) (*Path, error) {
	k := key(proto, port)
	if _, dup := f.byKey[k]; dup {
		return nil, fmt.Errorf("emu: port %d/%d registered twice", port, proto)
	}
	p := &Path{Index: int32(len(f.Paths)), Proto: proto, Port: port, ExtraDelay: extra, f: f}
	p.fwd = nlink.NewDelayLine(f.S, (*fwdSink)(p))
	p.rev = nlink.NewDelayLine(f.S, (*revSink)(p))
	f.byKey[k] = p.Index
	f.Paths = append(f.Paths, p)
	return p, nil
}

// Post runs fn on the loop goroutine at the next opportunity, with the
// loop's current time. It is safe from any goroutine.
func (f *Forwarder) Post(fn func(now clock.Time)) {
	f.mu.Lock()
	f.posted = append(f.posted, fn)
	f.mu.Unlock()
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	unix.Write(f.wake, one[:])
}

// Stop makes Run return soon; safe from any goroutine.
func (f *Forwarder) Stop() {
	f.Post(func(clock.Time) { f.stop = true })
}

func (f *Forwarder) runPosted(now clock.Time) {
	f.mu.Lock()
	batch := f.posted
	f.posted = nil
	f.mu.Unlock()
	for _, fn := range batch {
		fn(now)
	}
}

// Run forwards packets until until (a time on the forwarder's clock) or
// Stop. It locks its goroutine to an OS thread.
func (f *Forwarder) Run(until clock.Time) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Wake-ups within 1 µs of the deadline instead of the default 50 µs.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0)
	if !f.NoRealtime {
		// The loop sleeps in ppoll between packets, so real-time priority
		// costs other processes only the forwarding work itself (and the
		// kernel caps it at sched_rt_runtime_us per second).
		if err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: 10}, 0); err == nil {
			f.Realtime = true
			// The thread returns to the runtime's pool afterwards.
			defer unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_NORMAL}, 0)
		}
	}
	// Returning from ppoll needs a free P; with GOMAXPROCS at the core
	// count, busy goroutines (receivers, the GC) can hold them all and
	// delay the loop by milliseconds.
	if runtime.GOMAXPROCS(0) < minProcs {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(minProcs))
	}
	if f.S.Now() == 0 && f.S.Events() == 0 {
		// Setup between New and Run (namespaces, sockets) is not part of
		// the run.
		f.shift.Store(int64(time.Since(f.base)))
	}
	fds := []unix.PollFd{
		{Fd: int32(f.snd), Events: unix.POLLIN},
		{Fd: int32(f.rcv), Events: unix.POLLIN},
		{Fd: int32(f.wake), Events: unix.POLLIN},
	}
	var drain [8]byte
	for {
		now := f.Now()
		f.S.RunUntil(now)
		f.runPosted(now)
		if f.stop || now >= until {
			return nil
		}
		next := min(f.S.Next(), until)
		var ts unix.Timespec
		if wait := next.Sub(f.Now()); wait > 0 {
			ts = unix.NsecToTimespec(int64(wait))
		}
		fds[0].Revents, fds[1].Revents, fds[2].Revents = 0, 0, 0
		if _, err := ppoll(fds, &ts); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("emu: ppoll: %w", err)
		}
		if fds[2].Revents&unix.POLLIN != 0 {
			unix.Read(f.wake, drain[:])
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			if err := f.readAll(f.snd, true); err != nil {
				return err
			}
		}
		if fds[1].Revents&unix.POLLIN != 0 {
			if err := f.readAll(f.rcv, false); err != nil {
				return err
			}
		}
	}
}

// readAll reads what the TUN holds, up to a batch, so that timers are not
// starved under load.
func (f *Forwarder) readAll(fd int, up bool) error {
	for range 64 {
		p := f.Pool.Get()
		body := p.Body()
		if cap(body.Payload) < maxPacket {
			body.Payload = make([]byte, maxPacket)
		}
		n, err := unix.Read(fd, body.Payload[:maxPacket])
		if err != nil {
			f.Pool.Put(p)
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				return nil
			}
			return fmt.Errorf("emu: TUN read: %w", err)
		}
		body.Payload = body.Payload[:n]
		now := f.Now()
		f.S.RunUntil(now)
		f.handle(now, p, up)
	}
	return nil
}

// ports returns the IP header length, protocol and ports of an IPv4
// packet, ok false for anything else.
func ports(b []byte) (ihl int, proto uint8, sport, dport uint16, ok bool) {
	if len(b) < 20 || b[0]>>4 != 4 {
		return 0, 0, 0, 0, false
	}
	ihl = int(b[0]&0x0f) * 4
	proto = b[9]
	if ihl < 20 || len(b) < ihl+8 || (proto != TCP && proto != UDP) {
		return 0, 0, 0, 0, false
	}
	return ihl, proto, binary.BigEndian.Uint16(b[ihl:]), binary.BigEndian.Uint16(b[ihl+2:]), true
}

func (f *Forwarder) handle(now clock.Time, p *packet.Packet, up bool) {
	b := p.Body().Payload
	ihl, proto, sport, dport, ok := ports(b)
	port := sport
	if up {
		port = dport
	}
	idx, found := f.byKey[key(proto, port)]
	if !ok || !found {
		f.Other++
		f.Pool.Put(p)
		return
	}
	path := f.Paths[idx]
	p.Flow = idx
	p.Size = units.Bytes(len(b))
	p.SentAt = now
	if proto == UDP {
		p.Kind = packet.Datagram
	} else {
		p.Kind = packet.Data
	}
	if !up {
		path.Reverse++
		path.rev.Push(now, p, f.Link.Delay()+path.ExtraDelay)
		return
	}
	path.Seen++
	path.SeenBytes += int64(len(b))
	// The queue sees the IP header's ECN field: it may mark ECT packets
	// CE, which the observer writes back into the header on the way out.
	p.ECN = ecnBits(b)
	if proto == TCP {
		path.rtt.onData(b, now)
		if len(b) > ihl+13 && b[ihl+13]&(tcpCWR|tcpSYN) == tcpCWR {
			path.CWR++
		}
	}
	if f.CaptureArrival != nil {
		f.CaptureArrival(now, b)
	}
	f.Link.Receive(now, p)
}

// output receives what the bottleneck transmitted.
func (f *Forwarder) output(now clock.Time, p *packet.Packet, delay time.Duration) {
	path := f.Paths[p.Flow]
	path.fwd.Push(now, p, delay+path.ExtraDelay)
}

func (f *Forwarder) write(fd int, b []byte) {
	if _, err := unix.Write(fd, b); err != nil {
		f.WriteErrors++
	}
}

// fwdSink delivers a path's packets to the receiver namespace.
type fwdSink Path

func (s *fwdSink) Receive(now clock.Time, p *packet.Packet) {
	path := (*Path)(s)
	f := path.f
	if path.LastHop != nil && path.LastHop.Lose() {
		path.LastHopLost++
		f.Pool.Put(p)
		return
	}
	path.Delivered++
	path.DeliveredBytes += int64(len(p.Body().Payload))
	path.DeliveredPayload += int64(payloadLen(p.Body().Payload))
	f.write(f.rcv, p.Body().Payload)
	f.Lateness.Add(max(0, f.Now().Sub(now)))
	f.Pool.Put(p)
}

// revSink delivers a path's reverse packets to the sender namespace.
type revSink Path

func (s *revSink) Receive(now clock.Time, p *packet.Packet) {
	path := (*Path)(s)
	f := path.f
	if path.Proto == TCP {
		if rtt, ok := path.rtt.onAck(p.Body().Payload, now); ok {
			path.RTT.Add(rtt)
			if f.OnRTT != nil {
				f.OnRTT(path, now, rtt)
			}
		}
	}
	if f.Capture != nil {
		f.Capture(now, p.Body().Payload)
	}
	f.write(f.snd, p.Body().Payload)
	f.Lateness.Add(max(0, f.Now().Sub(now)))
	f.Pool.Put(p)
}

// payloadLen returns the transport payload length of an IPv4 TCP or UDP
// packet.
func payloadLen(b []byte) int {
	ihl, proto, _, _, ok := ports(b)
	if !ok {
		return 0
	}
	tot := int(binary.BigEndian.Uint16(b[2:]))
	if tot > len(b) {
		tot = len(b)
	}
	switch proto {
	case UDP:
		return max(0, tot-ihl-8)
	default:
		if len(b) < ihl+13 {
			return 0
		}
		off := int(b[ihl+12]>>4) * 4
		return max(0, tot-ihl-off)
	}
}

// observer records the bottleneck's outcomes per path.
type observer Forwarder

func (o *observer) record(now clock.Time, p *packet.Packet, out Outcome) {
	f := (*Forwarder)(o)
	if f.Record {
		f.Records = append(f.Records, Record{Path: p.Flow, Outcome: out, Size: int32(len(p.Body().Payload)), Arrive: p.SentAt, Leave: now})
	}
}

func (o *observer) Dropped(now clock.Time, p *packet.Packet) {
	o.Paths[p.Flow].Dropped++
	o.record(now, p, Dropped)
	if o.CaptureDrop != nil {
		o.CaptureDrop(now, p.Body().Payload)
	}
}

func (o *observer) Lost(now clock.Time, p *packet.Packet) {
	path := o.Paths[p.Flow]
	path.Lost++
	markCE(path, p)
	path.BottleneckBytes += int64(len(p.Body().Payload))
	o.sojourn(now, p)
	o.record(now, p, Lost)
	// Sent on the link and erased after, as the simulator's captures
	// show it: a capture after the queue sees it leave.
	if o.Capture != nil {
		o.Capture(now, p.Body().Payload)
	}
}

func (o *observer) Sent(now clock.Time, p *packet.Packet) {
	path := o.Paths[p.Flow]
	markCE(path, p)
	path.BottleneckBytes += int64(len(p.Body().Payload))
	o.sojourn(now, p)
	o.record(now, p, Sent)
	if o.Capture != nil {
		o.Capture(now, p.Body().Payload)
	}
}

// markCE writes a CE mark the queue set on p into its IP header (fixing
// the header checksum) and counts it; a header that arrived CE stays as
// it was and is not counted.
func markCE(path *Path, p *packet.Packet) {
	if p.ECN&packet.CE != 0 && setCE(p.Body().Payload) {
		path.Marked++
	}
}

// sojourn records the wait before transmission: the time in the system
// minus the packet's own serialisation (rate mode).
func (o *observer) sojourn(now clock.Time, p *packet.Packet) {
	d := now.Sub(p.SentAt)
	if r := o.Link.Rate(); r > 0 {
		d -= r.TxTime(p.Size)
	}
	o.Paths[p.Flow].Sojourn.Add(max(d, 0))
}

// Drain counts every packet still inside the emulator at the end and frees
// it (the queue, the serialiser and the delay lines).
func (f *Forwarder) Drain() (packets int) {
	free := func(p *packet.Packet) { packets++; f.Pool.Put(p) }
	f.Link.Drain(f.Now(), free)
	for _, p := range f.Paths {
		p.fwd.Drain(free)
		p.rev.Drain(free)
	}
	return packets
}

// ppoll blocks without telling the Go runtime (RawSyscall): a goroutine
// returning from an ordinary blocking syscall must win a P back, which on
// a loaded machine can take tens of milliseconds. The loop keeps its P
// instead; the runtime's preemption signal only makes ppoll return EINTR.
func ppoll(fds []unix.PollFd, ts *unix.Timespec) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	if e != 0 {
		return int(r), e
	}
	return int(r), nil
}
