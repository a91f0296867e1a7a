package tune

import (
	"context"
	"fmt"
	"os"

	"github.com/cclab/cclab/experiment/scenario"
)

// CaseSets are the tuning (Train) and held-out (Test) cases of a study,
// with the temporary directory holding their trace pieces.
type CaseSets struct {
	Train, Test []Case
	dir         string
}

// NewCaseSets expands the scenarios over the training and held-out trace
// files (no training files: the scenarios as they are; no held-out files:
// no held-out cases) with o's pieces, seeds and trace mode; o.Traces and
// o.Dir are set here. Close removes the pieces.
func NewCaseSets(scns []*scenario.Scenario, trainFiles, testFiles []string, o CaseOptions) (*CaseSets, error) {
	dir, err := os.MkdirTemp("", "cclab-tune-pieces-")
	if err != nil {
		return nil, err
	}
	cs := &CaseSets{dir: dir}
	o.Traces, o.Dir = trainFiles, dir
	if cs.Train, err = Cases(scns, o); err != nil {
		cs.Close()
		return nil, err
	}
	if len(testFiles) > 0 {
		o.Traces = testFiles
		if cs.Test, err = Cases(scns, o); err != nil {
			cs.Close()
			return nil, fmt.Errorf("held-out traces: %w", err)
		}
	}
	return cs, nil
}

// Close removes the trace pieces.
func (cs *CaseSets) Close() { os.RemoveAll(cs.dir) }

// Tune runs the tuning on the training cases, calls finish (which ends a
// progress display) and, if there are held-out cases, scores the default
// and the Pareto set on them.
func (cs *CaseSets) Tune(ctx context.Context, prob *Problem, opts Options, finish func()) (*Result, *Holdout, error) {
	res, err := Run(ctx, prob, cs.Train, opts)
	finish()
	if err != nil {
		return nil, nil, err
	}
	var h *Holdout
	if len(cs.Test) > 0 {
		if h, err = res.Holdout(ctx, cs.Test, opts.Jobs); err != nil {
			return nil, nil, err
		}
	}
	return res, h, nil
}
