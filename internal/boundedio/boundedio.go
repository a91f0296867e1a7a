// Package boundedio reads input files with a size limit that holds for
// every kind of file: the limit is checked on the bytes read, not on the
// size stat reports, which is 0 for devices and pipes (/dev/zero,
// /dev/stdin) and for many /proc files.
package boundedio

import (
	"fmt"
	"io"
	"os"
)

// ReadFile reads the regular file at path, or returns an error naming it
// when it is not a regular file or holds more than limit bytes. what
// names the kind of file in the message ("scenario file").
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, err := Open(path, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, path, limit, what)
}

// Open opens path for reading and refuses anything but a regular file
// (a directory, a device, a pipe, a socket), naming what was expected.
func Open(path, what string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		kind := "not a regular file"
		if st.IsDir() {
			kind = "a directory"
		} else if st.Mode()&os.ModeDevice != 0 {
			kind = "a device"
		} else if st.Mode()&os.ModeNamedPipe != 0 {
			kind = "a pipe"
		}
		return nil, fmt.Errorf("%s is %s, not a %s", path, kind, what)
	}
	if st.Size() < 0 {
		return nil, fmt.Errorf("%s: negative size", path)
	}
	return os.Open(path)
}

// ReadAll reads r to the end, or returns an error once more than limit
// bytes have been read.
func ReadAll(r io.Reader, path string, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %s, too large for a %s", path, human(limit), what)
	}
	return data, nil
}

// Limit wraps r so that reading more than limit bytes fails with an error
// naming path: for streaming decoders (gzip, gob) whose input or output
// must be bounded.
func Limit(r io.Reader, path string, limit int64, what string) io.Reader {
	return &limited{r: r, left: limit, path: path, limit: limit, what: what}
}

type limited struct {
	r          io.Reader
	left       int64
	path, what string
	limit      int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// Tell a file that ends exactly at the limit from a longer one.
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("%s: larger than %s, too large for a %s", l.path, human(l.limit), l.what)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

func human(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
