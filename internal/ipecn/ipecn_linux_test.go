package ipecn

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cmsg builds one control message as the kernel lays it out.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(len(data)))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

// TestFromOOB: the codepoint is the low two bits of IP_TOS's byte or
// IPV6_TCLASS's int, wherever the message is among others; nothing
// readable is Not-ECT.
func TestFromOOB(t *testing.T) {
	tclass := make([]byte, 4)
	binary.NativeEndian.PutUint32(tclass, 0xbb) // DSCP 46, CE
	other := cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMP, make([]byte, 16))
	for _, c := range []struct {
		name string
		oob  []byte
		want Codepoint
	}{
		{"ipv4 ect0", cmsg(unix.IPPROTO_IP, unix.IP_TOS, []byte{0x02}), ECT0},
		{"ipv4 dscp and ce", cmsg(unix.IPPROTO_IP, unix.IP_TOS, []byte{0xbb}), CE},
		{"ipv6 ce", cmsg(unix.IPPROTO_IPV6, unix.IPV6_TCLASS, tclass), CE},
		{"after another message", append(append([]byte{}, other...), cmsg(unix.IPPROTO_IP, unix.IP_TOS, []byte{0x01})...), ECT1},
		{"none", nil, NotECT},
		{"other only", other, NotECT},
		{"truncated", cmsg(unix.IPPROTO_IP, unix.IP_TOS, []byte{0x03})[:10], NotECT},
		{"ipv6 too short", cmsg(unix.IPPROTO_IPV6, unix.IPV6_TCLASS, []byte{3}), NotECT},
	} {
		if got := FromOOB(c.oob); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// FuzzFromOOB: any control-message buffer yields a codepoint, never a
// panic.
func FuzzFromOOB(f *testing.F) {
	f.Add(cmsg(unix.IPPROTO_IP, unix.IP_TOS, []byte{0x03}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if c := FromOOB(b); c > CE {
			t.Fatalf("codepoint %d", c)
		}
	})
}

// TestLoopback: a datagram sent after Setter(cp) arrives with cp, for
// every codepoint, over IPv4 and IPv6 loopback.
func TestLoopback(t *testing.T) {
	for _, network := range []string{"udp4", "udp6"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "udp6" {
				addr = "[::1]:0"
			}
			rx, err := net.ListenPacket(network, addr)
			if err != nil {
				t.Skip(err)
			}
			defer rx.Close()
			rc := rx.(*net.UDPConn)
			raw, err := rc.SyscallConn()
			if err != nil || !Receive(raw) {
				t.Fatalf("Receive refused: %v", err)
			}
			tx, err := net.DialUDP(network, nil, rc.LocalAddr().(*net.UDPAddr))
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Close()
			traw, err := tx.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			buf, oob := make([]byte, 16), make([]byte, OOBLen)
			for _, cp := range []Codepoint{ECT0, CE, NotECT, ECT1} {
				var ok bool
				if err := traw.Control(Setter(cp, &ok)); err != nil || !ok {
					t.Fatalf("setting %d: %v, ok %v", cp, err, ok)
				}
				if _, err := tx.Write([]byte{byte(cp)}); err != nil {
					t.Fatal(err)
				}
				_ = rc.SetReadDeadline(time.Now().Add(2 * time.Second))
				_, oobn, _, _, err := rc.ReadMsgUDP(buf, oob)
				if err != nil {
					t.Fatal(err)
				}
				if got := FromOOB(oob[:oobn]); got != cp {
					t.Errorf("sent %d, received %d", cp, got)
				}
			}
		})
	}
}
