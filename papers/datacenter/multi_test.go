package datacenter

import (
	"math"
	"slices"
	"sync"
	"testing"
)

func TestAgentsControlTheirSubsets(t *testing.T) {
	for _, k := range []int{2, 3} {
		cfg := shortConfig(t)
		cfg.Agents = k
		m, err := NewSim(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// The subsets partition the flows in order.
		next := 0
		for i := range k {
			lo, hi := m.AgentFlows(i)
			if lo != next || hi <= lo {
				t.Fatalf("K=%d: agent %d controls [%d, %d), want it to start at %d and be non-empty", k, i, lo, hi, next)
			}
			next = hi
		}
		if next != m.NumFlows() {
			t.Fatalf("K=%d: subsets cover %d of %d flows", k, next, m.NumFlows())
		}
		m.Reset(5)
		want := make([]Params, k)
		for i := range k {
			want[i] = GridParams(3*i + 1)
			if err := m.Apply(i, want[i]); err != nil {
				t.Fatal(err)
			}
		}
		m.Advance()
		for j := range m.NumFlows() {
			_, agent, p := m.Flow(j)
			lo, hi := m.AgentFlows(agent)
			if j < lo || j >= hi {
				t.Fatalf("K=%d: flow %d reports agent %d, whose subset is [%d, %d)", k, j, agent, lo, hi)
			}
			if p != want[agent] {
				t.Fatalf("K=%d: flow %d of agent %d has %v, want %v", k, j, agent, p, want[agent])
			}
		}
		// Changing one agent's parameters leaves the others' flows alone.
		if err := m.Apply(0, DefaultParams); err != nil {
			t.Fatal(err)
		}
		for j := range m.NumFlows() {
			_, agent, p := m.Flow(j)
			if agent == 0 && p != DefaultParams || agent != 0 && p != want[agent] {
				t.Fatalf("K=%d: after changing agent 0, flow %d (agent %d) has %v", k, j, agent, p)
			}
		}
		var mean float64
		for i := range k {
			mean += m.PartialReward(i) / float64(k)
		}
		if math.Abs(mean-m.TeamReward()) > 1e-12 {
			t.Fatalf("K=%d: team reward %v, mean of partial rewards %v", k, m.TeamReward(), mean)
		}
	}
}

// TestMultiVecRowsAndViews checks the multi-agent runner: rows are agent
// observations of their simulation, all agents of a simulation get the team
// reward, and stepping the K views in lockstep from K goroutines gives
// exactly what stepping the joint runner gives.
func TestMultiVecRowsAndViews(t *testing.T) {
	cfg := shortConfig(t)
	cfg.Agents = 2
	const envs = 2
	joint, err := NewMultiVec(cfg, envs, 1)
	if err != nil {
		t.Fatal(err)
	}
	if joint.NumEnvs() != envs*2 {
		t.Fatalf("NumEnvs %d, want %d", joint.NumEnvs(), envs*2)
	}
	b := joint.Reset(9)
	d := joint.ObservationSpace().Dim()
	for e := range envs {
		for i := range 2 {
			r := e*2 + i
			if !slices.Equal(b.Obs[r*d:(r+1)*d], joint.Sims()[e].Observation(i)) {
				t.Fatalf("row %d is not agent %d of simulation %d", r, i, e)
			}
		}
	}
	act := func(step, row int) float32 { return float32((step*7 + row*5) % 12) }
	steps := cfg.Steps + 2 // crosses an automatic reset
	var jointObs [][]float32
	var jointRew [][]float64
	for s := range steps {
		a := make([]float32, envs*2)
		for r := range a {
			a[r] = act(s, r)
		}
		b := joint.Step(a)
		for e := range envs {
			if b.Reward[2*e] != b.Reward[2*e+1] {
				t.Fatalf("step %d: the agents of simulation %d got rewards %v and %v, want the team reward for both", s, e, b.Reward[2*e], b.Reward[2*e+1])
			}
			if want := s == cfg.Steps-1; b.Truncated[2*e] != want || b.Terminated[2*e] {
				t.Fatalf("step %d: truncated %v terminated %v", s, b.Truncated[2*e], b.Terminated[2*e])
			}
		}
		jointObs = append(jointObs, slices.Clone(b.Obs))
		jointRew = append(jointRew, slices.Clone(b.Reward))
	}
	eps := joint.Episodes(nil)
	if len(eps) != envs*2 {
		t.Fatalf("%d finished episodes, want one per row (%d)", len(eps), envs*2)
	}

	mv, err := NewMultiVec(cfg, envs, 2)
	if err != nil {
		t.Fatal(err)
	}
	views := mv.Views()
	for _, v := range views {
		v.Reset(9) // the first resets the simulations, the second only reads
	}
	var wg sync.WaitGroup
	got := make([][][]float32, 2)
	gotRew := make([][][]float64, 2)
	for i, v := range views {
		wg.Go(func() {
			for s := range steps {
				a := make([]float32, envs)
				for e := range envs {
					a[e] = act(s, e*2+i)
				}
				b := v.Step(a)
				got[i] = append(got[i], slices.Clone(b.Obs))
				gotRew[i] = append(gotRew[i], slices.Clone(b.Reward))
			}
		})
	}
	wg.Wait()
	for s := range steps {
		for i := range 2 {
			for e := range envs {
				r := e*2 + i
				if !slices.Equal(got[i][s][e*d:(e+1)*d], jointObs[s][r*d:(r+1)*d]) {
					t.Fatalf("step %d: view %d row %d differs from the joint runner's row %d", s, i, e, r)
				}
				if gotRew[i][s][e] != jointRew[s][r] {
					t.Fatalf("step %d: view %d reward %v, joint %v", s, i, gotRew[i][s][e], jointRew[s][r])
				}
			}
		}
	}
	for i, v := range views {
		if eps := v.Episodes(nil); len(eps) != envs {
			t.Fatalf("view %d reports %d episodes, want %d", i, len(eps), envs)
		}
	}
}
