// Package units holds the typed quantities used across cclab (byte counts and
// bandwidths) and the parsers for their human-readable forms in scenario files
// and flags ("150KB", "256kbps", "500ms").
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Bytes is a byte count. Windows, queue limits and transfer sizes are in
// bytes; packets are a derived view (Bytes / MSS).
type Bytes int64

// Bandwidth is a rate in bits per second.
type Bandwidth int64

// Common bandwidths.
const (
	BitPerSecond Bandwidth = 1
	Kbps                   = 1000 * BitPerSecond
	Mbps                   = 1000 * Kbps
	Gbps                   = 1000 * Mbps
)

// BandwidthFromDelta returns the rate at which b bytes cross in d; zero if d
// is not positive.
func BandwidthFromDelta(b Bytes, d time.Duration) Bandwidth {
	if d <= 0 {
		return 0
	}
	return Bandwidth(float64(b) * 8 * 1e9 / float64(d))
}

// TxTime is the time needed to serialise b bytes at rate bw. A zero or
// negative rate never finishes, so it returns math.MaxInt64.
func (bw Bandwidth) TxTime(b Bytes) time.Duration {
	if bw <= 0 {
		return time.Duration(math.MaxInt64)
	}
	// Ceil so that a packet never leaves earlier than the rate allows.
	return time.Duration((int64(b)*8*1e9 + int64(bw) - 1) / int64(bw))
}

// BytesIn is the number of bytes that cross in d at rate bw.
func (bw Bandwidth) BytesIn(d time.Duration) Bytes {
	return Bytes(float64(bw) / 8 * d.Seconds())
}

// Mbps returns the rate in Mbit/s, for reporting.
func (bw Bandwidth) Mbps() float64 { return float64(bw) / 1e6 }

// String formats the bandwidth with a unit, e.g. "256kbps".
func (bw Bandwidth) String() string {
	switch {
	case bw != 0 && bw%Gbps == 0:
		return strconv.FormatInt(int64(bw/Gbps), 10) + "Gbps"
	case bw != 0 && bw%Mbps == 0:
		return strconv.FormatInt(int64(bw/Mbps), 10) + "Mbps"
	case bw != 0 && bw%Kbps == 0:
		return strconv.FormatInt(int64(bw/Kbps), 10) + "kbps"
	}
	return strconv.FormatInt(int64(bw), 10) + "bps"
}

// String formats the count with a unit, e.g. "150KB".
func (b Bytes) String() string {
	switch {
	case b != 0 && b%1_000_000_000 == 0:
		return strconv.FormatInt(int64(b)/1_000_000_000, 10) + "GB"
	case b != 0 && b%1_000_000 == 0:
		return strconv.FormatInt(int64(b)/1_000_000, 10) + "MB"
	case b != 0 && b%1000 == 0:
		return strconv.FormatInt(int64(b)/1000, 10) + "KB"
	}
	return strconv.FormatInt(int64(b), 10) + "B"
}

// splitNumber separates a leading decimal number from its unit suffix.
func splitNumber(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == 'e' && i > 0 || s[i] == '+' || s[i] == '-') {
		// 'e' is only part of the number when followed by a digit or sign
		// (1e6), not when it starts a unit.
		if s[i] == 'e' && (i+1 >= len(s) || !(s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-' || s[i+1] == '+')) {
			break
		}
		i++
	}
	if i == 0 {
		return 0, "", fmt.Errorf("%q does not start with a number", s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, "", fmt.Errorf("%q: bad number %q", s, s[:i])
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, "", fmt.Errorf("%q is not a finite number", s)
	}
	return v, strings.TrimSpace(s[i:]), nil
}

var byteUnits = map[string]float64{
	"": 1, "b": 1, "byte": 1, "bytes": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30,
}

// ParseBytes parses a size such as "1500", "1500B", "150KB", "1.5MB" or
// "64KiB". KB, MB and GB are decimal (1000-based), as in networking; KiB, MiB
// and GiB are binary. The prefix's case is free (kB, KB), the B's is not:
// a lower-case b is a bit in networking ("600Kb" is 75 KB), so it is
// refused rather than read as a byte.
func ParseBytes(s string) (Bytes, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if strings.HasSuffix(unit, "b") && len(unit) <= 3 {
		return 0, fmt.Errorf("%q: %q counts bits; a size is in bytes, with a capital B (B, KB, MB, GB, KiB, MiB, GiB)", s, unit)
	}
	m, ok := byteUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("%q: unknown size unit %q (accepted: B, KB, MB, GB, KiB, MiB, GiB)", s, unit)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q: a size cannot be negative", s)
	}
	if v*m > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q: size too large", s)
	}
	return Bytes(math.Round(v * m)), nil
}

var rateUnits = map[string]float64{
	"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9,
	"bit/s": 1, "kbit/s": 1e3, "mbit/s": 1e6, "gbit/s": 1e9,
}

// MaxBandwidth is the largest rate cclab accepts anywhere (1000 Tbit/s):
// far above any link, and small enough that a rate in whole bits per
// second, and the bytes it carries in a simulated run, never overflow.
const MaxBandwidth = 1e15

// ParseBandwidth parses a rate such as "256kbps", "1Mbps", "10 Mbit/s" or
// "1Gbps". A unit is required: a bare number is ambiguous between bits and
// bytes per second. The prefix's case is free (mbps, Mbps); "MBps", a
// capital B, is bytes per second, eight times the rate, and is refused
// rather than read as Mbps.
func ParseBandwidth(s string) (Bandwidth, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if i := strings.Index(unit, "B"); i >= 0 && (strings.HasPrefix(unit[i+1:], "ps") || strings.HasPrefix(unit[i+1:], "/s")) {
		return 0, fmt.Errorf("%q: %q is bytes per second; rates are in bits per second (bps, kbps, Mbps, Gbps: %g %s is %g %sbit/s)", s, unit, v, unit, 8*v, unit[:i])
	}
	m, ok := rateUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("%q: unknown rate unit %q (accepted: bps, kbps, Mbps, Gbps, or bit/s forms)", s, unit)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q: a rate cannot be negative", s)
	}
	if v*m > MaxBandwidth {
		return 0, fmt.Errorf("%q: rate too large (at most 1000 Tbps)", s)
	}
	return Bandwidth(math.Round(v * m)), nil
}

// ParseDuration parses a Go-style duration ("500ms", "1.5s", "2m"); a bare
// "0" is accepted. Negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (examples: 500ms, 1.5s, 2m)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q: a duration cannot be negative", s)
	}
	return d, nil
}
