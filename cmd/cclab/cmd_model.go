package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cclab/cclab/analysis/model"
	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/core/units"
)

func init() {
	register(&command{
		name:    "model",
		summary: "print or plot the analytical TCP and TCP/NC throughput models",
		run:     runModel,
	})
}

// modelNameList lists the models in output order.
var modelNameList = []string{"mathis", "padhye", "padhye-approx", "tcpnc"}

// modelRChoice is one redundancy factor: a value, or "opt" for 1/(1-p).
type modelRChoice struct {
	value float64
	opt   bool
}

func (r modelRChoice) label() string {
	if r.opt {
		return "1/(1-p)"
	}
	return strconv.FormatFloat(r.value, 'g', -1, 64)
}

// resolve returns the redundancy to use at loss p.
func (r modelRChoice) resolve(p float64) (float64, error) {
	if r.opt {
		return model.OptimalRedundancy(p)
	}
	return r.value, nil
}

// modelPoint is one model evaluated at one parameter set.
type modelPoint struct {
	Model string  `json:"model"`
	P     float64 `json:"p"`
	// R is the redundancy factor (tcpnc only).
	R float64 `json:"R,omitempty"`
	// RLabel is the --R choice this point belongs to ("1.2", "1/(1-p)").
	RLabel        string      `json:"R_choice,omitempty"`
	GoodputBps    float64     `json:"goodput_bps"`
	GoodputPps    float64     `json:"goodput_pps"`
	SendPps       float64     `json:"send_pps"`
	Window        float64     `json:"window_packets"`
	EffectiveLoss float64     `json:"effective_loss"`
	Limit         model.Limit `json:"limit"`
}

type modelParamsJSON struct {
	RTTSeconds      float64 `json:"rtt_s"`
	RTOSeconds      float64 `json:"rto_s"`
	MSSBytes        int64   `json:"mss_bytes"`
	WmaxPackets     float64 `json:"wmax_packets"`
	B               float64 `json:"b"`
	CapacityBps     int64   `json:"capacity_bps"`
	DurationSeconds float64 `json:"duration_s"`
}

func runModel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("model", stderr)
	rttFlag := fs.String("rtt", "100ms", "round-trip time (e.g. 100ms)")
	rtoFlag := fs.String("rto", "", "retransmission timeout T0: the first timeout of a sequence, before back-off (Padhye); empty = max(1s, RTT)")
	lossFlag := fs.String("loss", "0.001:0.2:20", "loss probability p in [0, 1): a value, a list (0.01,0.05) or a sweep FROM:TO:POINTS")
	rFlag := fs.String("R", "opt", "TCP/NC redundancy R >= 1: a value, a list, a sweep FROM:TO:POINTS, or opt for 1/(1-p)")
	mssFlag := fs.String("mss", "1448B", "segment size (e.g. 1448B, 1KB)")
	wmax := fs.Float64("wmax", 50, "receiver window cap in packets (0 = none)")
	b := fs.Float64("b", 1, "packets acknowledged per ACK (2 with delayed ACKs)")
	capFlag := fs.String("capacity", "", "per-flow bottleneck rate cap (e.g. 0.5Mbps); empty = none")
	durFlag := fs.String("duration", "0", "TCP/NC: average over a connection of this length from a window of 1 (0 = steady state)")
	modelsFlag := fs.String("models", strings.Join(modelNameList, ","), "models to evaluate: "+strings.Join(modelNameList, ", "))
	jsonOut := fs.Bool("json", false, "print JSON instead of a table")
	plotFile := fs.String("plot", "", "also plot goodput to FILE (.png, .svg or .pdf)")
	logx := fs.Bool("logx", false, "log-spaced sweeps and a logarithmic x axis")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cclab model [flags]\n\nEvaluates the Mathis, Padhye (full and approximate) and TCP/NC (Kim, Médard, Barros)\nmodels; see docs/models.md. Flags:")
		fs.PrintDefaults()
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (all inputs are flags)", pos[0])
	}

	rtt, err := units.ParseDuration(*rttFlag)
	if err != nil || rtt <= 0 {
		return usagef("--rtt must be a positive duration such as 100ms, got %q", *rttFlag)
	}
	rto := model.DefaultRTO(rtt)
	if *rtoFlag != "" {
		rto, err = units.ParseDuration(*rtoFlag)
		if err != nil || rto <= 0 {
			return usagef("--rto must be a positive duration such as 1s, got %q", *rtoFlag)
		}
	}
	mss, err := units.ParseBytes(*mssFlag)
	if err != nil || mss <= 0 {
		return usagef("--mss must be a positive size such as 1448B, got %q", *mssFlag)
	}
	var capacity units.Bandwidth
	if *capFlag != "" {
		capacity, err = units.ParseBandwidth(*capFlag)
		if err != nil || capacity <= 0 {
			return usagef("--capacity must be a positive rate such as 0.5Mbps, got %q", *capFlag)
		}
	}
	duration, err := units.ParseDuration(*durFlag)
	if err != nil {
		return usagef("--duration must be a duration such as 1000s, got %q", *durFlag)
	}
	if math.IsNaN(*wmax) || math.IsInf(*wmax, 0) || *wmax < 0 || (*wmax > 0 && *wmax < 1) {
		return usagef("--wmax must be 0 (no cap) or at least 1 packet, got %g", *wmax)
	}
	if math.IsNaN(*b) || math.IsInf(*b, 0) || *b < 1 {
		return usagef("--b must be at least 1 packet per ACK, got %g", *b)
	}
	losses, err := parseModelValues("--loss", *lossFlag, *logx)
	if err != nil {
		return err
	}
	for _, p := range losses {
		if p < 0 || p >= 1 {
			return usagef("--loss values must be in [0, 1), got %g", p)
		}
	}
	models, err := parseModelList(*modelsFlag)
	if err != nil {
		return err
	}
	var rs []modelRChoice
	if slices.Contains(models, "tcpnc") {
		rs, err = parseModelR(*rFlag, *logx)
		if err != nil {
			return err
		}
	}
	var format string
	if *plotFile != "" {
		format = strings.TrimPrefix(strings.ToLower(filepath.Ext(*plotFile)), ".")
		if format != "png" && format != "svg" && format != "pdf" {
			return usagef("--plot file must end in .png, .svg or .pdf, got %q", *plotFile)
		}
	}

	tp := model.TCPParams{RTT: rtt, RTO: rto, MSS: mss, Wmax: *wmax, B: *b, Capacity: capacity}
	points, err := evaluateModels(tp, duration, losses, rs, models)
	if err != nil {
		return err
	}
	if *jsonOut {
		out := struct {
			Params modelParamsJSON `json:"params"`
			Points []modelPoint    `json:"points"`
		}{modelParamsJSON{rtt.Seconds(), rto.Seconds(), int64(mss), *wmax, *b, int64(capacity), duration.Seconds()}, points}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		if err := writeModelTable(stdout, tp, duration, losses, rs, models, points); err != nil {
			return err
		}
	}
	if *plotFile != "" {
		if err := plotModels(*plotFile, tp, losses, rs, points, *logx); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s\n", *plotFile)
	}
	return nil
}

