package udp

import (
	"net"
	"net/netip"
	"sync"
)

// nbufs is the number of receive buffers per socket: the reader goroutine
// stops reading when the event loop holds all of them, so a slow loop
// back-pressures into the kernel's socket buffer (which drops) instead of
// growing memory.
const nbufs = 256

// datagram is a received datagram waiting in buffer buf.
type datagram struct {
	buf  int32
	n    int32
	from netip.AddrPort
}

// socket owns a UDP socket and its reader goroutine, which hands received
// datagrams to the event loop over a channel, in preallocated buffers.
type socket struct {
	conn *net.UDPConn
	bufs [nbufs][]byte
	free chan int32
	in   chan datagram
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// socketBuffer is the kernel buffer size asked for in each direction; the
// kernel caps it at net.core.{r,w}mem_max.
const socketBuffer = 4 << 20

func newSocket(conn *net.UDPConn) *socket {
	_ = conn.SetReadBuffer(socketBuffer)
	_ = conn.SetWriteBuffer(socketBuffer)
	forceBuffers(conn)
	s := &socket{
		conn: conn,
		free: make(chan int32, nbufs),
		in:   make(chan datagram, nbufs),
		done: make(chan struct{}),
	}
	mem := make([]byte, nbufs*(MaxDatagram+1))
	for i := range s.bufs {
		// One spare byte: a read that fills the buffer was oversized.
		s.bufs[i] = mem[i*(MaxDatagram+1) : (i+1)*(MaxDatagram+1) : (i+1)*(MaxDatagram+1)]
		s.free <- int32(i)
	}
	s.wg.Add(1)
	go s.read()
	return s
}

func (s *socket) read() {
	defer s.wg.Done()
	for {
		var i int32
		select {
		case i = <-s.free:
		case <-s.done:
			return
		}
		n, from, err := s.conn.ReadFromUDPAddrPort(s.bufs[i])
		if err != nil {
			s.free <- i
			select {
			case <-s.done:
				return
			default:
			}
			// ICMP errors (a closed peer port) surface as read errors on
			// Linux; they are not fatal for the socket.
			continue
		}
		select {
		case s.in <- datagram{buf: i, n: int32(n), from: from}:
		case <-s.done:
			return
		}
	}
}

// data returns a received datagram's bytes; release returns its buffer.
func (s *socket) data(d datagram) []byte { return s.bufs[d.buf][:d.n] }
func (s *socket) release(d datagram)     { s.free <- d.buf }

// close closes the socket and waits for the reader goroutine to exit.
func (s *socket) close() {
	s.once.Do(func() {
		close(s.done)
		s.conn.Close()
		s.wg.Wait()
	})
}
