package trainlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// File is a learning-curve CSV file that a resumed training run continues
// without a second header or duplicated steps. A run killed after its last
// checkpoint has logged rows the resumed run logs again (it restarts from
// the checkpoint's step); File keeps the earlier rows whose step precedes
// the first step the resumed run logs, drops the rest, and swallows the
// header the new Logger writes when it matches the file's.
//
// File expects what Logger writes: a header line, then one row per line
// whose first field is the integer step.
type File struct {
	f       *os.File
	path    string
	old     [][]byte // lines of the existing file: header first
	pending []byte   // an incomplete line
	started bool     // the old rows have been settled
}

// OpenFile opens path for a learning curve: truncated when resume is false
// (or the file does not exist), continued when resume is true.
func OpenFile(path string, resume bool) (*File, error) {
	lf := &File{path: path}
	if resume {
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("trainlog: %w", err)
		default:
			for line := range bytes.Lines(b) {
				if l := bytes.TrimRight(line, "\r\n"); len(l) > 0 {
					lf.old = append(lf.old, l)
				}
			}
		}
	}
	if len(lf.old) > 0 {
		// The file is left as it is until the first new row, then replaced
		// atomically (see settle): a kill before or during that leaves the
		// old curve whole.
		return lf, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("trainlog: %w", err)
	}
	lf.f = f
	lf.started = true
	return lf, nil
}

// Write implements io.Writer for Logger's CSV output.
func (lf *File) Write(p []byte) (int, error) {
	if lf.started {
		return lf.f.Write(p)
	}
	lf.pending = append(lf.pending, p...)
	for !lf.started {
		i := bytes.IndexByte(lf.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := lf.pending[:i+1]
		if err := lf.settle(bytes.TrimRight(line, "\r\n")); err != nil {
			return 0, err
		}
		lf.pending = lf.pending[i+1:]
	}
	if len(lf.pending) > 0 {
		if _, err := lf.f.Write(lf.pending); err != nil {
			return 0, err
		}
	}
	lf.pending = nil
	return len(p), nil
}

// settle handles one line of the new run while the old rows are pending:
// the header is checked against the old one, and the first row decides
// which old rows stay.
func (lf *File) settle(line []byte) error {
	header := lf.old[0]
	if !bytes.HasPrefix(line, []byte("step,")) && !bytes.Equal(line, []byte("step")) {
		step, err := rowStep(line)
		if err != nil {
			return fmt.Errorf("trainlog: %s: new row: %w", lf.path, err)
		}
		var b bytes.Buffer
		b.Write(header)
		b.WriteByte('\n')
		for i, old := range lf.old[1:] {
			s, err := rowStep(old)
			if err != nil {
				return fmt.Errorf("trainlog: %s:%d: %w", lf.path, i+2, err)
			}
			if s >= step {
				break
			}
			b.Write(old)
			b.WriteByte('\n')
		}
		b.Write(line)
		b.WriteByte('\n')
		f, err := replaceFile(lf.path, b.Bytes())
		if err != nil {
			return fmt.Errorf("trainlog: %w", err)
		}
		lf.f, lf.started, lf.old = f, true, nil
		return nil
	}
	if !bytes.Equal(line, header) {
		return fmt.Errorf("trainlog: %s: the resumed run logs columns %q, the file has %q", lf.path, line, header)
	}
	return nil
}

func rowStep(line []byte) (int64, error) {
	field, _, _ := bytes.Cut(line, []byte(","))
	s, err := strconv.ParseInt(string(field), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("row %q does not start with a step count", line)
	}
	return s, nil
}

// replaceFile replaces path with data atomically (a temporary file in the
// same folder, synced, renamed over path, the folder synced) and returns
// path opened for appending.
func replaceFile(path string, data []byte) (*os.File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
}

// Close closes the file.
func (lf *File) Close() error {
	if lf.f == nil {
		return nil
	}
	return lf.f.Close()
}
