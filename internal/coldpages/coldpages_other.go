//go:build !linux

package coldpages

// Release does nothing where the process's mappings cannot be read from
// /proc/self/smaps (see coldpages_linux.go).
func Release() (Stats, error) { return Stats{}, nil }

// ReleaseStatic does nothing where the process's mappings cannot be read
// from /proc/self/smaps (see coldpages_linux.go).
func ReleaseStatic(bufs ...[]byte) (int64, error) { return 0, nil }

// Resident reports 0 where /proc/self/pagemap does not exist.
func Resident(b []byte) (int64, error) { return 0, nil }
