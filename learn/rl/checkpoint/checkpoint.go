// Package checkpoint writes and reads training checkpoints: a versioned,
// checksummed container around a stream of named fields, written atomically
// (temporary file, fsync, rename) so that a run killed at any instant leaves
// either the previous checkpoint or the new one, never a torn file.
//
// File layout (little endian):
//
//	magic   "CCLABCKP"          8 bytes
//	version uint32              Version
//	kind    uint16 + bytes      what wrote it, e.g. "sac"
//	payload ...                 fields written by an Encoder
//	crc     uint32              CRC-32C (Castagnoli) of everything before it
//
// Each field is a name (uint16 length + bytes) followed by its value, so a
// reader that expects a different layout fails at the first mismatching
// field with both names in the error, rather than misreading numbers.
// Open verifies the checksum over the whole file before any field is
// decoded.
package checkpoint

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/cclab/cclab/internal/atomicfile"
	"github.com/cclab/cclab/internal/boundedio"
)

// Magic starts every checkpoint file.
const Magic = "CCLABCKP"

// Version is the container version this package writes and reads. 2:
// agents save a normaliser's statistics ("env.stats") when the
// environments cannot be saved; version 1 lost them on resume.
const Version = 2

// castagnoli is the CRC-32C table. hash/crc32 makes it on the first call
// and returns the same table after; called at package initialisation, as
// it was, it cost every cclab command over a million instructions (an
// eighth of its start-up) that only checkpoints and policy files need.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// Encoder writes named fields to a checkpoint stream.
type Encoder struct {
	w   *bufio.Writer
	crc hash.Hash32
	err error
	buf [8]byte
}

func newEncoder(w io.Writer) *Encoder {
	c := crc32.New(castagnoli())
	return &Encoder{w: bufio.NewWriterSize(io.MultiWriter(w, c), 1<<20), crc: c}
}

func (e *Encoder) raw(p []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(p)
	}
}

func (e *Encoder) u16(v uint16) {
	binary.LittleEndian.PutUint16(e.buf[:2], v)
	e.raw(e.buf[:2])
}

func (e *Encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:8], v)
	e.raw(e.buf[:8])
}

func (e *Encoder) name(s string) {
	e.u16(uint16(len(s)))
	e.raw([]byte(s))
}

// Uint64 writes a named unsigned integer.
func (e *Encoder) Uint64(name string, v uint64) { e.name(name); e.u64(v) }

// Int64 writes a named signed integer.
func (e *Encoder) Int64(name string, v int64) { e.Uint64(name, uint64(v)) }

// Float64 writes a named float64.
func (e *Encoder) Float64(name string, v float64) { e.Uint64(name, math.Float64bits(v)) }

// Bool writes a named boolean.
func (e *Encoder) Bool(name string, v bool) {
	var b uint64
	if v {
		b = 1
	}
	e.Uint64(name, b)
}

// Bytes writes a named byte string (length-prefixed).
func (e *Encoder) Bytes(name string, p []byte) {
	e.name(name)
	e.u64(uint64(len(p)))
	e.raw(p)
}

// Float32s writes a named float32 slice (length-prefixed).
func (e *Encoder) Float32s(name string, s []float32) {
	e.name(name)
	e.u64(uint64(len(s)))
	var chunk [4096]byte
	for len(s) > 0 {
		n := min(len(s), len(chunk)/4)
		for i, v := range s[:n] {
			binary.LittleEndian.PutUint32(chunk[4*i:], math.Float32bits(v))
		}
		e.raw(chunk[:4*n])
		s = s[n:]
	}
}

// Float64s writes a named float64 slice (length-prefixed).
func (e *Encoder) Float64s(name string, s []float64) {
	e.name(name)
	e.u64(uint64(len(s)))
	for _, v := range s {
		e.u64(math.Float64bits(v))
	}
}

// Bools writes a named bool slice, one byte each.
func (e *Encoder) Bools(name string, s []bool) {
	p := make([]byte, len(s))
	for i, v := range s {
		if v {
			p[i] = 1
		}
	}
	e.Bytes(name, p)
}

// Err returns the first write error.
func (e *Encoder) Err() error { return e.err }

// Decoder reads named fields in the order they were written. The first
// error sticks: later reads do nothing and Err reports it.
type Decoder struct {
	r    *bufio.Reader
	err  error
	left int64 // payload bytes remaining
	buf  [8]byte
}

func (d *Decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("checkpoint: "+format, args...)
	}
}

func (d *Decoder) raw(p []byte) bool {
	if d.err != nil {
		return false
	}
	if int64(len(p)) > d.left {
		d.fail("truncated payload")
		return false
	}
	if _, err := io.ReadFull(d.r, p); err != nil {
		d.fail("reading payload: %v", err)
		return false
	}
	d.left -= int64(len(p))
	return true
}

