package main

import (
	"flag"

	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/papers/deepcc"
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
	if f.target == nil {
		return nil, nil
	}
	t, err := deepcc.ParseTuning(*f.target, *f.mode)
	if err != nil {
		return nil, usagef("--%v", err)
	}
	return t, nil
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
