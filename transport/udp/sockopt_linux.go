package udp

import (
	"net"
	"syscall"
)

// forceBuffers raises the socket buffers past net.core.rmem_max and
// wmem_max when the process may (CAP_NET_ADMIN): the default 208 KiB
// receive buffer holds only 33 ms at 50 Mbit/s, and a userspace receiver
// descheduled for longer on a busy machine would drop datagrams that the
// kernel's TCP, served in softirq context, would not. Without the
// capability the kernel refuses and the capped size stays.
func forceBuffers(conn *net.UDPConn) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, socketBuffer)
		_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUFFORCE, socketBuffer)
	})
}
