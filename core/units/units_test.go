package units

import (
	"testing"
	"time"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want Bytes
		ok   bool
	}{
		{"1500", 1500, true},
		{"1500B", 1500, true},
		{"150KB", 150000, true},
		{"1.5MB", 1500000, true},
		{"64KiB", 65536, true},
		{" 2 GB ", 2e9, true},
		{"2kB", 2000, true},
		{"2 bytes", 2, true},
		{" 2 gb ", 0, false}, // b is a bit
		{"600Kb", 0, false},
		{"1b", 0, false},
		{"64kib", 0, false},
		{"1e3KB", 1e6, true},
		{"", 0, false},
		{"KB", 0, false},
		{"-1KB", 0, false},
		{"12 parsecs", 0, false},
		{"NaN", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseBytes(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if tt.ok && got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestParseBandwidth(t *testing.T) {
	tests := []struct {
		in   string
		want Bandwidth
		ok   bool
	}{
		{"256kbps", 256000, true},
		{"1Mbps", 1e6, true},
		{"10 Mbit/s", 1e7, true},
		{"1Gbps", 1e9, true},
		{"0.5Mbps", 5e5, true},
		{"100", 0, false},
		{"1mbps", 1e6, true},
		{"1MBit/s", 1e6, true},
		{"1MBps", 0, false}, // bytes per second, not Mbps
		{"1 KB/s", 0, false},
		{"1Bps", 0, false},
		{"-1Mbps", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseBandwidth(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseBandwidth(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if tt.ok && got != tt.want {
			t.Errorf("ParseBandwidth(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestTxTime(t *testing.T) {
	if got, want := (10 * Mbps).TxTime(1500), 1200*time.Microsecond; got != want {
		t.Errorf("TxTime(1500B at 10Mbps) = %v, want %v", got, want)
	}
	if got := BandwidthFromDelta(1500, 1200*time.Microsecond); got != 10*Mbps {
		t.Errorf("BandwidthFromDelta = %v, want 10Mbps", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"150KB", "1Mbps", "1e", "9e999", "0.0.1MB", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := ParseBytes(s); err == nil && b < 0 {
			t.Errorf("ParseBytes(%q) = %d, negative without error", s, b)
		}
		if bw, err := ParseBandwidth(s); err == nil && bw < 0 {
			t.Errorf("ParseBandwidth(%q) = %d, negative without error", s, bw)
		}
	})
}
