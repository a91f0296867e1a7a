package model

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/analysis/plot"
)

// Names lists the models Evaluate knows, in output order.
var Names = []string{"mathis", "padhye", "padhye-approx", "tcpnc"}

// Redundancy is one TCP/NC redundancy factor: a value, or Opt for
// 1/(1-p) at each loss.
type Redundancy struct {
	Value float64
	Opt   bool
}

// Label is the choice as written on the command line: the value, or
// 1/(1-p).
func (r Redundancy) Label() string {
	if r.Opt {
		return "1/(1-p)"
	}
	return strconv.FormatFloat(r.Value, 'g', -1, 64)
}

// Resolve returns the redundancy to use at loss p.
func (r Redundancy) Resolve(p float64) (float64, error) {
	if r.Opt {
		return OptimalRedundancy(p)
	}
	return r.Value, nil
}

// Point is one model evaluated at one parameter set.
type Point struct {
	Model string  `json:"model"`
	P     float64 `json:"p"`
	// R is the redundancy factor (tcpnc only).
	R float64 `json:"R,omitempty"`
	// RLabel is the --R choice this point belongs to ("1.2", "1/(1-p)").
	RLabel        string  `json:"R_choice,omitempty"`
	GoodputBps    float64 `json:"goodput_bps"`
	GoodputPps    float64 `json:"goodput_pps"`
	SendPps       float64 `json:"send_pps"`
	Window        float64 `json:"window_packets"`
	EffectiveLoss float64 `json:"effective_loss"`
	Limit         Limit   `json:"limit"`
}

// ParseValues parses a value, a comma-separated list, or a sweep
// FROM:TO:POINTS (linear, or geometric with logSweep).
func ParseValues(spec string, logSweep bool) ([]float64, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, errors.New("is empty")
	}
	if strings.Contains(spec, ":") {
		parts := strings.Split(spec, ":")
		if len(parts) != 3 {
			return nil, fmt.Errorf("sweep must be FROM:TO:POINTS, got %q", spec)
		}
		from, err1 := parseFloat(parts[0])
		to, err2 := parseFloat(parts[1])
		n, err3 := strconv.Atoi(strings.TrimSpace(parts[2]))
		if err1 != nil || err2 != nil || err3 != nil || n < 2 || n > 100000 {
			return nil, fmt.Errorf("sweep must be FROM:TO:POINTS with numbers FROM, TO and an integer POINTS in [2, 100000], got %q", spec)
		}
		if to <= from {
			return nil, fmt.Errorf("sweep must go upwards (FROM < TO), got %q", spec)
		}
		if logSweep && from <= 0 {
			return nil, fmt.Errorf("a log-spaced sweep needs FROM > 0, got %q", spec)
		}
		// A span beyond float64's range would make every point but the
		// ends infinite or NaN.
		if math.IsInf(to-from, 0) || (logSweep && math.IsInf(to/from, 0)) {
			return nil, fmt.Errorf("sweep %q spans more than a float64 can hold", spec)
		}
		vs := make([]float64, n)
		for i := range vs {
			f := float64(i) / float64(n-1)
			if logSweep {
				vs[i] = from * math.Pow(to/from, f)
			} else {
				vs[i] = from + (to-from)*f
			}
		}
		vs[n-1] = to // exact end point
		return vs, nil
	}
	var vs []float64
	for _, s := range strings.Split(spec, ",") {
		v, err := parseFloat(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", strings.TrimSpace(s))
		}
		vs = append(vs, v)
	}
	return vs, nil
}

func parseFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("not finite")
	}
	return v, nil
}

// ParseRedundancies parses redundancy factors: like ParseValues, and
// list entries may be "opt".
func ParseRedundancies(spec string, logSweep bool) ([]Redundancy, error) {
	var rs []Redundancy
	if strings.Contains(spec, ":") {
		vs, err := ParseValues(spec, logSweep)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			rs = append(rs, Redundancy{Value: v})
		}
	} else {
		for _, s := range strings.Split(spec, ",") {
			s = strings.TrimSpace(s)
			if strings.EqualFold(s, "opt") {
				rs = append(rs, Redundancy{Opt: true})
				continue
			}
			v, err := parseFloat(s)
			if err != nil {
				return nil, fmt.Errorf("%q is neither a number nor opt", s)
			}
			rs = append(rs, Redundancy{Value: v})
		}
	}
	for _, r := range rs {
		if !r.Opt && (r.Value < 1 || r.Value > 100) {
			return nil, fmt.Errorf("values must be in [1, 100] coded packets per packet, got %g", r.Value)
		}
	}
	return rs, nil
}

