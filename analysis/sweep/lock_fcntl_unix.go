//go:build unix

package sweep

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// fcntlLock takes an exclusive fcntl(2) record lock on the whole of f
// without waiting, where flock(2) is missing (lock_fcntl.go); it builds on
// every Unix so that Linux's tests exercise it. Unlike flock's, the lock
// belongs to the process, not the open file: it excludes other processes
// only, and closing any descriptor of the file in this process drops it
// (lockDir keeps one open).
func fcntlLock(f *os.File) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return errLocked
	}
	return err
}

// fcntlUnlock releases fcntlLock's lock.
func fcntlUnlock(f *os.File) {
	lk := unix.Flock_t{Type: unix.F_UNLCK, Whence: 0, Start: 0, Len: 0}
	_ = unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
}
