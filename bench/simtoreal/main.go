// Command simtoreal computes the simulator's side of docs/sim-to-real.md's
// DeepCC rows: the shipped DeepCC policy with fixed goals, and CUBIC, on
// the deepcc-cellular scenario's link (TMobile-LTE-short from 0 s, 20 ms
// one way, 200-packet DropTail queue, 30 s, seed 1). The emulated side is
//
//	cclab emu deepcc-cellular --set flows.0.stack=cclab --set flows.0.agent=deepcc:g2 --set flows.0.cc=external --json
//
// With -dc it computes the data-centre BBR tuner's row instead: the
// reward's terms (papers/datacenter's evaluation, RunEpisode) of static
// default BBR and of the shipped policy on bench/simtoreal/dc-small.yaml,
// whose emulated side is
//
//	cclab emu bench/simtoreal/dc-small.yaml --set flows.0.stack=cclab --set flows.0.agent=dc-bbr --json
//
// (agent dc-bbr:static for the static baseline).
//
// Usage: go run ./bench/simtoreal [-dc]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/datacenter"
	"github.com/cclab/cclab/papers/deepcc"
)

func main() {
	dc := flag.Bool("dc", false, "the data-centre BBR tuner's row (run from the repository root)")
	flag.Parse()
	run := run
	if *dc {
		run = runDC
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "simtoreal:", err)
		os.Exit(1)
	}
}

func run() error {
	const length = 30 * time.Second
	link, err := deepcc.TraceLink(deepcc.NewTraceSet(), "traces/TMobile-LTE-short.down.gz", 0, length, 20*time.Millisecond, 200, 0)
	if err != nil {
		return err
	}
	p, err := deepcc.LoadPolicy(deepcc.ShippedPolicyPath)
	if err != nil {
		return err
	}
	out := map[string]deepcc.Outcome{}
	for _, g := range deepcc.DefaultGoals {
		if g.Name != "g2" && g.Name != "g5" {
			continue
		}
		r, err := deepcc.RunDeepCC(p, deepcc.Run{Link: link, Duration: length, Seed: 1, Goal: g.Goal})
		if err != nil {
			return err
		}
		out["deepcc:"+g.Name] = r.Outcome
	}
	r, err := deepcc.RunClassic(scenario.CC{Name: "cubic"}, deepcc.Run{Link: link, Duration: length, Seed: 1})
	if err != nil {
		return err
	}
	out["cubic"] = r.Outcome
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"link": link, "outcomes": out})
}

// runDC plays dc-small.yaml for its whole duration (one warm-up interval,
// then one agent step per 100 ms) with static default BBR and with the
// shipped policy, as `cclab dc eval` scores an episode.
func runDC() error {
	s, err := scenario.Load("bench/simtoreal/dc-small.yaml")
	if err != nil {
		return err
	}
	p, err := datacenter.LoadPolicy(datacenter.ShippedPolicyPath)
	if err != nil {
		return err
	}
	cfg, err := datacenter.ConfigFromPolicy(datacenter.Config{Base: s}, p)
	if err != nil {
		return err
	}
	cfg.Steps = int(s.Duration.V/cfg.Interval) - 1
	out := map[string]map[string]float64{}
	for _, sc := range []datacenter.Scheme{
		datacenter.StaticScheme("bbr-static", datacenter.DefaultParams),
		datacenter.PolicyScheme("dc-bbr", []*policy.Policy{p}, cfg.Action),
	} {
		st, err := datacenter.RunEpisode(cfg, s.Seed, sc.New())
		if err != nil {
			return err
		}
		m := map[string]float64{}
		for i, v := range st.Metrics().Values() {
			if !math.IsNaN(v) { // no background: no completion times
				m[datacenter.MetricNames[i]] = v
			}
		}
		out[sc.Name] = m
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"scenario": s.Name, "steps": cfg.Steps, "interval": cfg.Interval.String(), "metrics": out})
}
