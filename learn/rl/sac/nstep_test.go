package sac

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"github.com/cclab/cclab/learn/rl"
)

type added struct {
	obs, act, next float32
	ret            float64
	done           float32
	guide          []float32
}

type recorder struct{ got []added }

func (r *recorder) AddGuided(obs, act, guide []float32, rew float64, next []float32, done float32) {
	r.got = append(r.got, added{obs[0], act[0], next[0], rew, done, append([]float32(nil), guide...)})
}

// TestNStepQueueHandComputed checks 3-step transitions with γ = 0.5
// against values computed by hand: rewards 1, 2, 4, 8, 16 from states
// 0-4, the episode ending after state 4's step, by termination and then by
// truncation. The bootstrap weight (1 - done) γ must be γ^m for an m-step
// transition that did not terminate, and 0 for one that did. A guided
// queue gives each transition the guide of the state it leaves.
func TestNStepQueueHandComputed(t *testing.T) {
	const gamma = 0.5
	rewards := []float64{1, 2, 4, 8, 16}
	for _, c := range []struct{ terminated, guided bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
		terminated := c.terminated
		var r recorder
		q := newNStepQueue(3, 1, 1, gamma, c.guided)
		guide := func(obs float32) []float32 {
			if !c.guided {
				return nil
			}
			return []float32{-obs}
		}
		for i, rew := range rewards {
			last := i == len(rewards)-1
			q.push(&r, []float32{float32(i)}, []float32{float32(10 + i)}, guide(float32(i)), rew, []float32{float32(i + 1)}, terminated && last, last)
		}
		// Second episode of one step: nothing of the first may leak in.
		q.push(&r, []float32{100}, []float32{110}, guide(100), 3, []float32{101}, true, true)
		// s0: 1 + 0.5·2 + 0.25·4 = 3 → s3; s1: 2 + 2 + 2 = 6 → s4;
		// s2: 4 + 4 + 4 = 12 → s5; s3: 8 + 8 = 16 → s5; s4: 16 → s5.
		want := []added{
			{0, 10, 3, 3, 0.75, nil},
			{1, 11, 4, 6, 0.75, nil},
			{2, 12, 5, 12, 0.75, nil},
			{3, 13, 5, 16, 0.5, nil},
			{4, 14, 5, 16, 0, nil},
			{100, 110, 101, 3, 1, nil},
		}
		steps := []int{3, 3, 3, 2, 1, 1}
		if terminated {
			want[2].done, want[3].done, want[4].done = 1, 1, 1
		}
		if len(r.got) != len(want) {
			t.Fatalf("terminated=%v: %d transitions, want %d: %+v", terminated, len(r.got), len(want), r.got)
		}
		for i, w := range want {
			g := r.got[i]
			if g.obs != w.obs || g.act != w.act || g.next != w.next || math.Abs(g.ret-w.ret) > 1e-12 || math.Abs(float64(g.done-w.done)) > 1e-7 {
				t.Errorf("terminated=%v: transition %d = %+v, want %+v", terminated, i, g, w)
			}
			weight := float64(1-g.done) * gamma
			wantW := math.Pow(gamma, float64(steps[i]))
			if w.done == 1 {
				wantW = 0
			}
			if math.Abs(weight-wantW) > 1e-7 {
				t.Errorf("terminated=%v: transition %d bootstraps with weight %g, want %g", terminated, i, weight, wantW)
			}
			if c.guided && (len(g.guide) != 1 || g.guide[0] != -g.obs) || !c.guided && len(g.guide) != 0 {
				t.Errorf("guided=%v: transition %d from state %g has guide %v", c.guided, i, g.obs, g.guide)
			}
		}
	}
}

// TestNStepTraining: with NStep 3, only the transitions three steps old
// (or ended) reach the replay buffer; the same seed gives identical
// parameters; a checkpoint holds the pending transitions, so a resumed run
// equals an uninterrupted one; and the result differs from 1-step SAC.
func TestNStepTraining(t *testing.T) {
	cfg := smallConfig(5)
	cfg.NStep = 3
	a, err := New(newPendulumVec(t, 2), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	train(t, a, 300)
	// 150 steps per environment, no episode ended (Pendulum's last 200):
	// each environment holds its 2 latest steps.
	if got, want := a.replay.Len(), 300-2*2; got != want {
		t.Errorf("replay holds %d transitions after 300 steps, want %d", got, want)
	}
	b, _ := New(newPendulumVec(t, 2), cfg, nil)
	train(t, b, 300)
	if !bytes.Equal(paramBytes(a), paramBytes(b)) {
		t.Errorf("same seed and NStep gave different parameters")
	}
	one, _ := New(newPendulumVec(t, 2), smallConfig(5), nil)
	train(t, one, 300)
	if bytes.Equal(paramBytes(a), paramBytes(one)) {
		t.Errorf("NStep 3 gave the same parameters as 1-step SAC")
	}

	first, _ := New(newPendulumVec(t, 2), cfg, nil)
	train(t, first, 150)
	path := filepath.Join(t.TempDir(), "sac.ckpt")
	if err := rl.SaveCheckpoint(path, first, 1); err != nil {
		t.Fatal(err)
	}
	resumed, _ := New(newPendulumVec(t, 2), cfg, nil)
	if _, err := rl.LoadCheckpoint(path, resumed); err != nil {
		t.Fatal(err)
	}
	train(t, resumed, 300)
	if !bytes.Equal(paramBytes(a), paramBytes(resumed)) {
		t.Errorf("resumed NStep run differs from the uninterrupted run")
	}

	// 250 steps per environment: the first episodes ended and flushed
	// their queues, the second ones hold 2 steps each again.
	train(t, a, 500)
	if got, want := a.replay.Len(), 500-2*2; got != want {
		t.Errorf("replay holds %d transitions after 500 steps, want %d", got, want)
	}

	if _, err := New(newPendulumVec(t, 1), Config{NStep: -1}, nil); err == nil {
		t.Errorf("NStep -1 accepted")
	}
}
