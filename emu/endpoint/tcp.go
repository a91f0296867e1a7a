// Package endpoint runs the emulator's real endpoints: kernel TCP senders
// and receivers with the sender's TCP_INFO sampled on an interval, and UDP
// sources and sinks for background traffic. Each endpoint opens its socket
// inside its namespace (netns.NS.Do) and is then used from ordinary
// goroutines in the root namespace.
package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/emu/netns"
)

// availablePath lists the kernel's loaded congestion controllers.
const availablePath = "/proc/sys/net/ipv4/tcp_available_congestion_control"

// kernelNames maps cclab controller names to the kernel's where they
// differ.
var kernelNames = map[string]string{"newreno": "reno"}

// KernelCC returns the kernel's name for a cclab controller, or an error
// saying which controllers this kernel offers.
func KernelCC(name string) (string, error) {
	k := name
	if v, ok := kernelNames[name]; ok {
		k = v
	}
	avail, err := Available()
	if err != nil {
		return "", err
	}
	for _, a := range avail {
		if a == k {
			return k, nil
		}
	}
	hint := "a module may be loadable with modprobe tcp_" + k
	if slices.Contains(bpfCCs, k) {
		hint += ", or bench/kernelcc/load.sh registers it as a BPF program"
	}
	return "", fmt.Errorf("the kernel has no congestion controller %q (for cc %s); this kernel offers: %s (from %s; %s)",
		k, name, strings.Join(avail, ", "), availablePath, hint)
}

// bpfCCs are the controllers bench/kernelcc can add to a kernel built
// without them.
var bpfCCs = []string{"hybla", "westwood"}

// Available returns the kernel's loaded congestion controllers.
func Available() ([]string, error) {
	b, err := os.ReadFile(availablePath)
	if err != nil {
		return nil, fmt.Errorf("reading the kernel's congestion controllers: %w", err)
	}
	return strings.Fields(string(b)), nil
}

// Sample is one reading of a sender's TCP_INFO.
type Sample struct {
	// At is the reading's time on the run's clock.
	At clock.Time
	// RTT is the smoothed RTT (tcpi_rtt), MinRTT the kernel's minimum.
	RTT, MinRTT time.Duration
	// Cwnd is the congestion window in segments.
	Cwnd uint32
	// DeliveryRate is tcpi_delivery_rate in bit/s.
	DeliveryRate float64
	// Retrans is tcpi_total_retrans, RTOs tcpi_total_rto so far.
	Retrans, RTOs uint32
	// BytesAcked is tcpi_bytes_acked; BytesSent tcpi_bytes_sent, the
	// payload bytes sent, retransmissions included.
	BytesAcked, BytesSent uint64
	// RwndLimited and SndbufLimited are the time so far the sender was
	// held back by the receiver's window or its own send buffer
	// (tcpi_rwnd_limited, tcpi_sndbuf_limited). A simulated sender has no
	// send-buffer limit, and a receive-window limit only with
	// transport.receive_window: linux (its rwnd_limited_s), so a large
	// value otherwise explains a difference.
	RwndLimited, SndbufLimited time.Duration
	// Ssthresh is the slow-start threshold in segments.
	Ssthresh uint32
	// Unacked is the segments sent and not yet acknowledged
	// (tcpi_unacked, the kernel's packets_out), NotSent the bytes written
	// and not yet sent (tcpi_notsent_bytes), and Sndbuf the send buffer's
	// size in bytes (SO_SNDBUF, sk_sndbuf: autotuned unless the
	// application set it; 0 if unreadable), which bounds both, counted in
	// the kernel's memory per buffer rather than in payload.
	Unacked, NotSent, Sndbuf uint32
	// SndWnd is the receive window the peer last advertised, in bytes
	// (tcpi_snd_wnd, scaled): what holds a sender that its congestion
	// window does not.
	SndWnd uint32
	// Sacked, Lost and RetransOut are the segments out that the peer has
	// SACKed, that the sender has marked lost, and that are retransmitted
	// and not yet acknowledged (tcpi_sacked, tcpi_lost, tcpi_retrans): with
	// Unacked they give the kernel's pipe (InFlight), which the simulator's
	// inflight_bytes series is.
	Sacked, Lost, RetransOut uint32
	// BBR is the kernel BBR's model when the flow runs BBR (HasBBR).
	BBR    BBRModel
	HasBBR bool
}

