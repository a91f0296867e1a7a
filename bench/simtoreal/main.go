// Command simtoreal computes the simulator's side of docs/sim-to-real.md's
// DeepCC rows: the shipped DeepCC policy with fixed goals, and CUBIC, on
// the deepcc-cellular scenario's link (TMobile-LTE-short from 0 s, 20 ms
// one way, 200-packet DropTail queue, 30 s, seed 1). The emulated side is
//
//	cclab emu deepcc-cellular --set flows.0.stack=cclab --set flows.0.agent=deepcc:g2 --set flows.0.cc=external --json
//
// Usage: go run ./bench/simtoreal
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/papers/deepcc"
)

func main() {
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
