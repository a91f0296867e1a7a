package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
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
	busy := func() error {
		return fmt.Errorf("another cclab sweep or merge is writing to %s (it holds %s); wait for it or choose another --out", dir, LockFile)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	if !held.add(st, f) {
		f.Close()
		return nil, busy()
	}
	if err := lockFile(f); err != nil {
		held.remove(st)
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, busy()
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			unlockFile(f)
			held.remove(st)
			f.Close()
		})
	}, nil
}

// held lists the lock files this process holds. flock(2) and Windows'
// LockFileEx refuse a second lock through another open file in the same
// process, but fcntl(2)'s record locks, all Solaris, illumos and AIX
// offer, do not; this keeps two sweeps in one process (two goroutines of a
// program built on this package) apart on every system alike. Files are compared by
// identity, so another path to the same directory is the same lock.
//
// The set keeps each lock's open file: a lock whose unlock is never
// called stays held, as the system's lock would until the process ends,
// where without the reference the file's finalizer would close it at the
// next collection, dropping the system's lock and freeing the file's
// inode number for a new file that the set would then take for the held
// one.
var held lockSet

type lockSet struct {
	mu    sync.Mutex
	locks []heldLock
}

type heldLock struct {
	st os.FileInfo
	f  *os.File
}

// add records st, open as f, or reports false if this process holds it
// already.
func (s *lockSet) add(st os.FileInfo, f *os.File) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.locks {
		if os.SameFile(h.st, st) {
			return false
		}
	}
	s.locks = append(s.locks, heldLock{st, f})
	return true
}

// remove forgets st and returns the file it was held open as (nil if
// the set did not hold it).
func (s *lockSet) remove(st os.FileInfo) *os.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.locks, func(h heldLock) bool { return os.SameFile(h.st, st) })
	if i < 0 {
		return nil
	}
	f := s.locks[i].f
	s.locks = slices.Delete(s.locks, i, i+1)
	return f
}
