package udp

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"syscall"

	"github.com/cclab/cclab/internal/ipecn"
)

// nbufs is the number of receive buffers per socket: the reader goroutine
// stops reading when the event loop holds all of them, so a slow loop
// back-pressures into the kernel's socket buffer (which drops) instead of
// growing memory.
const nbufs = 256

// datagram is a received datagram waiting in buffer buf.
type datagram struct {
	buf int32
	n   int32
	// ecn is the IP header's ECN field on a socket that reads it
	// (socket.ecnRecv), else Not-ECT.
	ecn  ipecn.Codepoint
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

	// refused, if set, is called on the reader goroutine when a read
	// reports ECONNREFUSED: on a connected socket, the peer's port is
	// closed.
	refused func()

	raw syscall.RawConn
	oob []byte // the reader goroutine's control-message buffer
	// ecnRecv says received datagrams carry their ECN field.
	ecnRecv bool
	// ect says datagrams are being sent with ECT(0); setOK whether the
	// last change took. ectOn and ectOff are the prepared changes.
	ect, setOK    bool
	ectOn, ectOff func(fd uintptr)
}

// socketBuffer is the kernel buffer size asked for in each direction; the
// kernel caps it at net.core.{r,w}mem_max.
const socketBuffer = 4 << 20

func newSocket(conn *net.UDPConn, refused func()) *socket {
	_ = conn.SetReadBuffer(socketBuffer)
	_ = conn.SetWriteBuffer(socketBuffer)
	forceBuffers(conn)
	s := &socket{
		conn:    conn,
		free:    make(chan int32, nbufs),
		in:      make(chan datagram, nbufs),
		done:    make(chan struct{}),
		oob:     make([]byte, ipecn.OOBLen),
		refused: refused,
	}
	if raw, err := conn.SyscallConn(); err == nil {
		s.raw = raw
		s.ecnRecv = ipecn.Receive(raw)
		s.ectOn, s.ectOff = ipecn.Setter(ipecn.ECT0, &s.setOK), ipecn.Setter(ipecn.NotECT, &s.setOK)
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
		n, oobn, _, from, err := s.conn.ReadMsgUDPAddrPort(s.bufs[i], s.oob)
		if err != nil {
			s.free <- i
			select {
			case <-s.done:
				return
			default:
			}
			// ICMP errors (a closed peer port) surface as read errors on
			// a connected socket (Linux, the BSDs; Go on Windows turns
			// them off); they are not fatal for the socket, but the
			// owner decides what a closed port means for the connection.
			if s.refused != nil && errors.Is(err, syscall.ECONNREFUSED) {
				s.refused()
			}
			continue
		}
		select {
		case s.in <- datagram{buf: i, n: int32(n), ecn: ipecn.FromOOB(s.oob[:oobn]), from: from}:
		case <-s.done:
			return
		}
	}
}

// canSetECT reports whether the socket can mark the datagrams it sends
// ECT, trying it (the socket's datagrams stay Not-ECT).
func (s *socket) canSetECT() bool {
	if s.raw == nil {
		return false
	}
	_ = s.raw.Control(s.ectOff)
	return s.setOK
}

// setECT makes the datagrams sent from now on ECT(0) or Not-ECT; it
// costs a system call only when that changes.
func (s *socket) setECT(on bool) {
	if on == s.ect || s.raw == nil {
		return
	}
	s.ect = on
	f := s.ectOff
	if on {
		f = s.ectOn
	}
	_ = s.raw.Control(f)
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
