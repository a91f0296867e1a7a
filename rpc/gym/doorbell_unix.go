//go:build unix && !linux

package gym

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Outside Linux the doorbell rings through x/sys/unix (on macOS, through
// libSystem, the only supported way in), not raw system calls.

// read reports false (wait and retry) while there is nothing to read.
func (d *doorbell) read(fd uintptr) bool {
	n, err := unix.Read(int(fd), d.b[:])
	return d.done(n, err)
}

func (d *doorbell) write(fd uintptr) bool {
	d.b[0] = 1
	n, err := unix.Write(int(fd), d.b[:])
	return d.done(n, err)
}

// done records a call's outcome, or reports false to wait and retry.
func (d *doorbell) done(n int, err error) bool {
	d.n, d.err = 0, 0
	if err == unix.EAGAIN || err == unix.EINTR {
		return false
	}
	if errno, ok := err.(syscall.Errno); ok {
		d.err = errno
	} else if err != nil {
		d.err = syscall.EIO
	}
	if n > 0 {
		d.n = uintptr(n)
	}
	return true
}
