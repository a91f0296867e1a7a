package link

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	nlink "github.com/cclab/cclab/netsim/link"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/netsim/queue"
)

// BenchmarkForwardPath measures the forwarder's per-packet work without
// TUN devices: a data segment through classification, RTT bookkeeping,
// the bottleneck (100 Mbit/s, DropTail) and the delay line, written to
// /dev/null, and its ACK back through the reverse path. It must not
// allocate in steady state.
func BenchmarkForwardPath(b *testing.B) {
	null, err := unix.Open("/dev/null", unix.O_WRONLY, 0)
	if err != nil {
		b.Skip(err)
	}
	defer unix.Close(null)
	f, err := New(null, null, func(s *sim.Scheduler, pool *packet.Pool, obs nlink.Observer) (*nlink.Link, error) {
		q, _ := queue.NewDropTail(queue.Limit{Packets: 1000})
		return nlink.New(s, pool, nlink.Config{Rate: 100 * units.Mbps, Delay: 10 * time.Millisecond, Queue: q}, obs)
	})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.AddPath(TCP, 5001, 0); err != nil {
		b.Fatal(err)
	}
	const gap = 120 * time.Microsecond // one 1500-byte packet at 100 Mbit/s
	seg := func(seq, ack, ts, ecr uint32, n int, down bool) []byte {
		s := tcpSegment(seq, ack, ts, ecr, n, 0x18)
		if down { // receiver to sender: swap ports
			s[20], s[21], s[22], s[23] = s[22], s[23], s[20], s[21]
		}
		return s
	}
	inject := func(now clock.Time, bytes []byte, up bool) {
		p := f.Pool.Get()
		body := p.Body()
		if cap(body.Payload) < maxPacket {
			body.Payload = make([]byte, maxPacket)
		}
		body.Payload = body.Payload[:len(bytes)]
		copy(body.Payload, bytes)
		f.S.RunUntil(now)
		f.handle(now, p, up)
	}
	data := seg(0, 0, 0, 0, 1448, false)
	ackp := seg(0, 0, 0, 0, 0, true)
	var now clock.Time
	// Sequence number, TSval; ACK number, TSecr (IPv4 20 + TCP offsets).
	run := func(i int) {
		binary.BigEndian.PutUint32(data[24:], uint32(i)*1448)
		binary.BigEndian.PutUint32(data[44:], uint32(i))
		inject(now, data, true)
		if i >= 200 { // ACK what was sent 200 packets (24 ms) ago
			binary.BigEndian.PutUint32(ackp[28:], uint32(i-199)*1448)
			binary.BigEndian.PutUint32(ackp[48:], uint32(i-200))
			inject(now, ackp, false)
		}
		now = now.Add(gap)
	}
	for i := range 5000 { // warm up pools, rings and delay lines
		run(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		run(5000 + i)
	}
}
