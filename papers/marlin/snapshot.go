package marlin

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/checkpoint"
	"github.com/cclab/cclab/learn/rl/policy"
)

// SnapshotSeed is the seed offset of the transfers training validates its
// snapshots on (TrainConfig.ValidateEvery): run i uses seed
// SnapshotSeed+i+1, disjoint from the evaluation's (1 to Runs) and from
// SelectPolicy's (ValidationSeed+1 on), so neither the choice of a
// snapshot nor that of a seed is made on the transfers a policy is
// evaluated on.
const SnapshotSeed = 2_000_000

// SnapshotScore is what snapshots are chosen by: the score of SelectPolicy.
const SnapshotScore = ValidationScore

// ValidationCSVHeader is the header of the snapshot-validation CSV.
const ValidationCSVHeader = "step,transfer_time_s,retransmissions,rti,unfinished,best_step,best_transfer_time_s"

// validated wraps the learning agent with the snapshot choice, so that
// the best snapshot so far and the next validation step are part of the
// training state a checkpoint saves and a resume restores.
type validated struct {
	rl.Agent
	cfg   EvalConfig
	every int64
	meta  func() policy.Meta
	csv   io.Writer

	next     int64 // step of the next validation
	lastStep int64 // step of the last validation (-1: none yet)
	best     *policy.Policy
	bestTime float64
	bestStep int64
}

func newValidated(a rl.Agent, cfg EvalConfig, every int64, meta func() policy.Meta, csv io.Writer) *validated {
	return &validated{Agent: a, cfg: cfg, every: every, meta: meta, csv: csv, next: every, lastStep: -1, bestTime: math.Inf(1)}
}

// afterIteration validates the current policy once the agent has passed
// the next multiple of every steps (an iteration adds Envs steps, so the
// validation runs at the first step at or past it).
// A validation cut short by ctx is left pending and nil returned, so that
// the training loop sees the cancellation and writes its checkpoint.
func (v *validated) afterIteration(ctx context.Context) error {
	if v.Steps() < v.next {
		return nil
	}
	if err := v.validate(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	for v.next <= v.Steps() {
		v.next += v.every
	}
	return nil
}

// finish validates the last policy if the schedule did not.
func (v *validated) finish(ctx context.Context) error {
	if v.lastStep == v.Steps() {
		return nil
	}
	return v.validate(ctx)
}

func (v *validated) validate(ctx context.Context) error {
	p, err := v.Policy(v.meta())
	if err != nil {
		return err
	}
	c := v.cfg
	c.Policy, c.Policies = p, nil
	rows, _, err := Evaluate(ctx, c)
	if err != nil {
		return fmt.Errorf("marlin: validating the policy at step %d: %w", v.Steps(), err)
	}
	r := rows[0]
	step := v.Steps()
	v.lastStep = step
	// Strictly lower: on a tie the earlier snapshot stays.
	if r.TransferTime < v.bestTime {
		v.best, v.bestTime, v.bestStep = p, r.TransferTime, step
	}
	if v.csv != nil {
		if _, err := fmt.Fprintf(v.csv, "%d,%.6g,%.6g,%.6g,%d,%d,%.6g\n", step, r.TransferTime, r.Retrans, r.RTI, r.Unfinished, v.bestStep, v.bestTime); err != nil {
			return fmt.Errorf("marlin: validation CSV: %w", err)
		}
	}
	return nil
}

// selected returns the best snapshot with its choice recorded in its
// metadata.
func (v *validated) selected(wallS float64) *policy.Policy {
	p := v.best
	p.Meta.TrainingWallS = wallS
	p.Meta.Extra = cloneExtra(p.Meta.Extra)
	p.Meta.Extra["selected_step"] = fmt.Sprint(v.bestStep)
	p.Meta.Extra["validation_transfer_time_s"] = fmt.Sprintf("%.6g", v.bestTime)
	p.Meta.Extra["validation"] = fmt.Sprintf("every %d steps, %d transfers at UHF loss %g, seeds %d-%d, by %s",
		v.every, v.cfg.Runs, v.cfg.Losses[0], SnapshotSeed+1, SnapshotSeed+v.cfg.Runs, SnapshotScore)
	return p
}

func cloneExtra(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+3)
	for k, x := range m {
		out[k] = x
	}
	return out
}

// Save implements rl.Agent: the agent's state, then the choice's.
func (v *validated) Save(e *checkpoint.Encoder) error {
	if err := v.Agent.Save(e); err != nil {
		return err
	}
	e.Int64("marlin.validate.every", v.every)
	e.Int64("marlin.validate.next", v.next)
	e.Int64("marlin.validate.last_step", v.lastStep)
	e.Bool("marlin.validate.has_best", v.best != nil)
	if v.best != nil {
		b, err := v.best.MarshalBinary()
		if err != nil {
			return err
		}
		e.Bytes("marlin.validate.best", b)
		e.Float64("marlin.validate.best_time", v.bestTime)
		e.Int64("marlin.validate.best_step", v.bestStep)
	}
	return e.Err()
}

// Load implements rl.Agent.
func (v *validated) Load(d *checkpoint.Decoder) error {
	if err := v.Agent.Load(d); err != nil {
		return err
	}
	if every := d.Int64("marlin.validate.every"); d.Err() == nil && every != v.every {
		d.Fail("marlin.validate.every", "the checkpoint validates every %d steps, this run every %d: resume with the same --validate-every", every, v.every)
	}
	v.next = d.Int64("marlin.validate.next")
	v.lastStep = d.Int64("marlin.validate.last_step")
	if d.Bool("marlin.validate.has_best") {
		var p policy.Policy
		if b := d.Bytes("marlin.validate.best"); d.Err() == nil {
			if err := p.UnmarshalBinary(b); err != nil {
				d.Fail("marlin.validate.best", "%v", err)
			}
		}
		v.best = &p
		v.bestTime = d.Float64("marlin.validate.best_time")
		v.bestStep = d.Int64("marlin.validate.best_step")
	}
	return d.Err()
}
