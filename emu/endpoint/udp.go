package endpoint

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cclab/cclab/emu/netns"
)

// UDPHeaders is the IPv4 and UDP header size a datagram adds to its
// payload; background sizes in scenarios are IP packet sizes.
const UDPHeaders = 28

// UDPSink counts the datagrams arriving on a port in the receiver
// namespace.
type UDPSink struct {
	conn    *net.UDPConn
	packets atomic.Int64
	bytes   atomic.Int64 // IP bytes
	done    chan struct{}
}

// ListenUDP opens a sink on addr:port inside ns.
func ListenUDP(ns *netns.NS, addr netip.Addr, port uint16) (*UDPSink, error) {
	s := &UDPSink{done: make(chan struct{})}
	err := ns.Do(func() error {
		c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, port)))
		s.conn = c
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("udp sink %v:%d: %w", addr, port, err)
	}
	_ = s.conn.SetReadBuffer(4 << 20)
	go s.loop()
	return s, nil
}

func (s *UDPSink) loop() {
	defer close(s.done)
	buf := make([]byte, 65536)
	for {
		n, err := s.conn.Read(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		s.packets.Add(1)
		s.bytes.Add(int64(n + UDPHeaders))
	}
}

// Packets returns the datagrams received so far.
func (s *UDPSink) Packets() int64 { return s.packets.Load() }

// Bytes returns the IP bytes received so far.
func (s *UDPSink) Bytes() int64 { return s.bytes.Load() }

// Close stops the sink.
func (s *UDPSink) Close() error {
	err := s.conn.Close()
	<-s.done
	return err
}

// UDPSource sends datagrams from the sender namespace. Send never blocks:
// it is called from the forwarder's event loop.
type UDPSource struct {
	conn *net.UDPConn
	raw  syscall.RawConn
	buf  []byte
	// Packets and Bytes count what was handed to the kernel; Failed counts
	// sends the kernel refused.
	Packets, Bytes, Failed int64
}

// DialUDP opens a source in ns connected to dst.
func DialUDP(ns *netns.NS, dst netip.AddrPort) (*UDPSource, error) {
	s := &UDPSource{buf: make([]byte, 65536)}
	err := ns.Do(func() error {
		c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(dst))
		s.conn = c
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("udp source to %v: %w", dst, err)
	}
	_ = s.conn.SetWriteBuffer(4 << 20)
	if s.raw, err = s.conn.SyscallConn(); err != nil {
		s.conn.Close()
		return nil, err
	}
	return s, nil
}

// Send sends one datagram whose IP packet is size bytes.
func (s *UDPSource) Send(size int) {
	n := max(0, min(size-UDPHeaders, len(s.buf)))
	var werr error
	err := s.raw.Write(func(fd uintptr) bool {
		_, werr = unix.Write(int(fd), s.buf[:n])
		return true // never wait: a full socket buffer is a failed send
	})
	if err != nil || werr != nil {
		s.Failed++
		return
	}
	s.Packets++
	s.Bytes += int64(n + UDPHeaders)
}

// Close closes the source.
func (s *UDPSource) Close() error { return s.conn.Close() }
