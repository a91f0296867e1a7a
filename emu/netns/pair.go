package netns

import (
	"errors"
	"net/netip"
	"strconv"

	"golang.org/x/sys/unix"
)

// Device is the name of the TUN device in each namespace.
const Device = "cclab0"

// TxQueueLen is the TUN devices' transmit queue, in packets. A TUN device
// frees each packet's socket accounting as it queues it (tun_net_xmit's
// skb_orphan), so TCP Small Queues do not hold a kernel sender back while
// the forwarder has yet to read a burst, and at the default 500 packets a
// window that opens by more than that at once lost its excess there, a
// loss outside the emulated path: Hybla on a 10 Mbit/s, 600 ms path
// (rwnd-limited, thousands of segments out) lost 1,000-2,100 segments a
// 30 s run at its sender's device (2026-12-07). 10,000 packets is
// more than a kernel sender's largest send buffer holds (tcp_wmem's 4
// MiB, about 2,900 segments) and than a hundred flows' first windows
// together; the queue holds packets only until the forwarder reads them,
// microseconds each. Accounting.DeviceDrops reports any drop left.
const TxQueueLen = 10000

// The two namespaces' addresses: link-local, assigned only inside the
// namespaces, each with a host route to the other and no other route, so
// nothing can leave towards an outside network (the namespaces have no other
// interface either).
var (
	SndAddr = netip.MustParseAddr("169.254.77.1")
	RcvAddr = netip.MustParseAddr("169.254.77.2")
)

// Pair is the emulator's topology: a sender namespace and a receiver
// namespace, each with a TUN device whose packets the forwarder carries to
// the other.
type Pair struct {
	// Snd and Rcv are the namespaces.
	Snd, Rcv *NS
	// SndTUN and RcvTUN are the TUN devices' non-blocking descriptors.
	SndTUN, RcvTUN int
}

// NewPair creates the namespaces cclab-<pid>-snd and cclab-<pid>-rcv with
// their TUN devices and addresses. On error everything made so far is
// removed.
func NewPair() (p *Pair, err error) {
	p = &Pair{SndTUN: -1, RcvTUN: -1}
	defer func() {
		if err != nil {
			p.Close()
			p = nil
		}
	}()
	if p.Snd, err = Create(Name("snd")); err != nil {
		return p, err
	}
	if p.Rcv, err = Create(Name("rcv")); err != nil {
		return p, err
	}
	if p.SndTUN, err = p.Snd.OpenTUN(Device); err != nil {
		return p, err
	}
	if p.RcvTUN, err = p.Rcv.OpenTUN(Device); err != nil {
		return p, err
	}
	for _, side := range []struct {
		ns          *NS
		local, peer netip.Addr
	}{{p.Snd, SndAddr, RcvAddr}, {p.Rcv, RcvAddr, SndAddr}} {
		if err = side.ns.IP("addr", "add", side.local.String(), "peer", side.peer.String(), "dev", Device); err != nil {
			return p, err
		}
		if err = side.ns.IP("link", "set", Device, "mtu", "1500", "txqueuelen", strconv.Itoa(TxQueueLen), "up"); err != nil {
			return p, err
		}
		// Each run starts without cached ssthresh or RTT from earlier
		// connections to the same peer, as the simulator's flows do.
		if err = side.ns.Sysctl("net.ipv4.tcp_no_metrics_save", "1"); err != nil {
			return p, err
		}
	}
	return p, nil
}

// Close closes the TUN devices and deletes both namespaces.
func (p *Pair) Close() error {
	if p == nil {
		return nil
	}
	for _, fd := range []int{p.SndTUN, p.RcvTUN} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	p.SndTUN, p.RcvTUN = -1, -1
	var errs []error
	for _, ns := range []*NS{p.Snd, p.Rcv} {
		if ns != nil {
			errs = append(errs, ns.Delete())
		}
	}
	p.Snd, p.Rcv = nil, nil
	return errors.Join(errs...)
}
