package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/internal/par"
)

// Progress is a snapshot passed to Options.Progress after each batch of
// rows reaches the disk.
type Progress struct {
	// Done counts the shard's finished runs, including Resumed ones.
	Done, Total int
	// Resumed runs were finished by an earlier invocation.
	Resumed int
	// Elapsed is the time since this invocation started running.
	Elapsed time.Duration
}

// Options tune a sweep's execution; none changes its results.
type Options struct {
	// Jobs is the number of runs simulated at once [GOMAXPROCS].
	Jobs int
	// Progress, if set, is called from one goroutine as rows are written.
	Progress func(Progress)
	// Warn receives recoverable problems (a truncated last row).
	Warn func(string)
}

// Summary says how far a sweep got.
type Summary struct {
	Dir string
	// Total is the number of runs in this shard; Done of them are
	// recorded, Resumed of those before this invocation.
	Total, Done, Resumed int
	// Wall is this invocation's running time.
	Wall time.Duration
}

// Complete reports whether every run of the shard is recorded.
func (s *Summary) Complete() bool { return s.Done == s.Total }

// ErrInterrupted is returned (wrapped) when the context is cancelled
// before the shard is complete; every finished row is on disk.
var ErrInterrupted = errors.New("sweep interrupted")

// RunError is a run that failed; it names the job so that it can be
// reproduced with cclab run.
type RunError struct {
	Job    Job
	Seed   uint64
	Params []Param
	Err    error
}

func (e *RunError) Error() string {
	return fmt.Sprintf("combination %d (%s) run %d, seed %d: %v", e.Job.Combo, ParamsLabel(e.Params), e.Job.Run, e.Seed, e.Err)
}

func (e *RunError) Unwrap() error { return e.Err }

