package report

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// sigDigits is how many significant digits table numbers show: enough to
// compare schemes, few enough to read.
const sigDigits = 4

// MeanCI is a table cell holding a mean and its confidence-interval
// half-width; it prints as "12.35 ± 0.41".
type MeanCI struct {
	Mean, CI float64
}

// String formats the interval with two significant digits and the mean to
// the same decimal place, so no digit is shown that the interval makes
// meaningless.
func (m MeanCI) String() string {
	if !isFinite(m.Mean) {
		return FormatFloat(m.Mean)
	}
	if !isFinite(m.CI) || m.CI <= 0 {
		return FormatFloat(m.Mean)
	}
	dec := 1 - int(math.Floor(math.Log10(m.CI)))
	if dec < 0 || dec > 12 || math.Abs(m.Mean) >= 1e9 {
		return FormatFloat(m.Mean) + " ± " + FormatFloat(m.CI)
	}
	return strconv.FormatFloat(m.Mean, 'f', dec, 64) + " ± " + strconv.FormatFloat(m.CI, 'f', dec, 64)
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// FormatFloat prints v with four significant digits (all integer digits
// from 1000 up), in plain decimal notation from 0.001 up to 1e9 and in
// exponent notation outside that. NaN
// prints as "n/a" and infinities as "∞" and "-∞".
func FormatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	case v == 0:
		return "0"
	}
	a := math.Abs(v)
	if a < 1e-3 || a >= 1e9 {
		return strconv.FormatFloat(v, 'e', sigDigits-1, 64)
	}
	if a >= 1000 {
		// Integer digits are never false precision; rounding 1234567 to
		// "1235000" would be.
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	// Round first: 9.99996 must print as "10.00", not "9.9996" or "10.000".
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', sigDigits, 64), 64)
	dec := max(sigDigits-1-int(math.Floor(math.Log10(math.Abs(r)))), 0)
	return strconv.FormatFloat(r, 'f', dec, 64)
}

// FormatCell turns a table value into its text and says whether it is a
// number (numbers are right-aligned). Floats use FormatFloat, integers
// print in full, durations and other fmt.Stringers use their String method,
// and nil is an empty cell.
func FormatCell(v any) (text string, numeric bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, false
	case float64:
		return FormatFloat(x), true
	case float32:
		return FormatFloat(float64(x)), true
	case int:
		return strconv.Itoa(x), true
	case int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		return fmt.Sprint(x), true
	case MeanCI:
		return x.String(), true
	case time.Duration:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), false
	case fmt.Stringer:
		return x.String(), false
	case error:
		return x.Error(), false
	default:
		return fmt.Sprint(x), false
	}
}
