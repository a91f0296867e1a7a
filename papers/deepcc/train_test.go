package deepcc

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/cclab/cclab/learn/rl/policy"
)

// meta0 is an empty policy metadata.
var meta0 = policy.Meta{Algo: "ddpg"}

// smokeTrain trains a tiny agent for a few hundred steps and returns the
// policy's bytes and the learning-curve rows.
func smokeTrain(t *testing.T, seed uint64) ([]byte, []map[string]float64) {
	t.Helper()
	var buf bytes.Buffer
	res, err := Train(context.Background(), TrainConfig{
		Sampler: Sampler{Traces: []string{testTrace}, Length: 3 * time.Second},
		Steps:   600, Envs: 2, Workers: 2, Seed: seed,
		Hidden: []int{16, 16}, BatchSize: 32, LearningStarts: 100, LogEvery: 100,
		CSV: &buf,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 600 || res.Policy.Meta.Steps != 600 || res.Policy.Meta.Algo != "ddpg" {
		t.Errorf("trained %d steps, policy meta %+v; want 600 steps of ddpg", res.Steps, res.Policy.Meta)
	}
	// The policy's parameters and normaliser statistics (its metadata
	// holds the training wall time, which differs between runs).
	p := res.Policy.Clone()
	p.Meta = meta0
	pb, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) < 3 {
		t.Fatalf("learning curve: %d rows, err %v", len(recs), err)
	}
	var rows []map[string]float64
	for _, rec := range recs[1:] {
		row := map[string]float64{}
		for i, h := range recs[0] {
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil {
				t.Fatalf("column %s: %q is not a number", h, rec[i])
			}
			row[h] = v
		}
		rows = append(rows, row)
	}
	return pb, rows
}

// TestSmokeTraining: a few hundred steps of goal-conditioned DDPG on the
// real environment run without NaN, the losses move, the actor acts in
// bounds and the same seed gives the same policy.
func TestSmokeTraining(t *testing.T) {
	pb, rows := smokeTrain(t, 5)
	first, last := rows[0], rows[len(rows)-1]
	for _, r := range rows {
		for _, k := range []string{"actor_loss", "critic_loss", "mean_q"} {
			if math.IsNaN(r[k]) || math.IsInf(r[k], 0) {
				t.Fatalf("step %g: %s = %g", r["step"], k, r[k])
			}
		}
	}
	if last["updates"] <= first["updates"] || last["critic_loss"] == first["critic_loss"] || last["actor_loss"] == first["actor_loss"] {
		t.Errorf("losses did not move: first row %v, last row %v", first, last)
	}
	pb2, _ := smokeTrain(t, 5)
	if !bytes.Equal(pb, pb2) {
		t.Errorf("two trainings with seed 5 gave different policies")
	}
	pb3, _ := smokeTrain(t, 6)
	if bytes.Equal(pb, pb3) {
		t.Errorf("seeds 5 and 6 gave identical policies")
	}
}
