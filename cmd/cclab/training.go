package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/learn/rl/bench"
	"github.com/cclab/cclab/learn/rl/checkpoint"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/trainlog"
)

// training holds a single-policy training command's files: the policy
// (--out), its checkpoint (--checkpoint, default OUT.ckpt) and its learning
// curve (--csv, default OUT.csv), continued rather than rewritten on
// --resume.
type training struct {
	out, ck, csvPath string
	curve            *trainlog.File
	// progress is where the progress bar goes: stderr on a terminal.
	progress io.Writer
}

// startTraining fills in the default paths and opens the learning curve.
func startTraining(out, ck, csvPath string, resume, force bool, stderr io.Writer) (*training, error) {
	t := &training{out: out, ck: ck, csvPath: csvPath}
	if t.ck == "" {
		t.ck = out + ".ckpt"
	}
	if err := checkpoint.CheckFresh(t.ck, resume, force); err != nil {
		return nil, err
	}
	// The policy is saved after training, which can take hours: a path it
	// cannot be written to (a folder, a missing or read-only one) fails now.
	if err := bench.CheckSavePath(out); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	if t.csvPath == "" {
		t.csvPath = strings.TrimSuffix(out, filepath.Ext(out)) + ".csv"
	}
	f, err := trainlog.OpenFile(t.csvPath, resume)
	if err != nil {
		return nil, err
	}
	t.curve = f
	// A bar on a terminal, plain lines with an ETA otherwise (trainlog).
	t.progress = stderr
	return t, nil
}

// curveFigure draws a learning curve's episode return against steps.
type curveFigure struct{ title, yLabel, series string }

// finish closes the curve and, if training succeeded, saves the policy,
// plots the curve next to the CSV and reports.
func (t *training) finish(err error, p *policy.Policy, steps int64, wallS float64, fig curveFigure, stdout, stderr io.Writer) error {
	t.curve.Close()
	if err != nil {
		return trainingError(err, t.ck)
	}
	if err := p.Save(t.out); err != nil {
		return err
	}
	if err := plotCurve(t.csvPath, fig); err != nil {
		fmt.Fprintf(stderr, "learning-curve plot: %v\n", err)
	}
	fmt.Fprintf(stdout, "trained %d steps in %.0f s of wall time; policy written to %s\n", steps, wallS, t.out)
	return nil
}

// trainingError says how to continue an interrupted training run.
func trainingError(err error, ck string) error {
	if errors.Is(err, context.Canceled) && ck != "" {
		return fmt.Errorf("interrupted; checkpoint in %s, continue with the same command and --resume", ck)
	}
	return err
}

// plotCurve draws a training CSV's mean episode return against steps to
// the CSV's stem .png and .svg.
func plotCurve(csvPath string, f curveFigure) error {
	c, err := trainlog.ReadColumns(csvPath, "step", "ep_rew_mean")
	fig := plot.TimeSeries{Title: f.title, X: plot.Axis{Label: "environment steps"}, Y: plot.Axis{Label: f.yLabel}}
	switch {
	case errors.Is(err, trainlog.ErrNoRows):
		// Stopped before the first episode ended: an empty plot says so.
		fig.Title += " (no episode finished)"
	case err != nil:
		return err
	default:
		fig.Series = []plot.Series{{Name: f.series, X: c[0], Y: c[1]}}
	}
	_, err = plot.SaveAll(fig, strings.TrimSuffix(csvPath, ".csv"), "png", "svg")
	return err
}
