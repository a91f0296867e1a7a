//go:build !linux

package udp

import "net"

func forceBuffers(*net.UDPConn) {}
