package main

import (
	"flag"
	"strconv"
	"strings"

	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/papers/deepcc"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// deepccTuneFlags are `cclab send`'s options for DeepCC's online goal
// tuner on a live flow.
type deepccTuneFlags struct {
	target, mode *string
}

func addDeepCCTuneFlags(fs *flag.FlagSet) deepccTuneFlags {
	return deepccTuneFlags{
		target: fs.String("target", "", "with --cc deepcc: tune the goal online towards MBPS,DELAY_MS,LOSS (min throughput, max queueing delay p95, max loss fraction; 0 = no bound), every 4 RTTs"),
		mode:   fs.String("mode", "", "with --cc deepcc: tune the goal online for a preference, low-delay or high-throughput"),
	}
}

// tuning returns the tuner settings the flags ask for, nil for none.
func (f deepccTuneFlags) tuning() (*deepcc.LiveTuning, error) {
	if f.target == nil || (*f.target == "" && *f.mode == "") {
		return nil, nil
	}
	if *f.target != "" && *f.mode != "" {
		return nil, usagef("give --target or --mode, not both")
	}
	if *f.mode != "" {
		m, err := deepcc.ParseMode(*f.mode)
		if err != nil {
			return nil, usagef("--mode: %v", err)
		}
		return &deepcc.LiveTuning{Mode: m}, nil
	}
	parts := strings.Split(*f.target, ",")
	if len(parts) != 3 {
		return nil, usagef("--target %q: want MBPS,DELAY_MS,LOSS, e.g. 8,70,0.01 (0 = no bound)", *f.target)
	}
	var v [3]float64
	for i, s := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, usagef("--target %q: %q is not a number", *f.target, s)
		}
		v[i] = x
	}
	t := tuner.Target{MinThroughputMbps: v[0], MaxDelayMs: v[1], MaxLoss: v[2]}
	if err := t.Validate(); err != nil {
		return nil, usagef("--target %q: %v", *f.target, err)
	}
	return &deepcc.LiveTuning{Target: &t}, nil
}

// tunedExtra adds the tuner's outcome to a live result's counters.
func tunedExtra(a *deepcc.LiveAgent, r *live.Result) {
	traj := a.Trajectory()
	g := a.Goal()
	r.Extra["tune_intervals"] = float64(len(traj))
	if a.TuneErr != nil {
		r.Extra["tune_stopped"] = 1 // the flow kept the last goal
	}
	r.Extra["goal_throughput"], r.Extra["goal_delay"], r.Extra["goal_loss"] = g[0], g[1], g[2]
	if n := len(traj); n > 0 {
		m := traj[n-1].Measured
		r.Extra["last_throughput_mbps"], r.Extra["last_delay_p95_ms"], r.Extra["last_loss"] = m.ThroughputMbps, m.DelayMs, m.Loss
	}
}
