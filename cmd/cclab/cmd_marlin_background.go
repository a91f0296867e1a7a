package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cclab/cclab/papers/marlin"
)

func init() {
	register(&command{name: "marlin background", summary: "MARLIN's Figure 2: the background traffic pattern of a scenario, on the SATCOM and the UHF link", run: runMarlinBackground})
}

func runMarlinBackground(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("marlin background", stderr)
	scn := fs.String("scenario", "satcom-uhf", "scenario file or built-in name")
	var sets stringList
	fs.Var(&sets, "set", "override a scenario field (dotted.path=value)")
	interval := fs.Duration("interval", 50*time.Millisecond, "sampling interval")
	duration := fs.Duration("duration", 20*time.Second, "simulated time (one SATCOM period and more after the switch)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	out := fs.String("out", "", "write background.json and background.png/svg to this directory")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("marlin background takes no arguments, got %q", pos)
	}
	if *interval <= 0 || *duration <= 0 {
		return usagef("--interval and --duration must be positive")
	}
	s, err := loadScenario(*scn, "", -1, sets)
	if err != nil {
		return err
	}
	s.Duration.V = *duration
	p, err := marlin.BackgroundPattern(s, *interval)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := p.Save(*out); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, *asJSON, p, func(w io.Writer) { p.WriteText(w, *interval, *duration) })
}
