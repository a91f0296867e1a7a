package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/datacenter"
)

// dcWorkloadFlags selects the data-centre agents' training and evaluation
// workload: a built-in preset (--workload) and per-range overrides.
type dcWorkloadFlags struct {
	name                   *string
	gap, delay, rate, load *string
	churn                  *float64
}

func addDCWorkloadFlags(fs *flag.FlagSet) *dcWorkloadFlags {
	var names []string
	for _, w := range datacenter.Workloads {
		names = append(names, w.Name+": "+w.Doc)
	}
	return &dcWorkloadFlags{
		name:  fs.String("workload", "datacenter", "workload preset (sets the default --scenario, --interval, --episode and the ranges below):\n"+strings.Join(names, "\n")),
		gap:   fs.String("event-gap", "", "override: range of the uniform time between link/path events, LO,HI (e.g. 1s,50s)"),
		delay: fs.String("path-delay", "", "override: range of a rack's one-way extra path delay, LO,HI (e.g. 4ms,24ms)"),
		rate:  fs.String("rate-range", "", "override: range of the bottleneck rate at capacity events, LO,HI (e.g. 1Mbps,10Mbps)"),
		load:  fs.String("load", "", "override: range of the background load, fractions of the bottleneck rate, LO,HI"),
		churn: fs.Float64("churn", -1, "override: probability that a controlled flow joins late / leaves early (0-1)"),
	}
}

// resolve applies the workload to the scenario, interval and episode
// flags the user did not set, and returns the workload with the overrides
// in its randomisation.
func (w *dcWorkloadFlags) resolve(fs *flag.FlagSet, scn *string, interval *time.Duration, episode *int) (datacenter.Workload, error) {
	wl, err := datacenter.LookupWorkload(*w.name)
	if err != nil {
		return wl, usagef("--workload: %v", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["scenario"] && *scn == "" {
		*scn = wl.Scenario
	}
	if interval != nil && !set["interval"] {
		*interval = wl.Interval
	}
	if episode != nil && !set["episode"] {
		*episode = wl.Steps
	}
	r := wl.Random
	pair := func(flagName, v string, parse func(string) (float64, error), dst func(lo, hi float64)) error {
		if v == "" {
			return nil
		}
		a, b, ok := strings.Cut(v, ",")
		if !ok {
			return usagef("--%s wants LO,HI, got %q", flagName, v)
		}
		lo, err1 := parse(strings.TrimSpace(a))
		hi, err2 := parse(strings.TrimSpace(b))
		// !(lo <= hi) and the finiteness check refuse NaN and infinities,
		// which every ordering test would let through.
		if err1 != nil || err2 != nil || !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return usagef("--%s wants an ordered LO,HI, got %q", flagName, v)
		}
		dst(lo, hi)
		return nil
	}
	dur := func(s string) (float64, error) { d, err := time.ParseDuration(s); return float64(d), err }
	rate := func(s string) (float64, error) { b, err := units.ParseBandwidth(s); return float64(b), err }
	frac := func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
	for _, err := range []error{
		pair("event-gap", *w.gap, dur, func(lo, hi float64) { r.EventGap = [2]time.Duration{time.Duration(lo), time.Duration(hi)} }),
		pair("path-delay", *w.delay, dur, func(lo, hi float64) { r.PathDelay = [2]time.Duration{time.Duration(lo), time.Duration(hi)} }),
		pair("rate-range", *w.rate, rate, func(lo, hi float64) { r.Rate = [2]units.Bandwidth{units.Bandwidth(lo), units.Bandwidth(hi)} }),
		pair("load", *w.load, frac, func(lo, hi float64) { r.Load = [2]float64{lo, hi} }),
	} {
		if err != nil {
			return wl, err
		}
	}
	if math.IsNaN(*w.churn) {
		return wl, usagef("--churn must be in [0, 1], got %g", *w.churn)
	}
	if *w.churn >= 0 {
		if *w.churn > 1 {
			return wl, usagef("--churn must be in [0, 1], got %g", *w.churn)
		}
		r.Churn = *w.churn
	}
	wl.Random = r
	return wl, nil
}

// withWorkload sets cfg's workload and randomisation and checks them.
func withWorkload(cfg datacenter.Config, name string, r datacenter.Randomization) (datacenter.Config, error) {
	cfg.Workload, cfg.Random = name, r
	if _, err := datacenter.NewSim(cfg); err != nil {
		return cfg, fmt.Errorf("workload %s: %w", name, err)
	}
	return cfg, nil
}

// dcOnlineSchemes is the --online-lr scheme: the first evaluated policy,
// one shared by all agents, learning while it is evaluated.
func dcOnlineSchemes(lr float64, name string, pols []*policy.Policy) ([]datacenter.OnlineScheme, error) {
	switch {
	case lr == 0:
		return nil, nil
	case !(lr > 0 && lr < 1):
		return nil, usagef("--online-lr must be in (0, 1), got %g", lr)
	case len(pols) != 1:
		return nil, usagef("--online-lr needs one --policy shared by all agents")
	}
	return []datacenter.OnlineScheme{{Name: name + " online", Policy: pols[0], LR: lr}}, nil
}
