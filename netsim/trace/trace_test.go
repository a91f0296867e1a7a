package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cclab/cclab/core/units"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "empty trace"},
		{"1\n\n2\n", "x:2: empty line"},
		{"1\nabc\n", `x:2: "abc" is not`},
		{"5\n3\n", "x:2: time 3 ms is before"},
		{"0\n", "period and must be positive"},
		{"-1\n", "x:1:"},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.in), "x")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestWired12(t *testing.T) {
	// One opportunity per ms = 12 Mbit/s.
	tr, err := Parse(strings.NewReader("1\n"), "wired12")
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.MeanRate(); got != 12*units.Mbps {
		t.Errorf("MeanRate = %v, want 12Mbps", got)
	}
	c := tr.CursorAt(0)
	for k := 1; k <= 5; k++ {
		if got, want := c.Time(), time.Duration(k)*time.Millisecond; got != want {
			t.Fatalf("opportunity %d at %v, want %v", k, got, want)
		}
		c.Next()
	}
}

func TestCursorLoopsAndCounts(t *testing.T) {
	tr, err := Parse(strings.NewReader("2\n2\n2\n7\n10\n"), "x")
	if err != nil {
		t.Fatal(err)
	}
	c := tr.CursorAt(3 * time.Millisecond)
	type opp struct {
		at time.Duration
		n  int
	}
	want := []opp{{7 * time.Millisecond, 1}, {10 * time.Millisecond, 1}, {12 * time.Millisecond, 3}, {17 * time.Millisecond, 1}, {20 * time.Millisecond, 1}}
	for _, w := range want {
		if c.Time() != w.at || c.Count() != w.n {
			t.Fatalf("cursor at %v x%d, want %v x%d", c.Time(), c.Count(), w.at, w.n)
		}
		c.Next()
	}
	// Mid-millisecond times round up: the opportunity at 2 ms is not usable
	// at 2.5 ms.
	c = tr.CursorAt(2500 * time.Microsecond)
	if c.Time() != 7*time.Millisecond {
		t.Errorf("CursorAt(2.5ms) = %v, want 7ms", c.Time())
	}
}