// parseModelValues parses a value, a comma-separated list, or a sweep
// FROM:TO:POINTS (linear, or geometric with logSweep).
func parseModelValues(flagName, spec string, logSweep bool) ([]float64, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, usagef("%s is empty", flagName)
	}
	if strings.Contains(spec, ":") {
		parts := strings.Split(spec, ":")
		if len(parts) != 3 {
			return nil, usagef("%s sweep must be FROM:TO:POINTS, got %q", flagName, spec)
		}
		from, err1 := parseModelFloat(parts[0])
		to, err2 := parseModelFloat(parts[1])
		n, err3 := strconv.Atoi(strings.TrimSpace(parts[2]))
		if err1 != nil || err2 != nil || err3 != nil || n < 2 || n > 100000 {
			return nil, usagef("%s sweep must be FROM:TO:POINTS with numbers FROM, TO and an integer POINTS in [2, 100000], got %q", flagName, spec)
		}
		if to <= from {
			return nil, usagef("%s sweep must go upwards (FROM < TO), got %q", flagName, spec)
		}
		if logSweep && from <= 0 {
			return nil, usagef("%s: a log-spaced sweep (--logx) needs FROM > 0, got %q", flagName, spec)
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
		v, err := parseModelFloat(s)
		if err != nil {
			return nil, usagef("%s: %q is not a number", flagName, strings.TrimSpace(s))
		}
		vs = append(vs, v)
	}
	return vs, nil
}

func parseModelFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("not finite")
	}
	return v, nil
}

// parseModelR parses --R: like parseModelValues, and list entries may be "opt".
func parseModelR(spec string, logSweep bool) ([]modelRChoice, error) {
	var rs []modelRChoice
	if strings.Contains(spec, ":") {
		vs, err := parseModelValues("--R", spec, logSweep)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			rs = append(rs, modelRChoice{value: v})
		}
	} else {
		for _, s := range strings.Split(spec, ",") {
			s = strings.TrimSpace(s)
			if strings.EqualFold(s, "opt") {
				rs = append(rs, modelRChoice{opt: true})
				continue
			}
			v, err := parseModelFloat(s)
			if err != nil {
				return nil, usagef("--R: %q is neither a number nor opt", s)
			}
			rs = append(rs, modelRChoice{value: v})
		}
	}
	for _, r := range rs {
		if !r.opt && (r.value < 1 || r.value > 100) {
			return nil, usagef("--R values must be in [1, 100] coded packets per packet, got %g", r.value)
		}
	}
	return rs, nil
}

func parseModelList(spec string) ([]string, error) {
	var ms []string
	for _, s := range strings.Split(spec, ",") {
		s = strings.ToLower(strings.TrimSpace(s))
		if !slices.Contains(modelNameList, s) {
			return nil, usagef("--models: unknown model %q (known: %s)", s, strings.Join(modelNameList, ", "))
		}
		if !slices.Contains(ms, s) {
			ms = append(ms, s)
		}
	}
	// Keep the canonical order whatever the flag's order.
	slices.SortFunc(ms, func(a, b string) int { return slices.Index(modelNameList, a) - slices.Index(modelNameList, b) })
	return ms, nil
}

