package gym

import (
	"syscall"
	"unsafe"
)

// doorbell reads and writes one byte on a non-blocking socket with raw
// system calls; its methods are syscall.RawConn callbacks, bound once.
type doorbell struct {
	b   [1]byte
	n   uintptr
	err syscall.Errno
}

// read reports false (wait and retry) while there is nothing to read.
func (d *doorbell) read(fd uintptr) bool {
	d.n, _, d.err = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&d.b[0])), 1)
	if d.err == syscall.EAGAIN || d.err == syscall.EINTR {
		d.err = 0
		return false
	}
	return true
}

func (d *doorbell) write(fd uintptr) bool {
	d.b[0] = 1
	d.n, _, d.err = syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&d.b[0])), 1)
	if d.err == syscall.EAGAIN || d.err == syscall.EINTR {
		d.err = 0
		return false
	}
	return true
}
