package marlin

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"strings"

	"github.com/cclab/cclab/experiment/scenario"
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

// What training chooses snapshots by (TrainConfig.ValidateBy).
const (
	// ValidateByTime scores a snapshot by its mean transfer time, s, the
	// score of SelectPolicy.
	ValidateByTime = "time"
	// ValidateByGoals scores it by the paper's agent's two goals on the
	// same transfers: the larger of its transfer time over 0.87 x CUBIC's
	// and its retransmissions over 0.23 x CUBIC's, so a score at most 1
	// meets both and a lower one meets them with more margin on the
	// tighter (a Chebyshev scalarisation of the two ratios).
	ValidateByGoals = "goals"
)

// The paper's agent's results relative to CUBIC (Table 2), its goals.
const (
	PaperTimeRatio    = 0.87
	PaperRetransRatio = 0.23
)

// ValidationCSVHeader is the header of the snapshot-validation CSV.
const ValidationCSVHeader = "step,transfer_time_s,retransmissions,rti,unfinished,score,best_step,best_score"

// validated wraps the learning agent with the snapshot choice, so that
// the best snapshot so far and the next validation step are part of the
// training state a checkpoint saves and a resume restores.
type validated struct {
	rl.Agent
	cfg   EvalConfig
	every int64
	by    string
	scen  string // how the validation scenario differs from the base (validationScenario)
	ref   Row    // CUBIC on the validation transfers, for ValidateByGoals
	meta  func() policy.Meta
	csv   io.Writer

	next      int64 // step of the next validation
	lastStep  int64 // step of the last validation (-1: none yet)
	best      *policy.Policy
	bestScore float64
	bestStep  int64
}

// newValidated measures CUBIC on the validation transfers when by needs
// it: a deterministic function of the scenario, so a resumed run
// measures it again rather than saving it.
func newValidated(ctx context.Context, a rl.Agent, cfg EvalConfig, every int64, by, scen string, meta func() policy.Meta, csv io.Writer) (*validated, error) {
	v := &validated{Agent: a, cfg: cfg, every: every, by: by, scen: scen, meta: meta, csv: csv, next: every, lastStep: -1, bestScore: math.Inf(1)}
	// TrainConfig.validate has checked by.
	if by == ValidateByGoals {
		c := cfg
		c.Schemes = []Scheme{CUBIC}
		rows, _, err := Evaluate(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("marlin: CUBIC on the validation transfers: %w", err)
		}
		v.ref = rows[0]
		if !(v.ref.TransferTime > 0 && v.ref.Retrans > 0) {
			return nil, fmt.Errorf("marlin: CUBIC on the validation transfers took %g s with %g retransmissions: the goals' ratios need both positive (a lossless link has no retransmission goal)", v.ref.TransferTime, v.ref.Retrans)
		}
	}
	return v, nil
}

// validationBase is the scenario of the validation transfers: base with
// the overrides sets ("dotted.path=value").
func validationBase(base *scenario.Scenario, sets []string) (*scenario.Scenario, error) {
	if len(sets) == 0 {
		return base, nil
	}
	s := base.Clone()
	if _, err := s.ApplySets("--validate-set", sets); err != nil {
		return nil, fmt.Errorf("marlin: validation scenario: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("marlin: validation scenario after %q: %w", strings.Join(sets, " "), err)
	}
	return s, nil
}

// validationScenario describes how the validation transfers' scenario
// differs from the base: the overrides, space-separated, then the drawn
// timeline if any. It is part of the checkpoint, so a resume validates on
// the same transfers.
func validationScenario(sets []string, t Timeline) string {
	s := strings.Join(sets, " ")
	if t.Draws() {
		s = strings.TrimSpace(s + " timeline drawn from the training ranges: " + t.String())
	}
	return s
}

// score is what the choice minimises.
func (v *validated) score(r Row) float64 {
	if v.by == ValidateByGoals {
		return max(r.TransferTime/(PaperTimeRatio*v.ref.TransferTime), r.Retrans/(PaperRetransRatio*v.ref.Retrans))
	}
	return r.TransferTime
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
	step, sc := v.Steps(), v.score(r)
	v.lastStep = step
	// Strictly lower: on a tie the earlier snapshot stays.
	if sc < v.bestScore {
		v.best, v.bestScore, v.bestStep = p, sc, step
	}
	if v.csv != nil {
		if _, err := fmt.Fprintf(v.csv, "%d,%.6g,%.6g,%.6g,%d,%.6g,%d,%.6g\n", step, r.TransferTime, r.Retrans, r.RTI, r.Unfinished, sc, v.bestStep, v.bestScore); err != nil {
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
	p.Meta.Extra = maps.Clone(p.Meta.Extra)
	p.Meta.Extra["selected_step"] = fmt.Sprint(v.bestStep)
	p.Meta.Extra["validation_score"] = fmt.Sprintf("%.6g", v.bestScore)
	p.Meta.Extra["validation"] = fmt.Sprintf("every %d steps, %d transfers at UHF loss %g, seeds %d-%d, by %s",
		v.every, v.cfg.Runs, v.cfg.Losses[0], SnapshotSeed+1, SnapshotSeed+v.cfg.Runs, v.describe())
	if v.scen != "" {
		p.Meta.Extra["validation"] += ", scenario: " + v.scen
	}
	return p
}

// describe says what the score is.
func (v *validated) describe() string {
	if v.by == ValidateByGoals {
		return fmt.Sprintf("max(time / (%g x CUBIC's %.4g s), retransmissions / (%g x CUBIC's %.4g)) (lower is better)",
			PaperTimeRatio, v.ref.TransferTime, PaperRetransRatio, v.ref.Retrans)
	}
	return ValidationScore
}

// Save implements rl.Agent: the agent's state, then the choice's.
func (v *validated) Save(e *checkpoint.Encoder) error {
	if err := v.Agent.Save(e); err != nil {
		return err
	}
	e.Int64("marlin.validate.every", v.every)
	e.Bytes("marlin.validate.by", []byte(v.by))
	e.Bytes("marlin.validate.sets", []byte(v.scen))
	e.Int64("marlin.validate.next", v.next)
	e.Int64("marlin.validate.last_step", v.lastStep)
	e.Bool("marlin.validate.has_best", v.best != nil)
	if v.best != nil {
		b, err := v.best.MarshalBinary()
		if err != nil {
			return err
		}
		e.Bytes("marlin.validate.best", b)
		e.Float64("marlin.validate.best_score", v.bestScore)
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
	if by := string(d.Bytes("marlin.validate.by")); d.Err() == nil && by != v.by {
		d.Fail("marlin.validate.by", "the checkpoint chooses snapshots by %q, this run by %q: resume with the same --validate-by", by, v.by)
	}
	if scen := string(d.Bytes("marlin.validate.sets")); d.Err() == nil && scen != v.scen {
		d.Fail("marlin.validate.sets", "the checkpoint validates on scenario %q, this run on %q: resume with the same --validate-set and --validate-on", scen, v.scen)
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
		v.bestScore = d.Float64("marlin.validate.best_score")
		v.bestStep = d.Int64("marlin.validate.best_step")
	}
	return d.Err()
}
