package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := WriteBytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(path, []byte("new content")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "new content" {
		t.Fatalf("read %q, %v", b, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestFailedWriteKeepsOld checks that a write that fails half-way leaves
// the old content and no temporary file.
func TestFailedWriteKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := WriteBytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		w.Write(make([]byte, 1<<17)) // past the buffer: bytes reach the file
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("content after failed write %q, want old", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.ckpt")
	for _, n := range []string{TempPrefix + "p.ckpt-123", TempPrefix + "other-1", "p.ckpt"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	RemoveTemps(path)
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != TempPrefix+"other-1" || names[1] != "p.ckpt" {
		t.Errorf("after RemoveTemps: %v; want p.ckpt and the other file's temporary", names)
	}
}
