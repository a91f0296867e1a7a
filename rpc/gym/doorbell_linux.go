package gym

import (
	"syscall"
	"unsafe"
)

// On Linux the doorbell rings with raw system calls: a plain conn.Read
// or Write would wake the runtime's sysmon thread at every step (lane.run).

// read reports false (wait and retry) while there is nothing to read.
func (d *doorbell) read(fd uintptr) bool { return d.call(syscall.SYS_READ, fd) }

func (d *doorbell) write(fd uintptr) bool {
	d.b[0] = 1
	return d.call(syscall.SYS_WRITE, fd)
}

// call reads or writes the one byte, or reports false to wait and retry.
func (d *doorbell) call(trap, fd uintptr) bool {
	d.n, _, d.err = syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&d.b[0])), 1)
	if d.err == syscall.EAGAIN || d.err == syscall.EINTR {
		d.err = 0
		return false
	}
	return true
}
