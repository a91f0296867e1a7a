package emu

import (
	"net"
	"net/netip"
	"testing"

	"github.com/cclab/cclab/emu/netns"
)

// TestDeviceQueueHoldsABurst: a burst of 2,000 datagrams from the sender's
// namespace, while nothing reads its TUN device, waits in the device's
// queue instead of being dropped there (at the default 500 packets, 1,500
// of them were), and readDeviceDrops counts what a longer burst loses.
func TestDeviceQueueHoldsABurst(t *testing.T) {
	if err := netns.Check(); err != nil {
		t.Skipf("emulator unavailable: %v", err)
	}
	pair, err := netns.NewPair()
	if err != nil {
		t.Fatal(err)
	}
	defer pair.Close()
	send := func(n int) {
		t.Helper()
		err := pair.Snd.Do(func() error {
			c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(netns.RcvAddr, 9)))
			if err != nil {
				return err
			}
			defer c.Close()
			b := make([]byte, 1000)
			for range n {
				if _, err := c.Write(b); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	send(2000)
	d, err := readDeviceDrops(pair)
	if err != nil {
		t.Fatal(err)
	}
	if d != 0 {
		t.Fatalf("a 2,000-packet burst lost %d packets at the device, want none (queue %d)", d, netns.TxQueueLen)
	}
	send(netns.TxQueueLen)
	if d, err = readDeviceDrops(pair); err != nil || d != 2000 {
		t.Errorf("a further %d packets into a queue holding 2,000 of %d: %d drops (%v), want 2,000", netns.TxQueueLen, netns.TxQueueLen, d, err)
	}
}
