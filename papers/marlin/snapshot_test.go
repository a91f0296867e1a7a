package marlin

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/policy"
)

// smallValidated is a quick compact-variant run validating every 160 steps
// on 3 transfers.
func smallValidated(t *testing.T, steps int64, ck string, resume bool, csv *bytes.Buffer, by string) *Trained {
	t.Helper()
	c := TrainConfig{Base: base(t), Steps: steps, Envs: 2, Workers: 2, Seed: 3, Randomize: true,
		Variant: VariantCompact, Hidden: []int{16, 16}, BatchSize: 32, Buffer: 1000, GradientSteps: 2,
		ValidateEvery: 160, ValidateRuns: 3, ValidateBy: by, ValidationCSV: csv, Checkpoint: ck, Resume: resume}
	res, err := Train(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type valRow struct {
	step          int64
	time, retrans float64
	score         float64
	bestStep      int64
}

func parseValidation(t *testing.T, b []byte) []valRow {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != ValidationCSVHeader {
		t.Fatalf("validation CSV header %q, want %q", lines[0], ValidationCSVHeader)
	}
	var rows []valRow
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 8 {
			t.Fatalf("validation row %q: %d fields, want 8", l, len(f))
		}
		step, err1 := strconv.ParseInt(f[0], 10, 64)
		tm, err2 := strconv.ParseFloat(f[1], 64)
		rx, err3 := strconv.ParseFloat(f[2], 64)
		sc, err4 := strconv.ParseFloat(f[5], 64)
		best, err5 := strconv.ParseInt(f[6], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
			t.Fatalf("validation row %q does not parse", l)
		}
		rows = append(rows, valRow{step, tm, rx, sc, best})
	}
	return rows
}

// validationRow re-measures a scheme (a policy for marlin) on the
// validation transfers.
func validationRow(t *testing.T, sc Scheme, p *policy.Policy) Row {
	t.Helper()
	rows, _, err := Evaluate(context.Background(), EvalConfig{Base: base(t), Runs: 3, Losses: []float64{0.03},
		Schemes: []Scheme{sc}, Policy: p, Seed: SnapshotSeed})
	if err != nil {
		t.Fatal(err)
	}
	return rows[0]
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-5*math.Abs(b) }

// TestValidationChoosesBestSnapshot: with ValidateEvery, Train validates
// at every multiple of it and at the end, returns the snapshot with the
// lowest validation time (the earliest on a tie), whose time re-measured
// on the same transfers is the one recorded; the last snapshot is that of
// a run without validation, byte for byte (validation never touches the
// learner's random streams or environments).
func TestValidationChoosesBestSnapshot(t *testing.T) {
	var csv bytes.Buffer
	res := smallValidated(t, 640, "", false, &csv, "")
	rows := parseValidation(t, csv.Bytes())
	if len(rows) != 4 {
		t.Fatalf("%d validations in 640 steps every 160, want 4:\n%s", len(rows), csv.String())
	}
	best := rows[0]
	for i, r := range rows {
		if r.step != int64(160*(i+1)) {
			t.Errorf("validation %d at step %d, want %d", i, r.step, 160*(i+1))
		}
		if r.score != r.time {
			t.Errorf("step %d: score %g, want the transfer time %g", r.step, r.score, r.time)
		}
		if r.time < best.time {
			best = r
		}
	}
	if got := res.Policy.Meta.Extra["selected_step"]; got != strconv.FormatInt(best.step, 10) || res.Policy.Meta.Steps != best.step {
		t.Errorf("selected step %q (policy steps %d), want %d (times %v)", got, res.Policy.Meta.Steps, best.step, rows)
	}
	if rows[len(rows)-1].bestStep != best.step {
		t.Errorf("last row's best step %d, want %d", rows[len(rows)-1].bestStep, best.step)
	}
	if got := validationRow(t, Marlin, res.Policy).TransferTime; !near(got, best.time) {
		t.Errorf("chosen snapshot re-measured %.6f s, recorded %.6f s", got, best.time)
	}
	if res.Last == nil || res.Last.Meta.Steps != 640 {
		t.Fatalf("last snapshot %+v, want one at step 640", res.Last)
	}
	plain, err := Train(context.Background(), TrainConfig{Base: base(t), Steps: 640, Envs: 2, Workers: 2, Seed: 3, Randomize: true,
		Variant: VariantCompact, Hidden: []int{16, 16}, BatchSize: 32, Buffer: 1000, GradientSteps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Last != nil {
		t.Error("a run without validation returned a separate last snapshot")
	}
	for i, w := range plain.Policy.Net.Params {
		if res.Last.Net.Params[i] != w {
			t.Fatalf("last snapshot's parameter %d is %g, %g without validation", i, res.Last.Net.Params[i], w)
		}
	}
}

// TestValidationSurvivesResume: the best snapshot and the validation
// schedule are part of the checkpoint, so a resumed run's choice ranges
// over the validations before the interruption too, and a resume with a
// different interval is refused by name.
func TestValidationSurvivesResume(t *testing.T) {
	ck := filepath.Join(t.TempDir(), "v.ckpt")
	var first, second bytes.Buffer
	r1 := smallValidated(t, 320, ck, false, &first, "")
	res := smallValidated(t, 640, ck, true, &second, "")
	rows := append(parseValidation(t, first.Bytes()), parseValidation(t, second.Bytes())...)
	if len(rows) != 4 || rows[1].step != 320 || rows[2].step != 480 {
		t.Fatalf("validations %v, want steps 160, 320 before the resume and 480, 640 after", rows)
	}
	best := rows[0]
	for _, r := range rows {
		if r.time < best.time {
			best = r
		}
	}
	if res.Policy.Meta.Steps != best.step {
		t.Errorf("after the resume the chosen snapshot is from step %d, want %d (times %v)", res.Policy.Meta.Steps, best.step, rows)
	}
	if best.step <= 320 && !equalParams(res.Policy, r1.Policy) {
		t.Error("the snapshot chosen before the resume came back different")
	}

	c := TrainConfig{Base: base(t), Steps: 800, Envs: 2, Workers: 2, Seed: 3, Randomize: true,
		Variant: VariantCompact, Hidden: []int{16, 16}, BatchSize: 32, Buffer: 1000, GradientSteps: 2,
		ValidateEvery: 100, ValidateRuns: 3, Checkpoint: ck, Resume: true}
	if _, err := Train(context.Background(), c); err == nil || !strings.Contains(err.Error(), "--validate-every") {
		t.Errorf("resume with another validation interval: %v, want an error naming --validate-every", err)
	}
	c.ValidateEvery, c.ValidateBy = 160, ValidateByGoals
	if _, err := Train(context.Background(), c); err == nil || !strings.Contains(err.Error(), "--validate-by") {
		t.Errorf("resume choosing by another score: %v, want an error naming --validate-by", err)
	}
	for _, bad := range []TrainConfig{
		{Base: base(t), ValidateEvery: -1},
		{Base: base(t), ValidateEvery: 100, ValidateRuns: -2},
		{Base: base(t), ValidateEvery: 100, ValidateBy: "speed"},
		{Base: base(t), ValidateSets: []string{"bottleneck.schedule.0.at=7s"}},
	} {
		if _, err := Train(context.Background(), bad); err == nil {
			t.Errorf("validation every %d steps on %d transfers by %q accepted", bad.ValidateEvery, bad.ValidateRuns, bad.ValidateBy)
		}
	}
}

func equalParams(a, b *policy.Policy) bool {
	if len(a.Net.Params) != len(b.Net.Params) {
		return false
	}
	for i := range a.Net.Params {
		if a.Net.Params[i] != b.Net.Params[i] {
			return false
		}
	}
	return true
}

// TestValidationByGoals: choosing by the paper's agent's goals scores each
// snapshot by the larger of its time over 0.87 x CUBIC's and its
// retransmissions over 0.23 x CUBIC's, CUBIC measured on the same
// transfers, and returns the snapshot with the lowest score.
func TestValidationByGoals(t *testing.T) {
	var csv bytes.Buffer
	res := smallValidated(t, 640, "", false, &csv, ValidateByGoals)
	rows := parseValidation(t, csv.Bytes())
	cubic := validationRow(t, CUBIC, nil)
	best := rows[0]
	for _, r := range rows {
		want := max(r.time/(0.87*cubic.TransferTime), r.retrans/(0.23*cubic.Retrans))
		if !near(r.score, want) {
			t.Errorf("step %d: score %g, want max(%g / (0.87 x %g), %g / (0.23 x %g)) = %g", r.step, r.score, r.time, cubic.TransferTime, r.retrans, cubic.Retrans, want)
		}
		if r.score < best.score {
			best = r
		}
	}
	if res.Policy.Meta.Steps != best.step {
		t.Errorf("chosen snapshot from step %d, want %d (rows %v)", res.Policy.Meta.Steps, best.step, rows)
	}
	got := validationRow(t, Marlin, res.Policy)
	if !near(got.TransferTime, best.time) || !near(got.Retrans, best.retrans) {
		t.Errorf("chosen snapshot re-measured %.6f s / %.6g retransmissions, recorded %.6f / %.6g", got.TransferTime, got.Retrans, best.time, best.retrans)
	}
	if !strings.Contains(res.Policy.Meta.Extra["validation"], "CUBIC's") {
		t.Errorf("policy metadata %q does not say what the score was", res.Policy.Meta.Extra["validation"])
	}
}

// TestValidationOverrides: --validate-set changes the validation
// transfers' scenario only: the chosen snapshot's recorded time is the
// one measured with the override (here the switch at 7 s instead of 10),
// and a bad override is refused by name before training.
func TestValidationOverrides(t *testing.T) {
	var csv bytes.Buffer
	c := TrainConfig{Base: base(t), Steps: 320, Envs: 2, Workers: 2, Seed: 3, Randomize: true,
		Variant: VariantCompact, Hidden: []int{16, 16}, BatchSize: 32, Buffer: 1000, GradientSteps: 2,
		ValidateEvery: 160, ValidateRuns: 3, ValidateSets: []string{"bottleneck.schedule.0.at=7s"}, ValidationCSV: &csv}
	res, err := Train(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	rows := parseValidation(t, csv.Bytes())
	var recorded float64
	for _, r := range rows {
		if r.step == res.Policy.Meta.Steps {
			recorded = r.time
		}
	}
	at7 := base(t).Clone()
	if err := at7.Set("bottleneck.schedule.0.at", "7s"); err != nil {
		t.Fatal(err)
	}
	if err := at7.Validate(); err != nil {
		t.Fatal(err)
	}
	measure := func(s *scenario.Scenario) float64 {
		r, _, err := Evaluate(context.Background(), EvalConfig{Base: s, Runs: 3, Losses: []float64{0.03},
			Schemes: []Scheme{Marlin}, Policy: res.Policy, Seed: SnapshotSeed})
		if err != nil {
			t.Fatal(err)
		}
		return r[0].TransferTime
	}
	if got := measure(at7); !near(got, recorded) {
		t.Errorf("chosen snapshot with the switch at 7 s: %.6f s, recorded %.6f s", got, recorded)
	}
	if at10 := measure(base(t)); near(at10, recorded) {
		t.Errorf("the override changed nothing: %.6f s at 10 s as at 7 s", at10)
	}
	if !strings.Contains(res.Policy.Meta.Extra["validation"], "bottleneck.schedule.0.at=7s") {
		t.Errorf("policy metadata %q does not name the override", res.Policy.Meta.Extra["validation"])
	}
	for _, bad := range []string{"bottleneck.schedule.0.at", "bottleneck.nosuch=1", "bottleneck.schedule.0.at=soon"} {
		c.ValidateSets = []string{bad}
		if _, err := Train(context.Background(), c); err == nil || !strings.Contains(err.Error(), "validation") {
			t.Errorf("override %q: %v, want an error about the validation scenario", bad, err)
		}
	}
}

// TestValidationOnTrainingTimelines: with ValidateOnTraining each
// validation transfer has its own switch time and background scale, drawn
// from the training ranges by a stream of its seed. Each run of Evaluate
// with the Timeline equals a run on the base with that run's draw written
// in by hand (so the draw is the run's, the same for any scheme); the
// draws cover the range without the excluded interval; the chosen
// snapshot's recorded time is the one re-measured on the drawn timelines,
// not on the paper's; and a run without Randomize is refused.
func TestValidationOnTrainingTimelines(t *testing.T) {
	tl := Timeline{SwitchRange: [2]time.Duration{5 * time.Second, 15 * time.Second}, SwitchExclude: [2]time.Duration{9 * time.Second, 11 * time.Second},
		BackgroundScale: [2]float64{0.8, 1.2}}
	const runs = 3
	drawn := func(seed uint64) (time.Duration, float64) {
		rnd := rand.New(rand.NewPCG(seed, timelineStream))
		r, x := tl.SwitchRange, tl.SwitchExclude
		at := time.Duration(drawExcluding(rnd.Float64(), float64(r[0]), float64(r[1]), float64(x[0]), float64(x[1]))).Round(time.Millisecond)
		return at, drawExcluding(rnd.Float64(), tl.BackgroundScale[0], tl.BackgroundScale[1], 0, 0)
	}
	var ats []time.Duration
	for s := uint64(1); s <= 200; s++ {
		at, k := drawn(SnapshotSeed + s)
		if at < 5*time.Second || at > 15*time.Second || (at > 9*time.Second && at < 11*time.Second) || k < 0.8 || k > 1.2 {
			t.Fatalf("seed %d: switch at %v, background x%g: outside the ranges", s, at, k)
		}
		ats = append(ats, at)
	}
	if slices.Min(ats) > 6*time.Second || slices.Max(ats) < 14*time.Second {
		t.Errorf("200 draws span %v-%v, want most of 5-15 s", slices.Min(ats), slices.Max(ats))
	}

	_, outs, err := Evaluate(context.Background(), EvalConfig{Base: base(t), Runs: runs, Losses: []float64{0.03},
		Schemes: []Scheme{CUBIC}, Seed: SnapshotSeed, Timeline: tl})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		at, k := drawn(o.Seed)
		s := base(t).Clone()
		s.Bottleneck.Schedule[0].At = scenario.Dur(at)
		for i := range s.Background {
			scaleUDP(&s.Background[i], k)
		}
		_, one, err := Evaluate(context.Background(), EvalConfig{Base: s, Runs: 1, Losses: []float64{0.03},
			Schemes: []Scheme{CUBIC}, Seed: o.Seed - 1})
		if err != nil {
			t.Fatal(err)
		}
		if one[0].TransferTime != o.TransferTime || one[0].Retransmissions != o.Retransmissions {
			t.Errorf("seed %d: drawn timeline %.6f s / %g retransmissions, switch at %v and x%g by hand %.6f / %g",
				o.Seed, o.TransferTime, o.Retransmissions, at, k, one[0].TransferTime, one[0].Retransmissions)
		}
	}

	var csv bytes.Buffer
	c := TrainConfig{Base: base(t), Steps: 320, Envs: 2, Workers: 2, Seed: 3, Randomize: true,
		Variant: VariantCompact, Hidden: []int{16, 16}, BatchSize: 32, Buffer: 1000, GradientSteps: 2,
		ValidateEvery: 160, ValidateRuns: runs, ValidateOn: ValidateOnTraining, ValidationCSV: &csv}
	res, err := Train(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var recorded float64
	for _, r := range parseValidation(t, csv.Bytes()) {
		if r.step == res.Policy.Meta.Steps {
			recorded = r.time
		}
	}
	measure := func(tl Timeline) float64 {
		r, _, err := Evaluate(context.Background(), EvalConfig{Base: base(t), Runs: runs, Losses: []float64{0.03},
			Schemes: []Scheme{Marlin}, Policy: res.Policy, Seed: SnapshotSeed, Timeline: tl})
		if err != nil {
			t.Fatal(err)
		}
		return r[0].TransferTime
	}
	if got := measure(c.EnvConfigFor().Timeline); !near(got, recorded) {
		t.Errorf("chosen snapshot on the drawn timelines: %.6f s, recorded %.6f s", got, recorded)
	}
	if paper := measure(Timeline{}); near(paper, recorded) {
		t.Errorf("drawing the timelines changed nothing: %.6f s on the paper's as on the drawn", paper)
	}
	if m := res.Policy.Meta.Extra["validation"]; !strings.Contains(m, "timeline drawn from the training ranges: switch 5s-15s, background x0.8-1.2") {
		t.Errorf("policy metadata %q does not name the drawn timeline", m)
	}
	c.ValidationCSV, c.Checkpoint = nil, filepath.Join(t.TempDir(), "run.ckpt")
	if _, err := Train(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	c.Steps, c.Resume, c.ValidateOn = 480, true, ValidateOnPaper
	if _, err := Train(context.Background(), c); err == nil || !strings.Contains(err.Error(), "--validate-on") {
		t.Errorf("resuming a run validated on drawn timelines with the paper's: %v, want an error naming --validate-on", err)
	}
	c.Steps, c.Resume, c.Checkpoint, c.ValidateOn = 320, false, "", ValidateOnTraining
	c.Randomize = false
	if _, err := Train(context.Background(), c); err == nil || !strings.Contains(err.Error(), "Randomize") {
		t.Errorf("validation on training timelines without Randomize: %v, want an error naming Randomize", err)
	}
	c.Randomize, c.ValidateOn = true, "uhf"
	if _, err := Train(context.Background(), c); err == nil || !strings.Contains(err.Error(), `"uhf"`) {
		t.Errorf("validation on %q: %v, want an error naming it", c.ValidateOn, err)
	}
}
