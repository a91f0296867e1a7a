package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LockFile is the file in an output directory that a running sweep holds
// an exclusive lock on: two sweeps appending to one rows file interleave
// their lines.
const LockFile = ".cclab-sweep.lock"

// errLocked is lockFile's error when another process holds the lock.
var errLocked = errors.New("locked by another process")

// lockDir takes the directory's lock without waiting, or says that
// another sweep holds it. The lock goes with the process: a killed sweep
// leaves no stale lock.
func lockDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot create the lock file: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("another cclab sweep or merge is writing to %s (it holds %s); wait for it or choose another --out", dir, LockFile)
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	return func() {
		unlockFile(f)
		f.Close()
	}, nil
}