// BBRModel is Linux BBR's model as TCP_CC_INFO reports it (struct
// tcp_bbr_info, filled by tcp_bbr.c's bbr_get_info): what the simulator's
// BBR series (network.FlowSeries.BtlBwMbps, .RTpropMs) show for its own.
type BBRModel struct {
	// BtlBw is the bandwidth estimate in bit/s of payload: bbr_bw(), the
	// windowed max of delivery-rate samples, or the long-term rate while
	// the policer detector uses it, scaled by the MSS.
	BtlBw float64
	// RTprop is bbr->min_rtt_us, the windowed min RTT.
	RTprop time.Duration
	// PacingGain and CwndGain are the current gains (BBR_UNIT = 256 is
	// 1.0 in the kernel).
	PacingGain, CwndGain float64
}

// bbrModelOf converts the kernel's tcp_bbr_info: the bandwidth in bytes
// per second split over two 32-bit words, the gains in 1/256ths.
func bbrModelOf(bi *unix.TCPBBRInfo) BBRModel {
	bw := uint64(bi.Bw_hi)<<32 | uint64(bi.Bw_lo)
	return BBRModel{
		BtlBw:      float64(bw) * 8,
		RTprop:     time.Duration(bi.Min_rtt) * time.Microsecond,
		PacingGain: float64(bi.Pacing_gain) / 256,
		CwndGain:   float64(bi.Cwnd_gain) / 256,
	}
}

func sampleOf(at clock.Time, ti *unix.TCPInfo) Sample {
	return Sample{
		At: at, RTT: time.Duration(ti.Rtt) * time.Microsecond, MinRTT: time.Duration(ti.Min_rtt) * time.Microsecond,
		Cwnd: ti.Snd_cwnd, DeliveryRate: float64(ti.Delivery_rate) * 8,
		Retrans: ti.Total_retrans, RTOs: uint32(ti.Total_rto), BytesAcked: ti.Bytes_acked, BytesSent: ti.Bytes_sent,
		RwndLimited: time.Duration(ti.Rwnd_limited) * time.Microsecond, SndbufLimited: time.Duration(ti.Sndbuf_limited) * time.Microsecond,
		Ssthresh: ti.Snd_ssthresh, Unacked: ti.Unacked, NotSent: ti.Notsent_bytes, SndWnd: ti.Snd_wnd,
		Sacked: ti.Sacked, Lost: ti.Lost, RetransOut: ti.Retrans,
	}
}

// InFlight is the segments the kernel counts in the network
// (tcp_packets_in_flight: packets out, less those SACKed or marked lost,
// plus those retransmitted), never below zero for a sample that read the
// counters between updates.
func (s *Sample) InFlight() uint32 {
	left := int64(s.Unacked) - int64(s.Sacked) - int64(s.Lost) + int64(s.RetransOut)
	return uint32(max(left, 0))
}

// TCPSink accepts connections on a port in the receiver namespace and
// reads them, counting bytes. A finite flow's completion is the moment
// the sink has read Want bytes on one connection.
type TCPSink struct {
	ln    *net.TCPListener
	clk   clock.Clock
	want  int64
	total atomic.Int64
	// OnDone, if set before the first connection, is called once per
	// connection that delivered want bytes, from the reading goroutine.
	OnDone func(at clock.Time)

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
	// first is the first connection's read buffer, allocated with the
	// sink before the run rather than when its flow starts (see
	// zeroPayload); only the accepting goroutine takes it.
	first []byte
}

// ioBuffer is the size of a kernel sender's writes and a sink's reads.
const ioBuffer = 256 << 10

// ListenTCP opens a sink on addr:port inside ns; want is the size of a
// finite transfer (0: none).
func ListenTCP(ns *netns.NS, addr netip.Addr, port uint16, want int64, clk clock.Clock) (*TCPSink, error) {
	s := &TCPSink{clk: clk, want: want, first: make([]byte, ioBuffer)}
	err := ns.Do(func() error {
		ln, err := net.ListenTCP("tcp4", net.TCPAddrFromAddrPort(netip.AddrPortFrom(addr, port)))
		s.ln = ln
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("tcp sink %v:%d: %w", addr, port, err)
	}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *TCPSink) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		buf := s.first
		s.first = nil
		if buf == nil {
			buf = make([]byte, ioBuffer)
		}
		s.wg.Add(1)
		go s.read(c, buf)
	}
}

