package tcp

import (
	"time"
	"unsafe"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/internal/prefetch"
	"github.com/cclab/cclab/netsim/packet"
)

// Receiver is the receiving endpoint of one flow: it reassembles data,
// delivers it in order to the application, and acknowledges it with
// cumulative ACKs and SACK blocks, delaying ACKs as Linux does (every second
// full segment, or after DelAckTimeout; immediately when data arrives out of
// order or fills a hole, RFC 5681 §4.2).
type Receiver struct {
	// Hot: read or written for every data segment, in about that order
	// (see Sender: a many-flow simulation prefetches these lines).
	pool *packet.Pool
	flow int32
	// Silent suppresses acknowledgements (the SYN-ACK excepted): a coding
	// layer below acknowledges on the receiver's behalf.
	Silent       bool
	noDelayedAck bool  // Config.NoDelayedAck
	ackFirst     bool  // Config.AckFirst
	noSACK       bool  // Config.NoSACK
	linuxWnd     bool  // Config.LinuxReceiveWindow: rw != nil, kept here in the hot line
	nRecent      uint8 // entries of recent in use, at most packet.MaxSACK
	compress     bool  // sc != nil (UseSACKCompression), kept here in the hot line
	ecn          rxECN // Config.ECN's state (ecn.go), in the padding
	// oooHead is where the live blocks start in ooo: those before it
	// were absorbed by rcvNxt. Repairs fill the holes from the lowest up,
	// and dropping the blocks they absorb by moving the rest down cost a
	// copy of every block above (a 10 Gbit/s loss episode leaves
	// thousands); moving oooHead costs nothing. ooo is emptied when no
	// live block is left, so len(ooo) > 0 says whether there is one and
	// ooo[len(ooo)-1] is the highest.
	oooHead int32

	rcvNxt int64
	// ooo holds the received blocks above rcvNxt, sorted and disjoint,
	// from oooHead on (live).
	ooo         []packet.Block
	pending     int // segments received and not yet acknowledged
	delackT     clock.Timer
	lastEcho    clock.Time
	lastArrival clock.Time
	qa          quickAck // quickack.go

	// DeliveredBytes is the payload delivered in order to the application.
	DeliveredBytes units.Bytes
	// Segments counts data segments received, duplicates included.
	Segments int64
	// OnDeliver, if set, is called when in-order data reaches the
	// application.
	OnDeliver func(now clock.Time, n units.Bytes)
	out       packet.Receiver
	// Config fields read per segment.
	header        units.Bytes
	bytes         units.Bytes
	delAckTimeout time.Duration
	ackInterval   time.Duration

	// Out-of-order data and the end.
	// recent holds the starts of the most recently received out-of-order
	// segments, newest first, for RFC 2018's SACK block order.
	recent [packet.MaxSACK]int64
	// Duplicates counts segments that carried only already-received data.
	Duplicates int64
	// DoneAt is when the last byte of a finite transfer was delivered, or
	// clock.Never.
	DoneAt clock.Time
	// OnDone, if set, is called when a finite transfer is complete.
	OnDone func(now clock.Time)

	// Cold: the handshake and quick-ACK entries.
	synOptions units.Bytes
	initialRTO time.Duration
	minRTO     time.Duration
	quickAcks  int // quick ACKs one entry grants (quickack.go)
	noQuickAck bool
	rw         *rcvWindow    // Config.LinuxReceiveWindow (rcvbuf.go), else nil
	sc         *sackCompress // UseSACKCompression (sackcomp.go), else nil
}

// ReceiverHotLines is the number of 64-byte lines from the start of a
// Receiver that a data segment's processing reads, for prefetching.
const ReceiverHotLines = int(unsafe.Offsetof(Receiver{}.recent)+63) / 64

// NewReceiver returns the receiver for flow, acknowledging through out.
func NewReceiver(cfg Config, flow int32, clk clock.Scheduler, pool *packet.Pool, out packet.Receiver) *Receiver {
	r := new(Receiver)
	InitReceiver(r, cfg, flow, clk, pool, out)
	return r
}

