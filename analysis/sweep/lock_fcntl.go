//go:build solaris || aix

package sweep

import "os"

// lockFile takes fcntlLock's lock: Solaris, illumos and AIX have no
// flock(2). lockDir's in-process check makes up for a record lock not
// excluding its own process.
func lockFile(f *os.File) error { return fcntlLock(f) }

// unlockFile releases lockFile's lock (closing f would too).
func unlockFile(f *os.File) { fcntlUnlock(f) }