func (s *TCPSink) read(c net.Conn, buf []byte) {
	defer s.wg.Done()
	var got int64
	done := false
	for {
		n, err := c.Read(buf)
		got += int64(n)
		s.total.Add(int64(n))
		if !done && s.want > 0 && got >= s.want {
			done = true
			if s.OnDone != nil {
				s.OnDone(s.clk.Now())
			}
		}
		if err != nil {
			return
		}
	}
}

// Received returns the bytes read on all connections so far.
func (s *TCPSink) Received() int64 { return s.total.Load() }

// Close closes the listener and every connection and waits for the
// readers.
func (s *TCPSink) Close() error {
	err := s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// TCPConfig configures a kernel TCP sender.
type TCPConfig struct {
	// CC is the kernel's controller name (see KernelCC).
	CC string
	// Bytes is the transfer size; 0 sends until stopped.
	Bytes int64
	// Sample is the TCP_INFO interval; 0 reads it only at the end.
	Sample time.Duration
	// OnSample, if set, receives every reading, from the sampling
	// goroutine.
	OnSample func(Sample)
	// Nagle leaves Nagle's algorithm on: the connection clears the
	// TCP_NODELAY that Go's net package sets on every TCP socket
	// (scenario transport.nagle).
	Nagle bool
}

// TCPSender is a kernel TCP connection from the sender namespace.
type TCPSender struct {
	cfg  TCPConfig
	clk  clock.Clock
	conn *net.TCPConn
	raw  syscall.RawConn
	fd   int // a prepared socket not yet connected (PrepareTCP), else -1

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	last Sample
	err  error
}

// StartTCP connects from ns to dst with the configured controller and
// starts sending, in the background. It returns at once; errors are
// reported by Stop.
func StartTCP(ns *netns.NS, dst netip.AddrPort, cfg TCPConfig, clk clock.Clock) *TCPSender {
	s := &TCPSender{cfg: cfg, clk: clk, fd: -1}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.run(ns, dst)
	return s
}

func (s *TCPSender) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// PrepareTCP creates a sender's socket in ns, with the configured
// controller, without connecting it: Connect then only sends the SYN.
// Entering a namespace takes an OS thread of its own (netns.NS.Do), and
// with StartTCP flows due at the same instant started about 80 µs apart
// on a 2-core machine (a hundred SYNs over 7.8 ms), where prepared ones
// connect from the caller's goroutine a few microseconds apart. The
// socket is closed by Stop, or by Connect's failure.
func PrepareTCP(ns *netns.NS, cfg TCPConfig, clk clock.Clock) (*TCPSender, error) {
	s := &TCPSender{cfg: cfg, clk: clk, fd: -1}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	err := ns.Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		if err := setCongestion(fd, cfg.CC); err != nil {
			unix.Close(fd)
			return err
		}
		s.fd = fd
		return nil
	})
	if err != nil {
		s.cancel()
		return nil, err
	}
	return s, nil
}

// Connect starts a prepared sender: it sends the SYN to dst now, from
// the caller's goroutine, and sends in the background once connected.
// Errors are reported by Stop.
func (s *TCPSender) Connect(dst netip.AddrPort) {
	s.mu.Lock()
	fd := s.fd
	s.fd = -1
	s.mu.Unlock()
	if fd < 0 {
		return // stopped before its start
	}
	err := unix.Connect(fd, &unix.SockaddrInet4{Port: int(dst.Port()), Addr: dst.Addr().As4()})
	if err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		s.fail(fmt.Errorf("connect to %v: %w", dst, err))
		return
	}
	// The poller takes a duplicate; a write waits for the handshake
	// (EAGAIN until the socket is writable) and fails if the handshake
	// does.
	f := os.NewFile(uintptr(fd), "tcp")
	conn, err := net.FileConn(f)
	f.Close()
	if err != nil {
		s.fail(fmt.Errorf("connect to %v: %w", dst, err))
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.send(conn.(*net.TCPConn))
	}()
}

// setCongestion sets the socket's controller, before connect, so that the
// SYN already runs it.
func setCongestion(fd int, cc string) error {
	if err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc); err != nil {
		return fmt.Errorf("TCP_CONGESTION %s: %w", cc, err)
	}
	return nil
}