// InitReceiver makes *r the receiver NewReceiver would return, in memory
// the caller chose (see InitSender). Whatever *r held is overwritten; r
// must not be in use.
func InitReceiver(r *Receiver, cfg Config, flow int32, clk clock.Scheduler, pool *packet.Pool, out packet.Receiver) {
	cfg = cfg.WithDefaults()
	*r = Receiver{
		pool: pool, flow: flow, out: out, DoneAt: clock.Never,
		noDelayedAck: cfg.NoDelayedAck, ackFirst: cfg.AckFirst, noSACK: cfg.NoSACK,
		header: cfg.Header, bytes: cfg.Bytes, delAckTimeout: cfg.DelAckTimeout, ackInterval: cfg.AckInterval,
		synOptions: cfg.SynOptions, initialRTO: cfg.InitialRTO, minRTO: cfg.MinRTO,
		quickAcks: quickAcks(cfg), noQuickAck: cfg.NoQuickAck,
		// The timer-driven policy models no receive buffer.
		linuxWnd: cfg.LinuxReceiveWindow && cfg.AckInterval == 0,
	}
	switch cfg.ECN {
	case ECNRFC3168:
		r.ecn = rxECNOn
	case ECNDCTCP:
		r.ecn = rxECNOn | rxAccurate
	}
	if r.linuxWnd {
		r.rw = &rcvWindow{advmss: int64(cfg.MSS)}
		r.rw.readT = clk.NewTimer(r.appRead)
	}
	r.qa.synAt = clock.Never
	r.delackT = clk.NewTimer(func(now clock.Time) {
		if r.pending > 0 {
			r.sendAck(now)
		}
	})
}

// Prefetch starts loading what the next segment's processing reads
// through the receiver's pointers (the delayed-ACK timer, the out-of-order
// blocks); see Sender.Prefetch. It changes nothing.
func (r *Receiver) Prefetch() {
	prefetch.Line(prefetch.Data(r.delackT))
	if len(r.ooo) > 0 {
		prefetch.Line(unsafe.Pointer(&r.ooo[r.oooHead]))
	}
}

// RcvNxt returns the next byte expected.
func (r *Receiver) RcvNxt() int64 { return r.rcvNxt }

// Receive implements packet.Receiver for data segments.
func (r *Receiver) Receive(now clock.Time, p *packet.Packet) {
	if p.Kind == packet.Ack {
		// The handshake's final ACK (Config.HandshakeAck): no data.
		r.pool.Put(p)
		if r.linuxWnd && !r.rw.established {
			r.rcvWindowEstablish(now)
		}
		return
	}
	if p.Kind == packet.Syn {
		// Answer every SYN, duplicates included: the SYN-ACK may have been
		// lost.
		p.Kind = packet.SynAck
		r.qa.synAt = now
		p.EchoAt, p.SentAt = p.SentAt, now
		p.Size = r.header + r.synOptions
		if r.linuxWnd {
			p.SetWindow(units.Bytes(synAckWindow(r.rw.advmss)))
		}
		r.out.Receive(now, p)
		return
	}
	seq, end := p.Seq, p.Seq+int64(p.Len)
	r.lastEcho = p.SentAt
	r.lastArrival = now
	tsecr := p.EchoAt
	ackNow := false
	if r.ecn != 0 {
		ackNow = r.ecnOnData(now, p.ECN)
	}
	r.pool.Put(p)
	r.Segments++
	if r.ackInterval > 0 {
		r.receiveTimed(now, seq, end)
		return
	}
	if r.linuxWnd {
		r.rcvWindowOnData(now, end-seq, tsecr)
	}
	r.quickAckOnData(now, tsecr)
	switch {
	case end <= r.rcvNxt:
		// Duplicate: ACK at once so the sender learns its state (RFC 5681
		// §4.2 "out-of-order").
		r.Duplicates++
		r.enterQuickAck()
		r.sendAck(now)
	case seq <= r.rcvNxt:
		hadHoles := len(r.ooo) > 0
		prev := r.rcvNxt
		r.advance(now, end)
		if r.linuxWnd {
			// The segment, and the out-of-order data it joined, wait in
			// the receive queue for the application; tcp_event_data_recv
			// -> tcp_grow_window runs before the ACK decision
			// (__tcp_ack_snd_check).
			r.queue(now, end-prev, r.rcvNxt-prev)
			r.growWindow(end - seq)
		}
		switch {
		case hadHoles || r.noDelayedAck || r.inQuickAck() || r.ackFirstNow() || ackNow:
			r.sendAck(now)
		default:
			r.pending++
			if r.pending >= 2 {
				r.sendAck(now)
			} else if !r.delackT.Armed() {
				r.delackT.Reset(now.Add(r.delAckTimeout))
			}
		}
	default:
		fresh := r.insert(seq, end)
		if !fresh {
			r.Duplicates++
		}
		r.noteRecent(seq)
		if r.linuxWnd {
			// tcp_data_queue_ofo: tcp_grow_window for a segment that
			// brought new data (SACK flows only), then tcp_rcvbuf_grow
			// with the out-of-order span.
			if fresh && !r.noSACK {
				r.growWindow(end - seq)
			}
			r.rcvbufGrow(r.rw.space)
		}
		if r.compress {
			r.ackOutOfOrder(now)
			return
		}
		r.sendAck(now)
	}
}

