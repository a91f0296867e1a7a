package prefetch

import (
	"runtime"
	"testing"
)

func TestParseCacheSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"2048K\n", 2 << 20, true},
		{"512K", 512 << 10, true},
		{"1M", 1 << 20, true},
		{"32768", 32768, true},
		{"1G", 1 << 30, true},
		{"2G", 0, false},
		{"1048577K", 0, false},
		{"", 0, false},
		{"K", 0, false},
		{"-1K", 0, false},
		{"0K", 0, false},
		{"2048 K", 0, false},
		{"9999999999999G", 0, false},
		{"1.5M", 0, false},
	} {
		got, ok := ParseCacheSize(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseCacheSize(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// On Linux every x86-64 and arm64 machine reports an L2; the value must be
// one a cache can have.
func TestL2Bytes(t *testing.T) {
	n := L2Bytes()
	if runtime.GOOS != "linux" {
		if n != 0 {
			t.Errorf("L2Bytes() = %d off Linux, want 0", n)
		}
		return
	}
	if n == 0 {
		t.Skip("this machine's sysfs reports no level-2 cache")
	}
	if n < 64<<10 || n > 64<<20 || n%1024 != 0 {
		t.Errorf("L2Bytes() = %d, not a level-2 cache's size", n)
	}
}

func FuzzParseCacheSize(f *testing.F) {
	for _, s := range []string{"2048K", "1M", "32768", "", "K", "-5M", "99999999999999999999K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := ParseCacheSize(s)
		if ok != (n > 0) || n > maxCacheSize {
			t.Fatalf("ParseCacheSize(%q) = %d, %v", s, n, ok)
		}
	})
}