func (d *Decoder) u64() uint64 {
	if !d.raw(d.buf[:8]) {
		return 0
	}
	return binary.LittleEndian.Uint64(d.buf[:8])
}

func (d *Decoder) expect(name string) bool {
	if !d.raw(d.buf[:2]) {
		return false
	}
	n := int(binary.LittleEndian.Uint16(d.buf[:2]))
	if int64(n) > d.left || n > 1<<12 {
		d.fail("field %q: corrupt name length %d", name, n)
		return false
	}
	p := make([]byte, n)
	if !d.raw(p) {
		return false
	}
	if string(p) != name {
		d.fail("found field %q where %q was expected (checkpoint from a different configuration or version)", p, name)
		return false
	}
	return true
}

// Uint64 reads a named unsigned integer.
func (d *Decoder) Uint64(name string) uint64 {
	if !d.expect(name) {
		return 0
	}
	return d.u64()
}

// Int64 reads a named signed integer.
func (d *Decoder) Int64(name string) int64 { return int64(d.Uint64(name)) }

// Float64 reads a named float64.
func (d *Decoder) Float64(name string) float64 { return math.Float64frombits(d.Uint64(name)) }

// Bool reads a named boolean.
func (d *Decoder) Bool(name string) bool {
	v := d.Uint64(name)
	if v > 1 {
		d.fail("field %q: boolean value %d", name, v)
	}
	return v == 1
}

func (d *Decoder) length(name string, elem int, want int) int {
	n := d.u64()
	if d.err != nil {
		return 0
	}
	if want >= 0 && n != uint64(want) {
		d.fail("field %q has %d elements, want %d (checkpoint from a different configuration)", name, n, want)
		return 0
	}
	if n > uint64(d.left)/uint64(elem) {
		d.fail("field %q: length %d exceeds the remaining payload", name, n)
		return 0
	}
	return int(n)
}

// Bytes reads a named byte string of any length.
func (d *Decoder) Bytes(name string) []byte {
	if !d.expect(name) {
		return nil
	}
	n := d.length(name, 1, -1)
	p := make([]byte, n)
	d.raw(p)
	return p
}

// Float32sInto reads a named float32 slice whose length must equal
// len(dst).
func (d *Decoder) Float32sInto(name string, dst []float32) {
	if !d.expect(name) {
		return
	}
	d.float32s(name, dst, len(dst))
}

// Float32sMax reads a named float32 slice of at most max elements into a
// fresh slice.
func (d *Decoder) Float32sMax(name string, max int) []float32 {
	if !d.expect(name) {
		return nil
	}
	n := d.length(name, 4, -1)
	if n > max {
		d.fail("field %q has %d elements, more than the %d allowed", name, n, max)
		return nil
	}
	dst := make([]float32, n)
	d.readF32(dst)
	return dst
}

func (d *Decoder) float32s(name string, dst []float32, want int) {
	if d.length(name, 4, want) != want || d.err != nil {
		return
	}
	d.readF32(dst)
}

func (d *Decoder) readF32(dst []float32) {
	var chunk [4096]byte
	for len(dst) > 0 {
		n := min(len(dst), len(chunk)/4)
		if !d.raw(chunk[:4*n]) {
			return
		}
		for i := range dst[:n] {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(chunk[4*i:]))
		}
		dst = dst[n:]
	}
}

// Float64sInto reads a named float64 slice whose length must equal
// len(dst).
func (d *Decoder) Float64sInto(name string, dst []float64) {
	if !d.expect(name) {
		return
	}
	if d.length(name, 8, len(dst)) != len(dst) || d.err != nil {
		return
	}
	for i := range dst {
		dst[i] = math.Float64frombits(d.u64())
	}
}

// BoolsInto reads a named bool slice whose length must equal len(dst).
func (d *Decoder) BoolsInto(name string, dst []bool) {
	if !d.expect(name) {
		return
	}
	if d.length(name, 1, len(dst)) != len(dst) || d.err != nil {
		return
	}
	p := make([]byte, len(dst))
	if !d.raw(p) {
		return
	}
	for i, v := range p {
		if v > 1 {
			d.fail("field %q: boolean byte %d", name, v)
			return
		}
		dst[i] = v == 1
	}
}

// Fail records a semantic error found by the caller (e.g. a value out of
// range), naming the field.
func (d *Decoder) Fail(field, format string, args ...any) {
	d.fail("field %q: %s", field, fmt.Sprintf(format, args...))
}

// Err returns the first error.
func (d *Decoder) Err() error { return d.err }

