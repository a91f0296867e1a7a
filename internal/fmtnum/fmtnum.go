// Package fmtnum formats numbers for CSV and JSON-like outputs without
// float noise: a sum of a few thousand terms, or 0.1 stepped three times,
// gives 3.3138500000000004 or 0.30000000000000004, whose last digits are
// rounding error, not data.
package fmtnum

import (
	"math"
	"strconv"
)

// Digits is the precision kept: ten significant digits, far beyond what
// any simulated measurement means, and far above the ~1e-15 relative
// error that accumulates in float64 sums.
const Digits = 10

// Short rounds v to Digits significant digits once and returns the
// shortest decimal text that reads back as that rounded value:
// 3.3138500000000004 -> "3.31385", 1e-7 -> "1e-07". Whole numbers below
// 2^53 are written exactly (42, 123456789012345). NaN and
// infinities are written as strconv does.
func Short(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		// Counts (bytes, packets) are exact: never round them.
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', Digits, 64), 64)
	if err != nil {
		r = v
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// JSON returns &v for encoding/json, or nil (null) for NaN and
// infinities, which JSON cannot hold and encoding/json refuses.
func JSON(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