// ParseNames parses a comma-separated list of model names, returned in
// the order of Names.
func ParseNames(spec string) ([]string, error) {
	var ms []string
	for _, s := range strings.Split(spec, ",") {
		s = strings.ToLower(strings.TrimSpace(s))
		if !slices.Contains(Names, s) {
			return nil, fmt.Errorf("unknown model %q (known: %s)", s, strings.Join(Names, ", "))
		}
		if !slices.Contains(ms, s) {
			ms = append(ms, s)
		}
	}
	// Keep the canonical order whatever the flag's order.
	slices.SortFunc(ms, func(a, b string) int { return slices.Index(Names, a) - slices.Index(Names, b) })
	return ms, nil
}

// Evaluate runs every named model at every loss (and every redundancy for
// TCP/NC). Errors wrap the model's *ParamError.
func Evaluate(tp TCPParams, duration time.Duration, losses []float64, rs []Redundancy, models []string) ([]Point, error) {
	var pts []Point
	for _, p := range losses {
		tp.P = p
		for _, name := range models {
			var f func(TCPParams) (Estimate, error)
			switch name {
			case "mathis":
				f = Mathis
			case "padhye":
				f = Padhye
			case "padhye-approx":
				f = PadhyeApprox
			case "tcpnc":
				for _, rc := range rs {
					r, err := rc.Resolve(p)
					if err != nil {
						return nil, fmt.Errorf("tcpnc at p=%g: %w", p, err)
					}
					e, err := TCPNC(NCParams{TCPParams: tp, R: r, Duration: duration})
					if err != nil {
						return nil, fmt.Errorf("tcpnc at p=%g, R=%g: %w", p, r, err)
					}
					pt := pointFor(name, p, e)
					pt.R, pt.RLabel = r, rc.Label()
					pts = append(pts, pt)
				}
				continue
			}
			e, err := f(tp)
			if err != nil {
				return nil, fmt.Errorf("%s at p=%g: %w", name, p, err)
			}
			pts = append(pts, pointFor(name, p, e))
		}
	}
	return pts, nil
}

func pointFor(name string, p float64, e Estimate) Point {
	return Point{
		Model: name, P: p,
		GoodputBps: e.GoodputBitsPerSecond(), GoodputPps: e.Goodput, SendPps: e.SendRate,
		Window: e.Window, EffectiveLoss: e.EffectiveLoss, Limit: e.Limit,
	}
}

// Plot draws goodput against p (several losses) or against R (one
// loss, several redundancy factors), in the figure style every cclab plot
// uses (analysis/plot): same font, ticks, colours and legend.
func Plot(file string, tp TCPParams, losses []float64, rs []Redundancy, pts []Point, logx bool) error {
	byR := len(losses) == 1 && len(rs) > 1
	fig := plot.TimeSeries{
		Title:   fmt.Sprintf("Throughput models, RTT %v, MSS %v", tp.RTT, tp.MSS),
		X:       plot.Axis{Label: "loss probability p", Log: logx},
		Y:       plot.Axis{Label: "goodput (Mbit/s)", IncludeZero: true},
		Markers: true,
	}
	if byR {
		fig.X.Label = "redundancy factor R (coded packets per packet)"
		fig.Title += fmt.Sprintf(", p = %g", losses[0])
	}
	if logx {
		for _, pt := range pts {
			if x := pt.P; (!byR && x <= 0) || (byR && pt.Model == "tcpnc" && pt.R <= 0) {
				return fmt.Errorf("a logarithmic x axis needs positive x values; got p = %g", pt.P)
			}
		}
	}
	// Series in first-appearance order, points sorted by x.
	var names []string
	series := map[string][][2]float64{}
	add := func(name string, x, y float64) {
		if _, ok := series[name]; !ok {
			names = append(names, name)
		}
		series[name] = append(series[name], [2]float64{x, y})
	}
	var rMin, rMax float64
	if byR {
		rMin, rMax = math.Inf(1), math.Inf(-1)
		for _, pt := range pts {
			if pt.Model == "tcpnc" {
				rMin, rMax = math.Min(rMin, pt.R), math.Max(rMax, pt.R)
			}
		}
	}
	for _, pt := range pts {
		y := pt.GoodputBps / 1e6
		switch {
		case pt.Model == "tcpnc" && byR:
			add("tcpnc", pt.R, y)
		case pt.Model == "tcpnc":
			add("tcpnc R="+pt.RLabel, pt.P, y)
		case byR:
			// A TCP model does not depend on R: a flat reference line.
			add(pt.Model, rMin, y)
			add(pt.Model, rMax, y)
		default:
			add(pt.Model, pt.P, y)
		}
	}
	for _, name := range names {
		xys := series[name]
		slices.SortFunc(xys, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
		sr := plot.Series{Name: name}
		for _, xy := range xys {
			sr.X, sr.Y = append(sr.X, xy[0]), append(sr.Y, xy[1])
		}
		fig.Series = append(fig.Series, sr)
	}
	if err := fig.Save(file); err != nil {
		return fmt.Errorf("writing plot: %w", err)
	}
	return nil
}