// Save writes a checkpoint of the given kind atomically to path: the
// content goes to a temporary file in the same directory, which is synced
// and renamed over path, and the directory is synced (internal/atomicfile).
// Temporary files a killed Save left beside path are removed first.
func Save(path, kind string, write func(*Encoder) error) error {
	RemoveStaleTemps(path)
	err := atomicfile.Write(path, func(w io.Writer) error {
		e := newEncoder(w)
		e.raw([]byte(Magic))
		binary.LittleEndian.PutUint32(e.buf[:4], Version)
		e.raw(e.buf[:4])
		e.name(kind)
		if err := write(e); err != nil {
			return err
		}
		if e.err == nil {
			e.err = e.w.Flush()
		}
		if e.err != nil {
			return e.err
		}
		var sum [4]byte
		binary.LittleEndian.PutUint32(sum[:], e.crc.Sum32())
		_, err := w.Write(sum[:])
		return err
	})
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// RemoveStaleTemps removes the temporary files that a Save of path killed
// mid-write left behind (each up to the size of a checkpoint, and never
// renamed into place). Save calls it; training commands call it at start.
func RemoveStaleTemps(path string) {
	atomicfile.RemoveTemps(path)
}

// CheckFresh is for the start of a training run: unless it resumes or is
// forced, an existing checkpoint at path is refused (starting afresh
// would overwrite it and the learning curve of the run that wrote it).
// It also removes the temporary files of a killed earlier write.
func CheckFresh(path string, resume, force bool) error {
	RemoveStaleTemps(path)
	_, err := os.Stat(path)
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		// Not "exists": a folder in the path that is a file (ENOTDIR), or
		// one that cannot be read, would fail the first checkpoint.
		return fmt.Errorf("checkpoint %s: %w", path, err)
	case resume || force || err != nil:
		return nil
	}
	return fmt.Errorf("%s exists (left by an earlier training run): continue that run with --resume, or start over with --force", path)
}

// ErrNotExist is returned (wrapped) by Load when there is no checkpoint.
var ErrNotExist = os.ErrNotExist

// Load opens the checkpoint at path, verifies its magic, version, kind and
// checksum, and calls read with a Decoder positioned at the payload. read
// must consume exactly the payload; leftover bytes are an error.
func Load(path, kind string, read func(*Decoder) error) error {
	f, err := boundedio.Open(path, "checkpoint")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	size := st.Size()
	hdr := int64(len(Magic) + 4)
	if size == 0 {
		return fmt.Errorf("checkpoint: %s is empty", path)
	}
	// The magic first: a text file given by mistake is not "truncated".
	start := make([]byte, len(Magic))
	if n, _ := f.ReadAt(start, 0); string(start[:n]) != Magic[:n] || n == 0 {
		return fmt.Errorf("checkpoint: %s is not a cclab checkpoint (bad magic: it starts with %q)", path, start[:n])
	}
	if size < hdr+2+4 {
		return fmt.Errorf("checkpoint: %s is truncated (%d bytes)", path, size)
	}
	// Pass 1: checksum the whole file before trusting any length in it.
	c := crc32.New(castagnoli())
	if _, err := io.CopyN(c, f, size-4); err != nil {
		return fmt.Errorf("checkpoint: reading %s: %w", path, err)
	}
	var sum [4]byte
	if _, err := io.ReadFull(f, sum[:]); err != nil {
		return fmt.Errorf("checkpoint: reading %s: %w", path, err)
	}
	head := make([]byte, hdr)
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("checkpoint: reading %s: %w", path, err)
	}
	if string(head[:len(Magic)]) != Magic {
		return fmt.Errorf("checkpoint: %s is not a cclab checkpoint (bad magic)", path)
	}
	if v := binary.LittleEndian.Uint32(head[len(Magic):]); v != Version {
		return fmt.Errorf("checkpoint: %s has format version %d, this build reads version %d", path, v, Version)
	}
	if got, want := c.Sum32(), binary.LittleEndian.Uint32(sum[:]); got != want {
		return fmt.Errorf("checkpoint: %s is corrupt (CRC-32C %08x, stored %08x)", path, got, want)
	}
	// Pass 2: decode.
	if _, err := f.Seek(hdr, io.SeekStart); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	d := &Decoder{r: bufio.NewReaderSize(f, 1<<20), left: size - hdr - 4}
	var kb [2]byte
	if !d.raw(kb[:]) {
		return d.err
	}
	kn := int(binary.LittleEndian.Uint16(kb[:]))
	got := make([]byte, min(kn, int(d.left)))
	if !d.raw(got) {
		return d.err
	}
	if string(got) != kind {
		return fmt.Errorf("checkpoint: %s holds a %q checkpoint, want %q", path, got, kind)
	}
	if err := read(d); err != nil {
		return err
	}
	if d.err != nil {
		return d.err
	}
	if d.left != 0 {
		return fmt.Errorf("checkpoint: %s has %d unread payload bytes (written by a different configuration)", path, d.left)
	}
	return nil
}

// Exists reports whether a checkpoint file is present at path.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}
