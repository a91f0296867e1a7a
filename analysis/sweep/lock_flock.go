//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sweep

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) on f without waiting.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

// unlockFile releases lockFile's lock (closing f would too).
func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
