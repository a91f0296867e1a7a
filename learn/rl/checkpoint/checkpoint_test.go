package checkpoint

import (
	"errors"
	"github.com/cclab/cclab/internal/atomicfile"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path string) {
	t.Helper()
	err := Save(path, "unit", func(e *Encoder) error {
		e.Int64("n", -7)
		e.Float64("x", 2.5)
		e.Bool("b", true)
		e.Bytes("raw", []byte("hello"))
		e.Float32s("f32", []float32{1, 2, 3})
		e.Float64s("f64", []float64{4, 5})
		e.Bools("flags", []bool{true, false})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func read(path string) error {
	return Load(path, "unit", func(d *Decoder) error {
		if d.Int64("n") != -7 || d.Float64("x") != 2.5 || !d.Bool("b") || string(d.Bytes("raw")) != "hello" {
			if d.Err() != nil {
				return d.Err()
			}
			return errors.New("scalar mismatch")
		}
		f := make([]float32, 3)
		d.Float32sInto("f32", f)
		g := make([]float64, 2)
		d.Float64sInto("f64", g)
		fl := make([]bool, 2)
		d.BoolsInto("flags", fl)
		if d.Err() == nil && (f[2] != 3 || g[1] != 5 || !fl[0] || fl[1]) {
			return errors.New("slice mismatch")
		}
		return d.Err()
	})
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ck")
	write(t, path)
	if err := read(path); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptionDetected(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ck")
	write(t, path)
	good, _ := os.ReadFile(path)
	for _, tc := range []struct {
		name   string
		mutate func([]byte) []byte
		want   string
	}{
		{"flipped byte", func(b []byte) []byte { b[len(b)/2] ^= 1; return b }, "corrupt"},
		{"truncated", func(b []byte) []byte { return b[:len(b)-9] }, "corrupt"},
		{"tiny", func(b []byte) []byte { return b[:5] }, "truncated"},
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, "bad magic"},
		{"version", func(b []byte) []byte { b[8] = 9; return b }, "version 9"},
	} {
		b := tc.mutate(append([]byte(nil), good...))
		p := filepath.Join(dir, tc.name)
		os.WriteFile(p, b, 0o644)
		err := read(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestWrongKindAndLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ck")
	write(t, path)
	err := Load(path, "other", func(d *Decoder) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `holds a "unit" checkpoint, want "other"`) {
		t.Errorf("wrong kind: %v", err)
	}
	err = Load(path, "unit", func(d *Decoder) error { d.Int64("m"); return d.Err() })
	if err == nil || !strings.Contains(err.Error(), `found field "n" where "m" was expected`) {
		t.Errorf("wrong field: %v", err)
	}
	err = Load(path, "unit", func(d *Decoder) error { d.Int64("n"); return d.Err() })
	if err == nil || !strings.Contains(err.Error(), "unread payload") {
		t.Errorf("partial read: %v", err)
	}
	err = Load(path, "unit", func(d *Decoder) error {
		d.Int64("n")
		d.Float64("x")
		d.Bool("b")
		d.Bytes("raw")
		d.Float32sInto("f32", make([]float32, 4))
		return d.Err()
	})
	if err == nil || !strings.Contains(err.Error(), "has 3 elements, want 4") {
		t.Errorf("wrong length: %v", err)
	}
}

// TestFailedSaveKeepsOld: a write that fails midway leaves the previous
// checkpoint intact and no temporary files behind.
func TestFailedSaveKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ck")
	write(t, path)
	err := Save(path, "unit", func(e *Encoder) error {
		e.Int64("n", 1)
		return errors.New("disk on fire")
	})
	if err == nil {
		t.Fatal("Save reported success")
	}
	if err := read(path); err != nil {
		t.Errorf("old checkpoint damaged: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d files after a failed save, want 1", len(entries))
	}
}

func FuzzLoad(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed")
	err := Save(path, "unit", func(e *Encoder) error {
		e.Int64("n", 3)
		e.Float32s("v", []float32{1, 2})
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	f.Add(good)
	// The audit's bad inputs: a text file, an empty one, a truncated one.
	f.Add([]byte("hello\n"))
	f.Add([]byte{})
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "ck")
		os.WriteFile(p, data, 0o644)
		// Must return an error or succeed, never panic or over-allocate.
		Load(p, "unit", func(d *Decoder) error {
			d.Int64("n")
			d.Float32sMax("v", 1<<20)
			return d.Err()
		})
	})
}

// TestTextFileIsNotACheckpoint: a short text file was called "truncated".
func TestTextFileIsNotACheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(path, []byte("hello\n"), 0o644)
	if err := read(path); err == nil || !strings.Contains(err.Error(), `is not a cclab checkpoint (bad magic: it starts with "hello\n")`) {
		t.Errorf("got %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if err := read("/dev/zero"); err == nil || !strings.Contains(err.Error(), "device") {
			t.Errorf("/dev/zero: got %v", err)
		}
	}
}

// TestStaleTempsRemoved: a kill during a checkpoint write left a temporary
// file that no later run removed.
func TestStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.ckpt")
	stale := filepath.Join(dir, atomicfile.TempPrefix+"run.ckpt-42")
	os.WriteFile(stale, make([]byte, 1000), 0o644)
	write(t, path)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file still there: %v", err)
	}
	if err := read(path); err != nil {
		t.Fatal(err)
	}
}

// TestCheckFresh: marlin train without --resume silently overwrote an
// existing checkpoint (and emptied its learning curve).
func TestCheckFresh(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.ckpt")
	if err := CheckFresh(path, false, false); err != nil {
		t.Errorf("no checkpoint yet: %v", err)
	}
	write(t, path)
	if err := CheckFresh(path, false, false); err == nil || !strings.Contains(err.Error(), "--resume") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing checkpoint: %v", err)
	}
	if CheckFresh(path, true, false) != nil || CheckFresh(path, false, true) != nil {
		t.Errorf("--resume or --force refused")
	}
	stale := filepath.Join(dir, atomicfile.TempPrefix+"out.ckpt-7")
	os.WriteFile(stale, []byte("x"), 0o644)
	CheckFresh(path, true, false)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file kept at start")
	}
	// A path under a regular file was taken for an existing checkpoint
	// (its stat fails with ENOTDIR, not "does not exist").
	under := filepath.Join(path, "x.ckpt")
	for _, force := range []bool{false, true} {
		if err := CheckFresh(under, false, force); err == nil || strings.Contains(err.Error(), "earlier training run") || !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("checkpoint under a file (force %v): %v", force, err)
		}
	}
}