func (s *TCPSender) run(ns *netns.NS, dst netip.AddrPort) {
	defer s.wg.Done()
	var ccErr error
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { ccErr = setCongestion(int(fd), s.cfg.CC) })
	}}
	var conn net.Conn
	err := ns.Do(func() error {
		var err error
		conn, err = d.DialContext(s.ctx, "tcp4", dst.String())
		return err
	})
	if ccErr != nil {
		err = ccErr
	}
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		if s.ctx.Err() == nil {
			s.fail(fmt.Errorf("connect to %v: %w", dst, err))
		}
		return
	}
	s.send(conn.(*net.TCPConn))
}

// zeroPayload is what every kernel sender writes, shared and only read:
// flows due together connect in one burst, and a 256 KiB buffer
// allocated by each of them then (the sinks' likewise) set off a
// collection whose mark worker took one of two processors from the
// forwarder and the starting goroutine for milliseconds, which spread
// their first packets over up to 10 ms instead of under 1.
var zeroPayload [ioBuffer]byte

// send samples and writes on a connected socket until done or stopped.
func (s *TCPSender) send(tc *net.TCPConn) {
	raw, err := tc.SyscallConn()
	if err != nil {
		tc.Close()
		s.fail(err)
		return
	}
	s.mu.Lock()
	s.conn, s.raw = tc, raw
	s.mu.Unlock()
	if s.ctx.Err() != nil {
		// Stopped before the connection was recorded: Stop closed
		// nothing.
		tc.Close()
		return
	}
	// A stop aborts the connection (RST) instead of finishing it, as a
	// simulated sender that stops simply goes quiet.
	_ = tc.SetLinger(0)
	if s.cfg.Nagle {
		if err := tc.SetNoDelay(false); err != nil {
			tc.Close()
			s.fail(fmt.Errorf("clear TCP_NODELAY: %w", err))
			return
		}
	}
	if s.cfg.Sample > 0 {
		s.wg.Add(1)
		go s.sampler()
	}
	buf := zeroPayload[:]
	left := s.cfg.Bytes
	for s.ctx.Err() == nil {
		n := len(buf)
		if s.cfg.Bytes > 0 {
			if left == 0 {
				break
			}
			n = int(min(int64(n), left))
		}
		w, err := tc.Write(buf[:n])
		left -= int64(w)
		if err != nil {
			if s.ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				s.fail(fmt.Errorf("send: %w", err))
			}
			return
		}
	}
	if s.cfg.Bytes > 0 {
		_ = tc.CloseWrite()
	}
}

func (s *TCPSender) info() (Sample, bool) {
	s.mu.Lock()
	raw := s.raw
	s.mu.Unlock()
	if raw == nil {
		return Sample{}, false
	}
	var ti *unix.TCPInfo
	var bi *unix.TCPBBRInfo
	var gerr, berr error
	var sndbuf int
	if err := raw.Control(func(fd uintptr) {
		ti, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		sndbuf, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
		if s.cfg.CC == "bbr" {
			bi, berr = unix.GetsockoptTCPCCBBRInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_CC_INFO)
		}
	}); err != nil || gerr != nil {
		return Sample{}, false
	}
	smp := sampleOf(s.clk.Now(), ti)
	smp.Sndbuf = uint32(sndbuf)
	if bi != nil && berr == nil {
		smp.BBR, smp.HasBBR = bbrModelOf(bi), true
	}
	s.mu.Lock()
	s.last = smp
	s.mu.Unlock()
	return smp, true
}

func (s *TCPSender) sampler() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.Sample)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			if smp, ok := s.info(); ok && s.cfg.OnSample != nil {
				s.cfg.OnSample(smp)
			}
		}
	}
}

// Stop reads the final TCP_INFO, aborts the connection and waits for the
// sender's goroutines. It returns the final reading and the first error.
func (s *TCPSender) Stop() (Sample, error) {
	final, _ := s.info()
	s.cancel()
	s.mu.Lock()
	if s.conn != nil {
		s.conn.Close()
	}
	if s.fd >= 0 {
		unix.Close(s.fd) // prepared, never started
		s.fd = -1
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if final.At == 0 {
		final = s.last
	}
	return final, s.err
}
