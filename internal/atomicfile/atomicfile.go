// Package atomicfile writes files so that a reader, or a run resumed after
// a kill or a power cut, sees the old content or the new, never a mixture:
// the content goes to a temporary file in the same directory, which is
// synced and renamed over the target, and the directory is synced so that
// the rename itself is durable.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// TempPrefix starts the name of every temporary file Write creates, so
// that leftovers of a killed write can be found and removed.
const TempPrefix = ".cclab-tmp-"

// Write writes path atomically with the content write produces (through a
// buffer). The file is readable by everyone (0644), like os.Create's. On
// any error the temporary file is removed and path is left as it was.
func Write(path string, write func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	// CreateTemp makes the file private; outputs are for sharing.
	err = f.Chmod(0o644)
	bw := bufio.NewWriterSize(f, 1<<16)
	if err == nil {
		err = write(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return SyncDir(dir)
}

// WriteBytes writes data to path atomically.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// SyncDir makes renames and creations in dir durable. Some filesystems
// refuse to sync a directory (EINVAL); that weakens durability after a
// power cut only, so it is not reported.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	d.Sync()
	return d.Close()
}

// RemoveTemps deletes the temporary files that killed writes of path left
// behind (a write in progress in another process would lose its file, so
// call it only where path has one writer).
func RemoveTemps(path string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), TempPrefix+filepath.Base(path)+"-*"))
	for _, m := range matches {
		os.Remove(m)
	}
}
