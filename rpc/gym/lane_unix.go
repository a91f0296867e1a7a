//go:build unix

package gym

import (
	"os"
	"syscall"
)

// errNoLanes is nil: lanes open on every Unix system.
var errNoLanes error

// mapShared maps f's first size bytes, shared with the other processes
// that map it.
func mapShared(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

func unmapShared(mem []byte) { _ = syscall.Munmap(mem) }