// prepare creates or checks the output directory for plan and returns the
// rows already recorded there. A directory holding another sweep, a corrupt
// manifest or row, or one that cannot be written is an error.
func prepare(dir string, plan *Plan, warn func(string)) (*Rows, error) {
	if warn == nil {
		warn = func(string) {}
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("%s exists and is not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the output directory: %w", err)
	}
	// Probe writability now, not after the first hour of runs.
	probe, err := os.CreateTemp(dir, tmpPrefix+"probe-*")
	if err != nil {
		return nil, fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	removeTemps(dir)

	have, err := ReadManifest(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Stat(filepath.Join(dir, RowsFile)); err == nil {
			return nil, fmt.Errorf("%s has %s but no %s: not a sweep directory this cclab wrote; choose another --out", dir, RowsFile, ManifestFile)
		}
		if err := writeManifest(dir, plan.Manifest); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	default:
		if extends(have, plan.Manifest) {
			// More runs per combination: the rows keep their combination
			// and run numbers, and the new manifest takes them all.
			warn(fmt.Sprintf("%s: extending the sweep from %d to %d runs per combination", dir, have.Runs, plan.Manifest.Runs))
			if err := writeManifest(dir, plan.Manifest); err != nil {
				return nil, err
			}
			break
		}
		if err := checkSame(dir, have, plan.Manifest); err != nil {
			return nil, err
		}
	}
	return readRows(filepath.Join(dir, RowsFile), plan.Manifest, warn)
}

// Run executes the plan's shard into dir, skipping runs already recorded
// there, and writes the outputs (rows.jsonl sorted, rows.csv, aggregate.csv,
// aggregate.json) when it stops: complete, interrupted or failed. Rows are
// appended and fsynced as runs finish, so a kill loses at most the runs in
// flight. Results do not depend on opt.Jobs.
func Run(ctx context.Context, plan *Plan, dir string, opt Options) (*Summary, error) {
	warn := opt.Warn
	if warn == nil {
		warn = func(string) {}
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("%s exists and is not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the output directory: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rs, err := prepare(dir, plan, warn)
	if err != nil {
		return nil, err
	}
	m := plan.Manifest
	sum := &Summary{Dir: dir, Total: m.ShardJobs(), Resumed: rs.Len()}

	var pending []Job
	for c := range m.Combinations {
		for r := range m.Runs {
			if j := c*m.Runs + r; m.InShard(j) && !rs.Has(j) {
				pending = append(pending, Job{c, r})
			}
		}
	}
	start := time.Now()
	runErr := execute(ctx, plan, dir, rs, pending, opt, start)
	sum.Done = rs.Len()
	sum.Wall = time.Since(start)
	if werr := writeOutputs(dir, m, rs); werr != nil && runErr == nil {
		runErr = werr
	}
	if runErr != nil {
		return sum, runErr
	}
	if !sum.Complete() {
		return sum, fmt.Errorf("%w after %d of %d runs", ErrInterrupted, sum.Done, sum.Total)
	}
	return sum, nil
}

type outcome struct {
	job Job
	row []byte
	r   *Row
	err error
}

// execute runs pending jobs on opt.Jobs workers and appends each finished
// row to rows.jsonl from this goroutine alone, fsyncing after each batch.
func execute(ctx context.Context, plan *Plan, dir string, rs *Rows, pending []Job, opt Options, start time.Time) error {
	m := plan.Manifest
	path := filepath.Join(dir, RowsFile)
	// Cut off a truncated last line (a kill mid-write), then only append:
	// the lock keeps other writers out, and O_APPEND puts every write at
	// the end whatever happened before.
	if st, err := os.Stat(path); err == nil && st.Size() > rs.end {
		if err := os.Truncate(path, rs.end); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()

	report := func() {
		if opt.Progress != nil {
			opt.Progress(Progress{Done: rs.Len(), Total: m.ShardJobs(), Resumed: m.ShardJobs() - len(pending), Elapsed: time.Since(start)})
		}
	}
	report()
	if len(pending) == 0 {
		return nil
	}

	workers := opt.Jobs
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(pending))
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan outcome, 4*workers)
	go func() {
		par.Do(runCtx, len(pending), workers, nil, func(_, i int) {
			results <- runJob(runCtx, plan, pending[i])
		})
		close(results)
	}()

	var firstErr error
	var batch []outcome
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var buf []byte
		for _, o := range batch {
			buf = append(append(buf, o.row...), '\n')
		}
		if _, err := f.Write(buf); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		for _, o := range batch {
			rs.add(plan.Index(o.job), o.r, o.row)
		}
		batch = batch[:0]
		report()
		return nil
	}
	for o := range results {
		switch {
		case o.err == nil:
			batch = append(batch, o)
		case runCtx.Err() != nil && errors.Is(o.err, context.Canceled):
			// A run cut short by the interrupt: not a result.
		case firstErr == nil:
			firstErr = o.err
			cancel()
		}
		if len(results) > 0 && len(batch) < 256 {
			continue // more are waiting: write them together
		}
		if err := flush(); err != nil && firstErr == nil {
			firstErr = err
			cancel()
		}
	}
	if err := flush(); err != nil && firstErr == nil {
		firstErr = err
	}
	return firstErr
}

// runJob simulates one job and encodes its row; a panic in the simulator
// becomes an error naming the job instead of killing the sweep.
func runJob(ctx context.Context, plan *Plan, j Job) (o outcome) {
	o.job = j
	s := plan.Scenario(j)
	params := plan.Combos[j.Combo].Params
	defer func() {
		if p := recover(); p != nil {
			o.err = &RunError{j, s.Seed, params, fmt.Errorf("simulator panic: %v\n%s", p, debug.Stack())}
		}
	}()
	res, _, err := experiment.Run(ctx, s)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			o.err = err
		} else {
			o.err = &RunError{j, s.Seed, params, err}
		}
		return o
	}
	pm := make(map[string]string, len(params))
	for _, p := range params {
		pm[p.Key] = p.Value
	}
	o.r = &Row{Combo: j.Combo, Run: j.Run, Seed: s.Seed, Params: pm, NotApplied: plan.Combos[j.Combo].NotApplied, Result: res}
	o.row, o.err = json.Marshal(o.r)
	return o
}
