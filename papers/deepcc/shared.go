package deepcc

import (
	"fmt"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// SchemeDeepCC names DeepCC in a FlowSpec; any other scheme is a
// registered controller (cubic, bbr, vegas, newreno, ...).
const SchemeDeepCC = "deepcc"

// FlowSpec is one flow of a shared-bottleneck run.
type FlowSpec struct {
	// Label names the flow in results (unique within a run).
	Label string `json:"label"`
	// Scheme is SchemeDeepCC or a controller name.
	Scheme string `json:"scheme"`
	// Goal is DeepCC's fixed goal, or the tuner's start with Target or
	// Mode (at most one of them).
	Goal   Goal          `json:"goal,omitzero"`
	Target *tuner.Target `json:"target,omitempty"`
	Mode   Mode          `json:"mode,omitempty"`
	// Start is when the flow starts.
	Start time.Duration `json:"start_ns,omitempty"`
}

// SharedRun is several flows over one bottleneck (the paper's
// coexistence experiments, Figures 11-12, and the convergence experiment,
// Figure 15). Every DeepCC flow has its own agent state and tuner; they
// share the policy.
type SharedRun struct {
	Link     Link
	Duration time.Duration
	Seed     uint64
	Flows    []FlowSpec
	// Sample is the throughput time series' interval [500 ms].
	Sample time.Duration
	// DecisionRTTs and TuneRTTs as in Run; Tuner and DelayWindow
	// configure every DeepCC flow's tuner.
	DecisionRTTs, TuneRTTs float64
	Tuner                  tuner.Config
	DelayWindow            int
}

// FlowOutcome is one flow of a shared run.
type FlowOutcome struct {
	FlowSpec
	Outcome
	// Mbps is the flow's delivery rate per sample interval (0 before it
	// starts), aligned with SharedResult.T.
	Mbps []float64 `json:"mbps"`
	// FinalGoal is a DeepCC flow's goal at the end.
	FinalGoal *Goal `json:"final_goal,omitempty"`
}

// SharedResult is a shared run's outcome.
type SharedResult struct {
	// T are the sample times (the end of each interval), seconds.
	T     []float64     `json:"t_s"`
	Flows []FlowOutcome `json:"flows"`
	// Jain is Jain's index over the flows' goodputs (each over its own
	// active time); Utilization the bottleneck's.
	Jain        float64 `json:"jain"`
	Utilization float64 `json:"utilization"`
}

// handshakePoll is how often an agent whose flow has not yet completed its
// handshake checks again.
const handshakePoll = 5 * time.Millisecond

// sharedAgent is one DeepCC flow in a shared run.
type sharedAgent struct {
	e       *Env
	ag      *agentRun
	started bool
	next    clock.Time
	a, gain float64
	w       units.Bytes
}

// RunShared runs r: the flows start at their Start times and run to the
// end; DeepCC flows act every decision interval of their own. p is used
// from this goroutine only.
func RunShared(p *policy.Policy, r SharedRun) (SharedResult, error) {
	if len(r.Flows) == 0 {
		return SharedResult{}, fmt.Errorf("deepcc: a shared run needs at least one flow")
	}
	if r.Duration <= 0 {
		return SharedResult{}, fmt.Errorf("deepcc: run length %v must be positive", r.Duration)
	}
	if r.Sample == 0 {
		r.Sample = 500 * time.Millisecond
	}
	s, err := r.Link.Scenario(r.Seed, r.Duration, scenario.CC{Name: "cubic"})
	if err != nil {
		return SharedResult{}, err
	}
	s.Name = "deepcc-shared-" + r.Link.Name
	s.Sample = scenario.Dur(r.Sample)
	s.Flows = s.Flows[:0]
	hasDeepCC := false
	for _, f := range r.Flows {
		if f.Start < 0 || f.Start >= r.Duration {
			return SharedResult{}, fmt.Errorf("deepcc: flow %q starts at %v, outside the run [0, %v)", f.Label, f.Start, r.Duration)
		}
		c := scenario.CC{Name: f.Scheme}
		if f.Scheme == SchemeDeepCC {
			hasDeepCC = true
			c = scenario.CC{Name: "external", Params: map[string]float64{"iw": 10, "max_window": float64(MaxWindow)}}
			if err := f.Goal.Validate(); err != nil {
				return SharedResult{}, fmt.Errorf("deepcc: flow %q: %w", f.Label, err)
			}
		} else if f.Target != nil || f.Mode != "" {
			return SharedResult{}, fmt.Errorf("deepcc: flow %q: only DeepCC flows take a target or a mode", f.Label)
		}
		s.Flows = append(s.Flows, scenario.Flow{Name: f.Label, CC: c, Start: scenario.Dur(f.Start)})
	}
	if hasDeepCC {
		if p == nil {
			return SharedResult{}, fmt.Errorf("deepcc: a shared run with DeepCC flows needs a policy")
		}
		if err := p.Check(PolicySpaces()); err != nil {
			return SharedResult{}, err
		}
	}
	if err := s.Validate(); err != nil {
		return SharedResult{}, fmt.Errorf("deepcc: shared run: %w", err)
	}
	n, err := network.Build(s)
	if err != nil {
		return SharedResult{}, fmt.Errorf("deepcc: shared run on %s: %w", r.Link.Name, err)
	}
	if len(n.Flows) != len(r.Flows) {
		return SharedResult{}, fmt.Errorf("deepcc: shared run built %d flows for %d specs", len(n.Flows), len(r.Flows))
	}
	end := clock.Time(r.Duration)
	var agents []*sharedAgent
	agentOf := make([]*sharedAgent, len(r.Flows))
	for i, f := range r.Flows {
		if f.Scheme != SchemeDeepCC {
			continue
		}
		e, err := NewEnv(EnvConfig{DecisionRTTs: r.DecisionRTTs})
		if err != nil {
			return SharedResult{}, err
		}
		e.attach(n, n.Flows[i], r.Link, f.Goal, end)
		ag, err := newAgentRun(e, Run{Goal: f.Goal, Target: f.Target, Mode: f.Mode, Tuner: r.Tuner,
			DelayWindow: r.DelayWindow, DecisionRTTs: r.DecisionRTTs, TuneRTTs: r.TuneRTTs})
		if err != nil {
			return SharedResult{}, fmt.Errorf("deepcc: flow %q: %w", f.Label, err)
		}
		sa := &sharedAgent{e: e, ag: ag, next: clock.Time(f.Start)}
		agents = append(agents, sa)
		agentOf[i] = sa
	}
	for {
		next := end
		for _, a := range agents {
			next = min(next, a.next)
		}
		n.Sched.RunUntil(next)
		now := n.Now()
		if n.Sched.Stopped() || now >= end {
			break
		}
		for _, a := range agents {
			if a.next > now {
				continue
			}
			if !a.started {
				if a.e.flow.Sender.RTT().Samples() == 0 {
					a.next = now.Add(handshakePoll)
					continue
				}
				a.e.begin()
				a.started = true
			} else {
				a.e.observe(a.a, a.gain, a.w)
				if err := a.ag.afterStep(); err != nil {
					return SharedResult{}, err
				}
			}
			var dt time.Duration
			a.a, a.gain, a.w, dt = a.e.act(p.ActInto(a.e.Observation()))
			a.next = now.Add(dt)
		}
	}
	sum := experiment.Summarize(n, 0)
	res := SharedResult{Jain: sum.JainOrZero()}
	if len(sum.Links) > 0 {
		res.Utilization = sum.Links[0].Utilization
	}
	for _, t := range n.Series.T {
		res.T = append(res.T, t.Seconds())
	}
	for i, f := range r.Flows {
		fo := FlowOutcome{FlowSpec: f, Outcome: outcomeOf(sum, n, i)}
		fs := n.Series.Flows[i]
		fo.Mbps = make([]float64, len(res.T))
		copy(fo.Mbps[fs.Offset:], fs.Mbps)
		if a := agentOf[i]; a != nil {
			g := a.e.Goal()
			fo.FinalGoal = &g
		}
		res.Flows = append(res.Flows, fo)
	}
	return res, nil
}