// receiveTimed handles a segment under the timer-driven acknowledgement
// policy: record it, and make sure an acknowledgement goes out within
// AckInterval.
func (r *Receiver) receiveTimed(now clock.Time, seq, end int64) {
	switch {
	case end <= r.rcvNxt:
		r.Duplicates++
	case seq <= r.rcvNxt:
		r.advance(now, end)
	default:
		if !r.insert(seq, end) {
			r.Duplicates++
		}
		r.noteRecent(seq)
	}
	r.pending++
	if !r.delackT.Armed() {
		r.delackT.Reset(now.Add(r.ackInterval))
	}
}

// advance moves rcvNxt to end and absorbs out-of-order blocks that became
// contiguous, delivering the bytes.
func (r *Receiver) advance(now clock.Time, end int64) {
	prev := r.rcvNxt
	r.rcvNxt = max(r.rcvNxt, end)
	i := int(r.oooHead)
	for i < len(r.ooo) && r.ooo[i].Start <= r.rcvNxt {
		r.rcvNxt = max(r.rcvNxt, r.ooo[i].End)
		i++
	}
	if i == len(r.ooo) {
		r.ooo, r.oooHead = r.ooo[:0], 0
	} else {
		r.oooHead = int32(i)
	}
	n := units.Bytes(r.rcvNxt - prev)
	r.DeliveredBytes += n
	if r.OnDeliver != nil {
		r.OnDeliver(now, n)
	}
	if r.bytes > 0 && r.rcvNxt >= int64(r.bytes) && r.DoneAt == clock.Never {
		r.DoneAt = now
		if r.OnDone != nil {
			r.OnDone(now)
		}
	}
}

// insert adds [seq, end) to the out-of-order blocks; it reports whether any
// byte was new.
func (r *Receiver) insert(seq, end int64) bool {
	h := int(r.oooHead)
	// Binary search: a fast flow's loss episode leaves thousands of holes.
	i := h + firstEnd(r.ooo[h:], seq)
	if i < len(r.ooo) && r.ooo[i].Start <= seq && r.ooo[i].End >= end {
		return false
	}
	// Merge with every block overlapping or touching [seq, end).
	j := i
	for j < len(r.ooo) && r.ooo[j].Start <= end {
		seq = min(seq, r.ooo[j].Start)
		end = max(end, r.ooo[j].End)
		j++
	}
	if j > i {
		r.ooo[i] = packet.Block{Start: seq, End: end}
		if j > i+1 {
			// A hole closed: the blocks above move down one place or more.
			r.ooo = append(r.ooo[:i+1], r.ooo[j:]...)
		}
		return true
	}
	if len(r.ooo) == cap(r.ooo) && h >= len(r.ooo)-h {
		// Full, and at least half of it absorbed blocks: move the live
		// ones down rather than grow (each block moves at most once per
		// doubling, as append's growth copies it).
		n := copy(r.ooo, r.ooo[h:])
		r.ooo, r.oooHead = r.ooo[:n], 0
		i -= h
	}
	r.ooo = append(r.ooo, packet.Block{})
	copy(r.ooo[i+1:], r.ooo[i:])
	r.ooo[i] = packet.Block{Start: seq, End: end}
	return true
}