// evaluateModels runs every selected model at every loss (and every R for
// TCP/NC). Model domain errors are usage errors: they come from the flags.
func evaluateModels(tp model.TCPParams, duration time.Duration, losses []float64, rs []modelRChoice, models []string) ([]modelPoint, error) {
	var pts []modelPoint
	for _, p := range losses {
		tp.P = p
		for _, name := range models {
			var f func(model.TCPParams) (model.Estimate, error)
			switch name {
			case "mathis":
				f = model.Mathis
			case "padhye":
				f = model.Padhye
			case "padhye-approx":
				f = model.PadhyeApprox
			case "tcpnc":
				for _, rc := range rs {
					r, err := rc.resolve(p)
					if err != nil {
						return nil, usagef("tcpnc at p=%g: %v", p, err)
					}
					e, err := model.TCPNC(model.NCParams{TCPParams: tp, R: r, Duration: duration})
					if err != nil {
						return nil, usagef("tcpnc at p=%g, R=%g: %v%s", p, r, err, modelFlagHint(err))
					}
					pt := modelPointFor(name, p, e)
					pt.R, pt.RLabel = r, rc.label()
					pts = append(pts, pt)
				}
				continue
			}
			e, err := f(tp)
			if err != nil {
				return nil, usagef("%s at p=%g: %v%s", name, p, err, modelFlagHint(err))
			}
			pts = append(pts, modelPointFor(name, p, e))
		}
	}
	return pts, nil
}

// modelFlagHint names the flags that fix an unbounded loss-free model.
func modelFlagHint(err error) string {
	var pe *model.ParamError
	if errors.As(err, &pe) && (pe.Param == "Wmax" || pe.Param == "P") {
		return " (use --wmax or --capacity, or a loss above 0)"
	}
	return ""
}

func modelPointFor(name string, p float64, e model.Estimate) modelPoint {
	return modelPoint{
		Model: name, P: p,
		GoodputBps: e.GoodputBitsPerSecond(), GoodputPps: e.Goodput, SendPps: e.SendRate,
		Window: e.Window, EffectiveLoss: e.EffectiveLoss, Limit: e.Limit,
	}
}

func writeModelTable(w io.Writer, tp model.TCPParams, duration time.Duration, losses []float64, rs []modelRChoice, models []string, pts []modelPoint) error {
	wmax, capacity, dur := "none", "none", "steady state"
	if tp.Wmax > 0 {
		wmax = strconv.FormatFloat(tp.Wmax, 'g', -1, 64) + " packets"
	}
	if tp.Capacity > 0 {
		capacity = tp.Capacity.String()
	}
	if duration > 0 {
		dur = duration.String()
	}
	fmt.Fprintf(w, "# RTT %v, RTO %v, MSS %v, Wmax %s, b %g, capacity %s, TCP/NC %s\n", tp.RTT, tp.RTO, tp.MSS, wmax, tp.B, capacity, dur)
	hasNC := slices.Contains(models, "tcpnc")
	if hasNC {
		fmt.Fprintln(w, "# goodput in Mbit/s; p_eff: loss TCP sees over TCP/NC; limit: what bounds TCP/NC")
	} else {
		fmt.Fprintln(w, "# goodput in Mbit/s")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"p"}
	for _, m := range models {
		if m != "tcpnc" {
			head = append(head, m)
		}
	}
	if hasNC {
		head = append(head, "R", "tcpnc", "p_eff", "limit")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")

	// Index the points: TCP models by (model, p), TCP/NC by (p, R choice).
	type key struct {
		model string
		p     float64
		r     string
	}
	idx := make(map[key]modelPoint, len(pts))
	for _, pt := range pts {
		idx[key{pt.Model, pt.P, pt.RLabel}] = pt
	}
	mbps := func(v float64) string { return strconv.FormatFloat(v/1e6, 'f', 4, 64) }
	rows := []modelRChoice{{}}
	if hasNC {
		rows = rs
	}
	for _, p := range losses {
		for _, rc := range rows {
			cells := []string{strconv.FormatFloat(p, 'g', 4, 64)}
			for _, m := range models {
				if m != "tcpnc" {
					cells = append(cells, mbps(idx[key{m, p, ""}].GoodputBps))
				}
			}
			if hasNC {
				pt := idx[key{"tcpnc", p, rc.label()}]
				cells = append(cells, strconv.FormatFloat(pt.R, 'f', 4, 64), mbps(pt.GoodputBps),
					strconv.FormatFloat(pt.EffectiveLoss, 'g', 3, 64), pt.Limit.String())
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
	}
	return tw.Flush()
}

// plotModels draws goodput against p (several losses) or against R (one
// loss, several redundancy factors).
func plotModels(file string, tp model.TCPParams, losses []float64, rs []modelRChoice, pts []modelPoint, logx bool) error {
	byR := len(losses) == 1 && len(rs) > 1
	// The figure style every cclab plot uses (analysis/plot): same font,
	// ticks, colours and legend.
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
				return usagef("--logx needs positive x values; got p = %g", pt.P)
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
