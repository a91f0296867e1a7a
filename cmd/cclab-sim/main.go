// Command cclab-sim runs one scenario file and prints its measurements,
// exactly as `cclab run SCENARIO [--cc] [--seed] [--set] [--json]` does, from
// a binary that links only the simulator.
//
// Why a second binary: cclab links the emulator, learning, analysis, plots
// and RPC services, and their package initialisation (gonum/plot alone
// parses twelve embedded fonts) makes about 17 MiB of the binary resident
// at start-up, four times what a 1000-flow simulation needs for itself.
// cclab gives most of it back before and after a run, for about 2% more
// CPU time, but its start-up stays the peak of a small run (16-17 MiB
// against this binary's 10 MiB at 100 flows). Sweeps, cluster runs and
// scale measurements (bench/scale/run.sh --sim) can use this 7 MB binary;
// everything else (built-in scenarios, --out, --pcap, other commands)
// stays in cclab.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/boundedio"
	_ "github.com/cclab/cclab/traces" // built-in traces that scenario files name
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// usageError is bad command-line input (exit code 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// run executes one invocation and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := simulate(ctx, args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "cclab-sim: %v\n", err)
		var ue *usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

func simulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cclab-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cclab-sim SCENARIO.yaml [flags]\n\nRuns one scenario file as 'cclab run' does (same results and output).\n\nFlags:")
		fs.PrintDefaults()
	}
	ccName := fs.String("cc", "", "override every flow's congestion controller (see 'cclab list')")
	seed := fs.Int64("seed", -1, "override the scenario's seed")
	var sets stringList
	fs.Var(&sets, "set", "override a field: dotted.path=value (repeatable), e.g. bottleneck.loss.p=0.01")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	// Flags may follow the scenario, as with cclab run.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return &usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 1 {
		return &usageError{fmt.Sprintf("want exactly one scenario file, got %d arguments (usage: cclab-sim SCENARIO.yaml [flags])", len(pos))}
	}
	seedGiven := false
	fs.Visit(func(f *flag.Flag) { seedGiven = seedGiven || f.Name == "seed" })
	if *seed < 0 && seedGiven {
		return &usageError{fmt.Sprintf("--seed %d: want a seed >= 0", *seed)}
	}
	data, err := boundedio.ReadFile(pos[0], scenario.MaxFileSize, "scenario file")
	if err != nil {
		return err
	}
	s, err := scenario.ParseWithOverrides(data, pos[0], *ccName, *seed, sets)
	var oe *scenario.OverrideError
	if errors.As(err, &oe) {
		return &usageError{oe.Msg}
	}
	if err != nil {
		return err
	}
	experiment.SimulationGC()
	n, err := network.Build(s)
	if err != nil {
		return err
	}
	res, err := experiment.RunNetwork(ctx, n)
	if err != nil {
		return err
	}
	experiment.CollectFinishedNetwork()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	res.WriteText(stdout)
	return nil
}

func main() {
	experiment.OneProcessor() // for the whole process
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
