package main

import (
	"cmp"
	"context"
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
	"github.com/cclab/cclab/core/units"
)

func init() {
	register(&command{
		name:    "model",
		summary: "print or plot the analytical TCP and TCP/NC throughput models",
		help:    "Evaluates the Mathis, Padhye (full and approximate) and TCP/NC (Kim, Médard, Barros) models; see docs/models.md.",
		run:     runModel,
	})
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

// modelOutput is cclab model --json's output.
type modelOutput struct {
	Params modelParamsJSON `json:"params"`
	Points []model.Point   `json:"points"`
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
	modelsFlag := fs.String("models", strings.Join(model.Names, ","), "models to evaluate: "+strings.Join(model.Names, ", "))
	jsonOut := fs.Bool("json", false, "print JSON instead of a table")
	plotFile := fs.String("plot", "", "also plot goodput to FILE (.png, .svg or .pdf)")
	logx := fs.Bool("logx", false, "log-spaced sweeps and a logarithmic x axis")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (all inputs are flags)", pos[0])
	}

	tp, duration, err := modelParams(*rttFlag, *rtoFlag, *mssFlag, *capFlag, *durFlag, *wmax, *b)
	if err != nil {
		return err
	}
	losses, err := model.ParseValues(*lossFlag, *logx)
	if err != nil {
		return usagef("--loss %v", err)
	}
	for _, p := range losses {
		if p < 0 || p >= 1 {
			return usagef("--loss values must be in [0, 1), got %g", p)
		}
	}
	models, err := model.ParseNames(*modelsFlag)
	if err != nil {
		return usagef("--models: %v", err)
	}
	var rs []model.Redundancy
	if slices.Contains(models, "tcpnc") {
		rs, err = model.ParseRedundancies(*rFlag, *logx)
		if err != nil {
			return usagef("--R %v", err)
		}
	}
	var format string
	if *plotFile != "" {
		format = strings.TrimPrefix(strings.ToLower(filepath.Ext(*plotFile)), ".")
		if format != "png" && format != "svg" && format != "pdf" {
			return usagef("--plot file must end in .png, .svg or .pdf, got %q", *plotFile)
		}
	}

	points, err := model.Evaluate(tp, duration, losses, rs, models)
	if err != nil {
		return usagef("%v%s", err, modelFlagHint(err))
	}
	var werr error
	if err := emit(stdout, *jsonOut, modelOutput{modelParamsJSON{tp.RTT.Seconds(), tp.RTO.Seconds(), int64(tp.MSS), tp.Wmax, tp.B, int64(tp.Capacity), duration.Seconds()}, points},
		func(w io.Writer) { werr = writeModelTable(w, tp, duration, losses, rs, models, points) }); err != nil || werr != nil {
		return cmp.Or(err, werr)
	}
	if *plotFile != "" {
		if err := model.Plot(*plotFile, tp, losses, rs, points, *logx); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		fmt.Fprintf(stderr, "wrote %s\n", *plotFile)
	}
	return nil
}

// modelParams parses and checks the model's connection flags.
func modelParams(rttFlag, rtoFlag, mssFlag, capFlag, durFlag string, wmax, b float64) (model.TCPParams, time.Duration, error) {
	rtt, err := units.ParseDuration(rttFlag)
	if err != nil || rtt <= 0 {
		return model.TCPParams{}, 0, usagef("--rtt must be a positive duration such as 100ms, got %q", rttFlag)
	}
	rto := model.DefaultRTO(rtt)
	if rtoFlag != "" {
		rto, err = units.ParseDuration(rtoFlag)
		if err != nil || rto <= 0 {
			return model.TCPParams{}, 0, usagef("--rto must be a positive duration such as 1s, got %q", rtoFlag)
		}
	}
	mss, err := units.ParseBytes(mssFlag)
	if err != nil || mss <= 0 {
		return model.TCPParams{}, 0, usagef("--mss must be a positive size such as 1448B, got %q", mssFlag)
	}
	var capacity units.Bandwidth
	if capFlag != "" {
		capacity, err = units.ParseBandwidth(capFlag)
		if err != nil || capacity <= 0 {
			return model.TCPParams{}, 0, usagef("--capacity must be a positive rate such as 0.5Mbps, got %q", capFlag)
		}
	}
	duration, err := units.ParseDuration(durFlag)
	if err != nil {
		return model.TCPParams{}, 0, usagef("--duration must be a duration such as 1000s, got %q", durFlag)
	}
	if math.IsNaN(wmax) || math.IsInf(wmax, 0) || wmax < 0 || (wmax > 0 && wmax < 1) {
		return model.TCPParams{}, 0, usagef("--wmax must be 0 (no cap) or at least 1 packet, got %g", wmax)
	}
	if math.IsNaN(b) || math.IsInf(b, 0) || b < 1 {
		return model.TCPParams{}, 0, usagef("--b must be at least 1 packet per ACK, got %g", b)
	}
	return model.TCPParams{RTT: rtt, RTO: rto, MSS: mss, Wmax: wmax, B: b, Capacity: capacity}, duration, nil
}

// modelFlagHint names the flags that fix an unbounded loss-free model.
func modelFlagHint(err error) string {
	var pe *model.ParamError
	if errors.As(err, &pe) && (pe.Param == "Wmax" || pe.Param == "P") {
		return " (use --wmax or --capacity, or a loss above 0)"
	}
	return ""
}

func writeModelTable(w io.Writer, tp model.TCPParams, duration time.Duration, losses []float64, rs []model.Redundancy, models []string, pts []model.Point) error {
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
	idx := make(map[key]model.Point, len(pts))
	for _, pt := range pts {
		idx[key{pt.Model, pt.P, pt.RLabel}] = pt
	}
	mbps := func(v float64) string { return strconv.FormatFloat(v/1e6, 'f', 4, 64) }
	rows := []model.Redundancy{{}}
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
				pt := idx[key{"tcpnc", p, rc.Label()}]
				cells = append(cells, strconv.FormatFloat(pt.R, 'f', 4, 64), mbps(pt.GoodputBps),
					strconv.FormatFloat(pt.EffectiveLoss, 'g', 3, 64), pt.Limit.String())
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
	}
	return tw.Flush()
}
