package plot

import (
	"fmt"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
)

// targetTicks is how many labelled ticks a linear axis aims for. gonum's
// default aims for three, which leaves time axes hard to read off.
const targetTicks = 6

// linearTicks places labelled ticks at 1, 2, 2.5 or 5 times a power of ten,
// with unlabelled minor ticks between them. With hideLabels every tick is
// minor, which is how stacked panels share one labelled time axis.
type linearTicks struct {
	hideLabels bool
}

// Ticks implements gplot.Ticker.
func (t linearTicks) Ticks(lo, hi float64) []gplot.Tick {
	ticks := niceTicks(lo, hi, targetTicks)
	if t.hideLabels {
		for i := range ticks {
			ticks[i].Label = ""
		}
	}
	return ticks
}

// niceStep returns the step of 1, 2, 2.5 or 5 × 10^k whose labelled ticks
// over [lo, hi] number closest to n (more ticks win a tie, up to 10), and
// the mantissa chosen.
func niceStep(lo, hi float64, n int) (step, mantissa float64) {
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	bestDist := math.Inf(1)
	for _, m10 := range []float64{0.1, 1, 10} {
		for _, m := range []float64{1, 2, 2.5, 5} {
			s := m * m10 * mag
			count := math.Floor(hi/s+1e-9) - math.Ceil(lo/s-1e-9) + 1
			if count < 2 || count > 10 {
				continue
			}
			dist := math.Abs(count - float64(n))
			if dist < bestDist || (dist == bestDist && s < step) {
				bestDist, step, mantissa = dist, s, m
			}
		}
	}
	if step == 0 {
		// No candidate gives 2–10 ticks (the span is tiny against its
		// values); fall back to the smallest nice step above raw.
		for _, m := range []float64{1, 2, 2.5, 5, 10} {
			if m*mag >= raw*(1-1e-9) {
				return m * mag, m
			}
		}
	}
	return step, mantissa
}

func niceTicks(lo, hi float64, n int) []gplot.Tick {
	if !isFinite(lo) || !isFinite(hi) || hi <= lo {
		return nil
	}
	maxAbs := math.Max(math.Abs(lo), math.Abs(hi))
	// A span lost in the float resolution of its values cannot be divided
	// into distinct ticks; label the ends with full precision instead.
	if (hi-lo)/math.Max(maxAbs, math.SmallestNonzeroFloat64) < 1e-9 {
		return []gplot.Tick{
			{Value: lo, Label: strconv.FormatFloat(lo, 'g', -1, 64)},
			{Value: hi, Label: strconv.FormatFloat(hi, 'g', -1, 64)},
		}
	}
	step, mant := niceStep(lo, hi, n)
	format := tickFormatter(step, mant, maxAbs)
	minor := step / 5
	if mant == 2 {
		minor = step / 4
	}
	first := math.Ceil(lo/step - 1e-9)
	var ticks []gplot.Tick
	for k := first; k*step <= hi+step*1e-9 && len(ticks) < 50; k++ {
		v := k * step
		ticks = append(ticks, gplot.Tick{Value: v, Label: format(v)})
	}
	for k := math.Ceil(lo / minor); k*minor <= hi && len(ticks) < 500; k++ {
		v := k * minor
		if r := math.Mod(math.Abs(v), step); r < minor/2 || step-r < minor/2 {
			continue // a labelled tick is already here
		}
		ticks = append(ticks, gplot.Tick{Value: v})
	}
	return ticks
}

// tickFormatter prints tick values with just enough digits to tell
// neighbouring ticks apart.
func tickFormatter(step, mant, maxAbs float64) func(float64) string {
	if maxAbs >= 1e6 || step < 1e-4 {
		digits := int(math.Ceil(math.Log10(maxAbs/step))) + 1
		digits = min(max(digits, 1), 15)
		return func(v float64) string {
			if math.Abs(v) < step*1e-6 {
				return "0"
			}
			return strconv.FormatFloat(v, 'g', digits, 64)
		}
	}
	dec := -int(math.Floor(math.Log10(step) + 1e-9))
	if mant == 2.5 {
		dec++ // 2.5 × 10^k needs one digit more than 10^k
	}
	dec = max(dec, 0)
	return func(v float64) string {
		s := strconv.FormatFloat(v, 'f', dec, 64)
		if z, err := strconv.ParseFloat(s, 64); err == nil && z == 0 {
			return strconv.FormatFloat(0, 'f', dec, 64) // no "-0"
		}
		return s
	}
}

// logTicks labels powers of ten on a log axis, and 2× and 5× multiples
// too when fewer than three decades are in range.
type logTicks struct {
	hideLabels bool
}

// Ticks implements gplot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(lo > 0) || !isFinite(hi) || hi <= lo {
		return nil
	}
	kLo := int(math.Floor(math.Log10(lo)))
	kHi := int(math.Ceil(math.Log10(hi)))
	if kHi-kLo > 300 {
		return nil
	}
	in := func(v float64) bool { return v >= lo*(1-1e-12) && v <= hi*(1+1e-12) }
	decades := 0
	for k := kLo; k <= kHi; k++ {
		if in(pow10(1, k)) {
			decades++
		}
	}
	labelled := map[int]bool{1: true}
	if decades < 3 {
		labelled[2], labelled[5] = true, true
	}
	var ticks []gplot.Tick
	nLabels := 0
	for k := kLo; k <= kHi; k++ {
		for m := 1; m <= 9; m++ {
			v := pow10(m, k)
			if !in(v) {
				continue
			}
			tk := gplot.Tick{Value: v}
			if labelled[m] && !t.hideLabels {
				tk.Label = strconv.FormatFloat(v, 'g', -1, 64)
				nLabels++
			}
			ticks = append(ticks, tk)
		}
	}
	if nLabels < 2 && !t.hideLabels {
		// Less than a factor of ~2.5 of range: linear ticks read better.
		return niceTicks(lo, hi, targetTicks)
	}
	return ticks
}

// pow10 returns m×10^k exactly as written in decimal, avoiding the drift of
// repeated multiplication.
func pow10(m, k int) float64 {
	v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, k), 64)
	return v
}
