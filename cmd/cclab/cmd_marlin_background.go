package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/cclab/cclab/analysis/plot"
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
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if err := writeJSONFile(filepath.Join(*out, "background.json"), p); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if err := writeBackgroundFigure(filepath.Join(*out, "background"), p); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, *asJSON, p, func(w io.Writer) {
		fmt.Fprintf(w, "Background traffic of %s (mean delivered over the bottleneck; %v samples, %v)\n", p.Scenario, *interval, *duration)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "component\tkind\tmean Mbit/s\t")
		for _, c := range p.Components {
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t\n", c.Name, c.Kind, c.MeanMbps)
		}
		tw.Flush()
	})
}

// writeBackgroundFigure draws the paper's Figure 2: one panel per link
// period (before and after the first change), one period of 8 s each.
func writeBackgroundFigure(stem string, p *marlin.Pattern) error {
	end := p.T[len(p.T)-1]
	switchAt := end
	if len(p.Changes) > 0 {
		switchAt = p.Changes[0]
	}
	windows := [][2]float64{{0, min(8, switchAt)}}
	if switchAt < end {
		windows = append(windows, [2]float64{switchAt, min(switchAt+8, end)})
	}
	labels := []string{"(a) SATCOM link", "(b) UHF link"}
	var panels []plot.Panel
	for wi, win := range windows {
		t, m := p.Window(win[0], win[1])
		var series []plot.Series
		for k, c := range p.Components {
			x := make([]float64, len(t))
			for i := range t {
				x[i] = t[i] - win[0]
			}
			series = append(series, plot.Series{Name: c.Name, X: x, Y: m[k]})
		}
		panels = append(panels, plot.Panel{Y: plot.Axis{Label: labels[wi] + " (Mbit/s)", IncludeZero: true}, Step: true, Series: series})
	}
	fig := plot.Stacked{Title: "Background traffic patterns of " + p.Scenario + " (UDP: emitted; TCP: delivered)", X: plot.Axis{Label: "time within the period (s)"}, Panels: panels}
	_, err := plot.SaveAll(fig, stem, "png", "svg")
	return err
}
