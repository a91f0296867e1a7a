package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/sweep"
)

// File is the report's name inside the directory it describes.
const File = "report.html"

// Limits that keep figures readable; the tables always list everything.
const (
	maxCDFSamples   = 12 // lines in one CDF
	maxSeriesCombos = 6  // combinations re-simulated for time series
)

// DirOptions tune WriteDir.
type DirOptions struct {
	// NoSeries skips re-simulating run 0 of a sweep's first combinations
	// for time-series plots.
	NoSeries bool
	// Warn receives recoverable problems (a truncated last sweep row).
	Warn func(string)
}

// WriteDir writes File, with its figures as PNG and SVG beside it, into
// dir, the output directory of a sweep (it holds the sweep manifest) or of
// a single run (it holds summary.json). It returns the report's path and
// the figures' stems.
func WriteDir(ctx context.Context, dir string, o DirOptions) (path string, figures []string, err error) {
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	var r *Report
	switch {
	case exists(filepath.Join(dir, sweep.ManifestFile)):
		r, figures, err = sweepReport(ctx, dir, !o.NoSeries, warn)
	case exists(filepath.Join(dir, "summary.json")):
		r, figures, err = runDirReport(dir)
	default:
		return "", nil, fmt.Errorf("%s holds neither %s (cclab sweep --out) nor summary.json (cclab run --out)", dir, sweep.ManifestFile)
	}
	if err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, File)
	if err := r.WriteFile(path); err != nil {
		return "", nil, err
	}
	return path, figures, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// figureSaver saves figures beside the report and embeds one format.
type figureSaver struct {
	dir   string
	r     *Report
	saved []string
}

// add saves fig as STEM.png and STEM.svg and embeds the given format.
func (s *figureSaver) add(caption, stem, embed string, fig plot.Figure) error {
	paths, err := plot.SaveAll(fig, filepath.Join(s.dir, stem), plot.PNG, plot.SVG)
	if err != nil {
		return fmt.Errorf("plotting %s: %w", stem, err)
	}
	s.saved = append(s.saved, stem)
	for _, p := range paths {
		if strings.HasSuffix(p, "."+embed) {
			s.r.Figure(caption, p)
		}
	}
	return s.r.Err()
}