func TestWindowRates(t *testing.T) {
	// 10 s at 1, 2, 3 packets per ms -> 12, 24, 36 Mbit/s per 100 ms window.
	var b strings.Builder
	for ms := 1; ms <= 300; ms++ {
		n := (ms-1)/100 + 1
		for range n {
			b.WriteString(strconv.Itoa(ms))
			b.WriteByte('\n')
		}
	}
	tr, err := Parse(strings.NewReader(b.String()), "steps")
	if err != nil {
		t.Fatal(err)
	}
	rates, err := tr.WindowRates(100 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Window k covers [100k, 100k+100), as in the traces README's
	// statistics method: the opportunity at 100 ms falls in window 1.
	if got, want := rates[0], units.Bandwidth(99*1500*8*10); got != want {
		t.Errorf("window 0 rate = %v, want %v", got, want)
	}
	if len(rates) != 3 {
		t.Fatalf("got %d windows, want 3", len(rates))
	}
	total := 0.0
	for _, r := range rates {
		total += r.Mbps() * 0.1
	}
	// Bits conserved: (100*1 + 100*2 + 100*3) * 1500 * 8 bits.
	if wantMb := 600 * 1500 * 8 / 1e6; total < wantMb-1e-6 || total > wantMb+1e-6 {
		t.Errorf("window rates carry %g Mbit, want %g", total, wantMb)
	}
}

func TestSlice(t *testing.T) {
	tr, _ := Parse(strings.NewReader("1\n5\n5\n9\n12\n"), "x")
	s, err := tr.Slice(5*time.Millisecond, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if s.Opportunities() != 3 || s.Period() != 5*time.Millisecond {
		t.Errorf("slice has %d opportunities, period %v; want 3, 5ms", s.Opportunities(), s.Period())
	}
	if _, err := tr.Slice(13*time.Millisecond, time.Millisecond); err == nil {
		t.Errorf("empty slice accepted")
	}
	// A piece past the end would loop a stretch without opportunities.
	if _, err := tr.Slice(5*time.Millisecond, 8*time.Millisecond); err == nil || !strings.Contains(err.Error(), "runs past the trace's end (it is 12ms long)") {
		t.Errorf("slice [5ms, 13ms) of a 12 ms trace: %v", err)
	}
	if _, err := tr.Slice(0, 12*time.Millisecond); err != nil {
		t.Errorf("the whole trace as a slice: %v", err)
	}
	path := filepath.Join(t.TempDir(), "x.trace")
	if err := os.WriteFile(path, []byte("1\n5\n5\n9\n12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := new(Cache).Piece(path, 12*time.Millisecond, 0); err == nil || !strings.Contains(err.Error(), "trace_start 12ms is not before the trace's end") {
		t.Errorf("trace_start at the end: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("1\n")
	f.Add("2\n2\n7\n")
	f.Add("0\n0\n")
	f.Add("1\r\n3\r\n")
	// The audit's bad inputs: a period of 2^40 ms (88 GB of windows in
	// average mode), beyond the bound, negative, decreasing, text, empty
	// lines, a long line.
	f.Add("1099511627776\n")
	f.Add("1099511627777\n")
	f.Add("-1\n")
	f.Add("5\n3\n")
	f.Add("one\ntwo\n")
	f.Add("\n\n")
	f.Add(strings.Repeat("9", 100) + "\n")
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := Parse(strings.NewReader(s), "fuzz")
		if err != nil {
			return
		}
		if tr.Period() <= 0 || tr.Opportunities() <= 0 {
			t.Fatalf("accepted trace with period %v, %d opportunities", tr.Period(), tr.Opportunities())
		}
		c := tr.CursorAt(0)
		prev := time.Duration(-1)
		for range 10 {
			if c.Time() < prev {
				t.Fatalf("cursor went backwards")
			}
			prev = c.Time()
			c.Next()
		}
		if _, err := tr.WindowRates(100 * time.Millisecond); err != nil && tr.Period()/(100*time.Millisecond) < MaxWindows {
			t.Fatal(err)
		}
	})
}

func TestLoadGzip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte("1\n2\n2\n4\n"))
	zw.Close()
	f.Close()
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Opportunities() != 4 || tr.Period() != 4*time.Millisecond {
		t.Errorf("got %d opportunities, period %v; want 4, 4ms", tr.Opportunities(), tr.Period())
	}
}

func TestCacheReturnsSameAndReloadsEdits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t")
	if err := os.WriteFile(path, []byte("1\n2\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var c Cache
	a, err := c.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Load(path)
	if a != b {
		t.Errorf("second Load parsed again")
	}
	p1, _ := c.Piece(path, time.Millisecond, 2*time.Millisecond)
	p2, _ := c.Piece(path, time.Millisecond, 2*time.Millisecond)
	if p1 != p2 || p1.Opportunities() != 2 {
		t.Errorf("pieces %p %p with %d opportunities, want one shared piece of 2", p1, p2, p1.Opportunities())
	}
	// An edited file (new size) is read again.
	if err := os.WriteFile(path, []byte("1\n2\n3\n4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, _ := c.Load(path)
	if d == a || d.Opportunities() != 4 {
		t.Errorf("edited file not reloaded: %d opportunities", d.Opportunities())
	}
}

// TestBuiltinFallback registers an in-memory trace set and checks that
// Open and Cache.Load find its files by name when the path does not exist,
// while files on disk take precedence and unknown names stay errors.
func TestBuiltinFallback(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("5\n5\n10\n"))
	zw.Close()
	RegisterFS(fstest.MapFS{
		"fallback-test.txt": {Data: []byte("1\n2\n3\n")},
		"fallback-test.gz":  {Data: gz.Bytes()},
	})
	for _, tc := range []struct {
		path, text string
		n          int64
	}{
		{"no/such/dir/fallback-test.txt", "1\n2\n3\n", 3},
		{"elsewhere/fallback-test.gz", "5\n5\n10\n", 3},
	} {
		r, err := Open(tc.path)
		if err != nil {
			t.Fatalf("Open(%s): %v", tc.path, err)
		}
		b, _ := io.ReadAll(r)
		r.Close()
		if string(b) != tc.text {
			t.Errorf("Open(%s) read %q, want %q", tc.path, b, tc.text)
		}
		var c Cache
		tr, err := c.Load(tc.path)
		if err != nil || tr.Opportunities() != tc.n {
			t.Errorf("Cache.Load(%s): %v", tc.path, err)
		}
	}
	// A file on disk with a built-in name is read from disk.
	disk := filepath.Join(t.TempDir(), "fallback-test.txt")
	os.WriteFile(disk, []byte("7\n"), 0o644)
	r, err := Open(disk)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "7\n" {
		t.Errorf("Open(%s) read %q from the built-in copy", disk, b)
	}
	if _, err := Open("no/such/dir/unknown-trace"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unknown trace: %v, want a not-exist error", err)
	}
}

// TestHugePeriodRefused: a one-line trace "1099511627776" in average mode
// asked for 88 GB at once and crashed.
func TestHugePeriodRefused(t *testing.T) {
	if _, err := Parse(strings.NewReader("1099511627776\n"), "huge"); err == nil || !strings.Contains(err.Error(), "implausibly large") {
		t.Errorf("2^40 ms: %v", err)
	}
	tr, err := Parse(strings.NewReader("10000000000\n"), "huge")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.WindowRates(100 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "use trace_mode exact") {
		t.Errorf("got %v", err)
	}
	// Exact mode stays cheap: the cursor is sparse.
	c := tr.CursorAt(0)
	if c.Time() != tr.Period() {
		t.Errorf("cursor at %v", c.Time())
	}
}

// TestBuiltinByNameWithOrWithoutGz: "TMobile-LTE-short.down" failed with
// "no such file" though the trace ships as TMobile-LTE-short.down.gz, and
// a missing trace did not list the built-in ones.
func TestBuiltinByNameWithOrWithoutGz(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("1\n2\n"))
	zw.Close()
	RegisterFS(fstest.MapFS{"Test-builtin.down.gz": {Data: gz.Bytes()}})
	c := &Cache{}
	for _, name := range []string{"Test-builtin.down.gz", "Test-builtin.down", "some/dir/Test-builtin.down"} {
		tr, err := c.Load(name)
		if err != nil || tr.Opportunities() != 2 {
			t.Errorf("%s: %v", name, err)
		}
		r, err := Open(name)
		if err != nil {
			t.Errorf("Open %s: %v", name, err)
			continue
		}
		b, _ := io.ReadAll(r)
		r.Close()
		if string(b) != "1\n2\n" {
			t.Errorf("Open %s read %q", name, b)
		}
	}
	_, err := c.Load("No-such.down")
	if err == nil || !strings.Contains(err.Error(), "built-in traces: ") || !strings.Contains(err.Error(), "Test-builtin.down.gz") {
		t.Errorf("missing trace: %v", err)
	}
	// A file on disk named without its .gz is found too.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "disk.down.gz"), gz.Bytes(), 0o644)
	if tr, err := c.Load(filepath.Join(dir, "disk.down")); err != nil || tr.Opportunities() != 2 {
		t.Errorf("disk.down: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "device") {
			t.Errorf("/dev/zero: %v", err)
		}
	}
}

// TestBrokenGzipSaysSo: a .gz trace cut short ended in a partial line,
// which was reported as that line's mistake ("time 3 ms is before the
// previous line's 3020 ms"); a file that is not gzip at all said only
// "unexpected EOF".
func TestBrokenGzipSaysSo(t *testing.T) {
	var text strings.Builder
	for ms := 1; ms <= 20000; ms++ {
		text.WriteString(strconv.Itoa(ms*3) + "\n")
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(text.String()))
	zw.Close()
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.gz")
	if err := os.WriteFile(cut, z.Bytes()[:z.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	notGz := filepath.Join(dir, "plain.gz")
	if err := os.WriteFile(notGz, []byte("12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(dir, "whole.gz")
	if err := os.WriteFile(whole, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, load := range []func(string) (*Trace, error){Load, new(Cache).Load} {
		if _, err := load(cut); err == nil || !strings.Contains(err.Error(), "cut short or corrupt") {
			t.Errorf("truncated gzip: %v, want it called cut short or corrupt", err)
		}
		if _, err := load(notGz); err == nil || !strings.Contains(err.Error(), "plain.gz: not gzip data") {
			t.Errorf("plain file named .gz: %v, want not gzip data", err)
		}
		if tr, err := load(whole); err != nil || tr.Opportunities() != 20000 {
			t.Errorf("whole gzip: %v", err)
		}
	}
}
