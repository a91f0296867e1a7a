package traffic

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		name, in, err string
	}{
		{"good", "# websearch-like\n100 0\n\n1000 0.5\n10000 1\n", ""},
		{"point mass", "1448 1\n", ""},
		{"three fields", "100 0.5 7\n", "cdf.txt:1: want two numbers"},
		{"not numbers", "# c\nabc 0.5\n", "cdf.txt:2: \"abc 0.5\" is not two numbers"},
		{"cdf above 1", "100 1.5\n", "cdf.txt:1: need"},
		{"negative size", "-1 0.5\n", "cdf.txt:1: need"},
		{"absurd size", "1e300 1\n", "cdf.txt:1: need"},
		{"decreasing size", "100 0.2\n50 1\n", "cdf.txt:2: sizes and cdf values must not decrease"},
		{"decreasing cdf", "100 0.5\n200 0.2\n", "cdf.txt:2:"},
		{"not ending at 1", "100 0.5\n", "must end at cdf 1"},
		{"empty", "# nothing\n", "must end at cdf 1"},
	}
	for _, tt := range tests {
		d, err := ParseSizes(strings.NewReader(tt.in), "cdf.txt")
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.err)
		case tt.err == "" && d.CDF[len(d.CDF)-1] != 1:
			t.Errorf("%s: parsed %+v", tt.name, d)
		}
	}
}

// TestSampleMatchesCDF draws from each named distribution and compares the
// empirical CDF at the distribution's points, and the sample mean with
// Mean.
func TestSampleMatchesCDF(t *testing.T) {
	for _, name := range NamedDistributions() {
		d, err := LoadSizes(name)
		if err != nil {
			t.Fatal(err)
		}
		rnd := rand.New(rand.NewPCG(1, 2))
		const n = 200_000
		xs := make([]float64, n)
		var sum float64
		for i := range xs {
			xs[i] = float64(d.Sample(rnd))
			sum += xs[i]
		}
		for i, s := range d.Sizes {
			below := 0
			for _, x := range xs {
				if x <= s {
					below++
				}
			}
			// Sizes are rounded to whole bytes: allow the CDF of the
			// next byte.
			if got := float64(below) / n; math.Abs(got-d.CDF[i]) > 0.01 && (i+1 >= len(d.Sizes) || d.Sizes[i+1]-s > 2) {
				t.Errorf("%s: P(size <= %g) = %.4f, CDF says %.4f", name, s, got, d.CDF[i])
			}
		}
		// The heavy tail makes the sample mean noisy: 5%.
		if m := sum / n; math.Abs(m-d.Mean())/d.Mean() > 0.05 {
			t.Errorf("%s: sample mean %.0f, Mean() %.0f", name, m, d.Mean())
		}
	}
	if _, err := LoadSizes("no-such-dist"); err == nil || !strings.Contains(err.Error(), "websearch") {
		t.Errorf("unknown distribution error %v should list the built-ins", err)
	}
}

func FuzzParseSizes(f *testing.F) {
	f.Add("100 0\n1000 0.5\n10000 1\n")
	f.Add("# c\n1448 1\n")
	f.Add("5 0.1\n5 0.1\n5 1\n")
	// The audit's bad inputs.
	f.Add("NaN 1\n")
	f.Add("1e300 1\n")
	f.Add("10 0.5\n5 1\n")
	f.Add("10 1.5\n")
	f.Add("10\n")
	f.Add("10 0.5\n")
	f.Fuzz(func(t *testing.T, in string) {
		d, err := ParseSizes(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		rnd := rand.New(rand.NewPCG(1, 1))
		lo, hi := d.Sizes[0], d.Sizes[len(d.Sizes)-1]
		for range 20 {
			s := float64(d.Sample(rnd))
			if s < 1 || s < math.Floor(lo) || s > math.Max(1, math.Ceil(hi)) {
				t.Fatalf("sample %g outside [%g, %g] for %q", s, lo, hi, in)
			}
		}
		if m := d.Mean(); math.IsNaN(m) || m < 0 {
			t.Fatalf("mean %g for %q", m, in)
		}
	})
}

// TestLoadSizesRefusesDevices: a device path was read without end.
func TestLoadSizesRefusesDevices(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := LoadSizes("/dev/zero"); err == nil || !strings.Contains(err.Error(), "is a device") {
		t.Errorf("got %v", err)
	}
}

// TestLoadSizesReadsAFileOnce: a scenario's validation and its run (and a
// sweep's every point) share one parse of a CDF file; an edited file, or a
// file that became malformed, is read again.
func TestLoadSizesReadsAFileOnce(t *testing.T) {
	path := t.TempDir() + "/sizes.cdf"
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1000 0\n2000 1\n")
	a, err := LoadSizes(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadSizes(path)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("the same file was parsed twice")
	}
	write("1000 0\n2000 0.5\n30000 1\n")
	c, err := LoadSizes(path)
	if err != nil {
		t.Fatal(err)
	}
	if c == a || len(c.Sizes) != 3 || c.Sizes[2] != 30000 {
		t.Errorf("the edited file gave %+v", c)
	}
	write("1000 0\n2000 x\n30000 1\n")
	if _, err := LoadSizes(path); err == nil || !strings.Contains(err.Error(), ":2") {
		t.Errorf("the malformed file gave %v", err)
	}
}

// TestLoadSizesShared: loads from many goroutines (the sweep runner's)
// agree; run with -race.
func TestLoadSizesShared(t *testing.T) {
	path := t.TempDir() + "/sizes.cdf"
	if err := os.WriteFile(path, []byte("100 0\n200 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan *SizeDist, 8)
	for range 8 {
		go func() {
			d, err := LoadSizes(path)
			if err != nil {
				t.Error(err)
			}
			got <- d
		}()
	}
	for range 8 {
		if d := <-got; d == nil || len(d.Sizes) != 2 || d.Sizes[1] != 200 {
			t.Errorf("got %+v", d)
		}
	}
}