// firstEnd returns the index of the first of the sorted, disjoint blocks
// that ends at or after x (len(b) if none): sort.Search's binary search,
// without its closure call per probe (every ACK of a flow with holes runs
// it for each recent segment).
func firstEnd(b []packet.Block, x int64) int {
	lo, hi := 0, len(b)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b[m].End < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func (r *Receiver) noteRecent(seq int64) {
	n := min(int(r.nRecent)+1, len(r.recent))
	copy(r.recent[1:n], r.recent[:n-1])
	r.recent[0] = seq
	r.nRecent = uint8(n)
}

// block returns the out-of-order block holding seq, if any.
func (r *Receiver) block(seq int64) (packet.Block, bool) {
	// The first block ending above seq is the only one that can hold it.
	i := int(r.oooHead) + firstEnd(r.ooo[r.oooHead:], seq+1)
	if i < len(r.ooo) && r.ooo[i].Start <= seq {
		return r.ooo[i], true
	}
	return packet.Block{}, false
}

// Flush sends at once the ACK that a delayed-ACK timer holds, if any: for
// a live receiver that knows the transfer is complete (its size came with
// the handshake), as Linux acknowledges a FIN at once. The simulator does
// not call it.
func (r *Receiver) Flush(now clock.Time) {
	if r.pending > 0 {
		r.sendAck(now)
	}
}

func (r *Receiver) sendAck(now clock.Time) {
	r.pending = 0
	r.delackT.Stop()
	if r.compress && r.sc.n > 0 {
		r.sackCompressed()
	}
	r.quickAckSent()
	if r.Silent {
		return
	}
	p := r.pool.Get()
	p.Flow = r.flow
	p.Kind = packet.Ack
	p.AckNo = r.rcvNxt
	p.EchoAt = r.lastEcho
	p.SentAt = now
	if r.ecn&rxDemandCWR != 0 {
		p.ECN = packet.ECE
	}
	if r.linuxWnd {
		p.SetWindow(units.Bytes(r.advertise(r.rw.unread)))
	}
	if r.ackInterval > 0 {
		p.AckDelay = now.Sub(r.lastArrival)
	}
	// RFC 2018 §4: the first block holds the most recently received
	// segment, then the most recent others; fill any room with the highest
	// remaining blocks so the sender learns of every hole eventually.
	add := func(b packet.Block) {
		for i := range int(p.NSACK) {
			if p.SACK[i] == b {
				return
			}
		}
		p.SACK[p.NSACK] = b
		p.NSACK++
	}
	if r.noSACK {
		r.nRecent = 0
	}
	// Without out-of-order data (nearly every ACK) no block can hold a
	// recent segment: recent keeps its entries after the holes close.
	for i := 0; i < int(r.nRecent) && len(r.ooo) > 0 && int(p.NSACK) < packet.MaxSACK; i++ {
		if b, ok := r.block(r.recent[i]); ok {
			add(b)
		}
	}
	for i := len(r.ooo) - 1; i >= int(r.oooHead) && int(p.NSACK) < packet.MaxSACK && !r.noSACK; i-- {
		add(r.ooo[i])
	}
	p.Size = r.header
	if p.NSACK > 0 {
		p.Size += 2 + 8*units.Bytes(p.NSACK) + 2 // kind, length, blocks, padding to 4
	}
	r.out.Receive(now, p)
}
