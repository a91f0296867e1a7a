package deepcc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/netsim/trace"
)

// Link describes one run's bottleneck: a Mahimahi cellular trace (from a
// start offset) or a fixed rate (optionally stepping to another rate once),
// with a one-way propagation delay, a DropTail queue and optional random
// loss. The agent's flow is the only traffic, as in the paper's Mahimahi
// experiments.
type Link struct {
	// Name labels the link in reports (the trace's file name, or the rate).
	Name string `json:"name"`
	// Trace is the path of a Mahimahi trace; empty for a fixed-rate link.
	Trace string `json:"trace,omitempty"`
	// TraceStart is where in the trace the run starts.
	TraceStart time.Duration `json:"trace_start_ns,omitempty"`
	// Rate is a fixed-rate link's rate, bits/s.
	Rate units.Bandwidth `json:"rate_bps,omitempty"`
	// ChangeAt, if positive, switches a fixed-rate link to ChangeRate at
	// that time.
	ChangeAt   time.Duration   `json:"change_at_ns,omitempty"`
	ChangeRate units.Bandwidth `json:"change_rate_bps,omitempty"`
	// Delay is the one-way propagation delay.
	Delay time.Duration `json:"delay_ns"`
	// Queue is the DropTail limit, packets.
	Queue int `json:"queue_packets"`
	// Loss is the Bernoulli random-loss probability.
	Loss float64 `json:"loss,omitempty"`
	// Capacity is the reference capacity that normalises the throughput
	// measurement: the link's mean rate over the run (for traces, the
	// trace's mean over [TraceStart, TraceStart + run length)), bits/s.
	Capacity units.Bandwidth `json:"capacity_bps"`
	// Profile is the scenario profile of the link's runs (scenario.Scenario
	// Profile: "linux" turns on Linux's optional behaviours); empty for the
	// default.
	Profile string `json:"profile,omitempty"`
}

// Validate reports a link that cannot be simulated.
func (l Link) Validate() error {
	switch {
	case l.Trace == "" && l.Rate <= 0:
		return fmt.Errorf("deepcc: link %q has neither a trace nor a positive rate", l.Name)
	case l.Trace != "" && l.Rate > 0:
		return fmt.Errorf("deepcc: link %q has both a trace and a rate", l.Name)
	case l.ChangeAt < 0 || (l.ChangeAt > 0 && (l.ChangeRate <= 0 || l.Trace != "")):
		return fmt.Errorf("deepcc: link %q: a rate change needs a fixed-rate link and a positive new rate", l.Name)
	case l.Delay < 0 || l.TraceStart < 0:
		return fmt.Errorf("deepcc: link %q: delay %v and trace start %v must be >= 0", l.Name, l.Delay, l.TraceStart)
	case l.Queue < 1:
		return fmt.Errorf("deepcc: link %q: queue limit %d packets must be >= 1", l.Name, l.Queue)
	case !(l.Loss >= 0 && l.Loss < 1):
		return fmt.Errorf("deepcc: link %q: loss %g must be in [0, 1)", l.Name, l.Loss)
	case !(l.Capacity > 0):
		return fmt.Errorf("deepcc: link %q: reference capacity %v must be positive", l.Name, l.Capacity)
	}
	return nil
}

// Scenario returns a validated scenario for one run of duration on this
// link with a single bulk flow named "flow" using controller c.
func (l Link) Scenario(seed uint64, duration time.Duration, c scenario.CC) (*scenario.Scenario, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	s := &scenario.Scenario{
		Name:     "deepcc-" + l.Name,
		Seed:     seed,
		Duration: scenario.Dur(duration),
		Bottleneck: scenario.Link{
			Delay: scenario.Dur(l.Delay),
			Queue: scenario.Queue{Discipline: "droptail", Limit: scenario.Size{Raw: strconv.Itoa(l.Queue)}},
		},
		Flows:   []scenario.Flow{{Name: "flow", CC: c}},
		Profile: l.Profile,
	}
	if l.Trace != "" {
		s.Bottleneck.Trace = l.Trace
		s.Bottleneck.TraceMode = "exact"
		s.Bottleneck.TraceStart = scenario.Dur(l.TraceStart)
	} else {
		s.Bottleneck.Rate = scenario.RateOf(l.Rate)
		if l.ChangeAt > 0 {
			s.Bottleneck.Schedule = []scenario.Change{{At: scenario.Dur(l.ChangeAt), Rate: scenario.RateOf(l.ChangeRate)}}
		}
	}
	if l.Loss > 0 {
		s.Bottleneck.Loss = scenario.Loss{Model: "bernoulli", P: l.Loss}
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("deepcc: link %q: %w", l.Name, err)
	}
	return s, nil
}

// TraceSet loads Mahimahi traces once and shares them (read-only) between
// environments and evaluation runs. It is safe for concurrent use.
type TraceSet struct {
	mu     sync.Mutex
	traces map[string]*trace.Trace
}

// NewTraceSet returns an empty set.
func NewTraceSet() *TraceSet { return &TraceSet{traces: map[string]*trace.Trace{}} }

// Load returns the parsed trace at path, reading it on first use.
func (ts *TraceSet) Load(path string) (*trace.Trace, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.traces[path]; ok {
		return t, nil
	}
	// The shared cache finds the traces cclab ships by name when path does
	// not exist, so the default trace set works from any directory.
	t, err := trace.Shared.Load(path)
	if err != nil {
		return nil, fmt.Errorf("deepcc: trace: %w", err)
	}
	ts.traces[path] = t
	return t, nil
}

// MeanRate returns a looping trace's mean capacity over [from, from+length),
// bits/s: opportunities x trace.PacketSize x 8 / length.
func MeanRate(t *trace.Trace, from, length time.Duration) units.Bandwidth {
	if length <= 0 {
		return 0
	}
	var n int64
	c := t.CursorAt(from)
	for end := from + length; c.Time() < end; c.Next() {
		n += int64(c.Count())
	}
	return units.BandwidthFromDelta(units.Bytes(n)*trace.PacketSize, length)
}

// TraceName is a trace file's name without directories and the .gz suffix.
func TraceName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".gz")
}

// TraceLink returns the link over the trace at path (loaded through ts)
// from start, with its reference capacity measured over length.
func TraceLink(ts *TraceSet, path string, start, length time.Duration, delay time.Duration, queue int, loss float64) (Link, error) {
	t, err := ts.Load(path)
	if err != nil {
		return Link{}, err
	}
	c := MeanRate(t, start, length)
	if c <= 0 {
		return Link{}, fmt.Errorf("deepcc: trace %s has no delivery opportunity in [%v, %v)", path, start, start+length)
	}
	l := Link{Name: TraceName(path), Trace: path, TraceStart: start, Delay: delay, Queue: queue, Loss: loss, Capacity: c}
	return l, l.Validate()
}

// Sampler draws training episodes' links (domain randomisation): a random
// training trace from a random offset, or a fixed-rate link, some of which
// change rate once; random propagation delay, queue size and, sometimes,
// random loss. Zero fields take the defaults in brackets.
type Sampler struct {
	// Traces are the training traces' paths; Set loads them.
	Traces []string
	Set    *TraceSet
	// TraceFraction is the probability that an episode uses a trace [0.75].
	TraceFraction float64
	// RateRange bounds fixed link rates, drawn log-uniformly
	// [2, 40 Mbit/s].
	RateRange [2]units.Bandwidth
	// ChangeFraction is the fraction of fixed-rate episodes whose rate
	// steps to another random rate at a random time [0.5].
	ChangeFraction float64
	// DelayRange bounds the one-way delay [10 ms, 50 ms] (RTT 20-100 ms).
	DelayRange [2]time.Duration
	// QueueRange bounds the DropTail limit, packets [50, 400].
	QueueRange [2]int
	// LossFraction is the fraction of episodes with random loss [0.2],
	// drawn uniformly up to MaxLoss [0.02].
	LossFraction, MaxLoss float64
	// Length is the episode length, over which a trace's reference
	// capacity is measured [20 s].
	Length time.Duration
}

func (s *Sampler) defaults() {
	if s.TraceFraction == 0 {
		s.TraceFraction = 0.75
	}
	if s.RateRange[1] == 0 {
		s.RateRange = [2]units.Bandwidth{2 * units.Mbps, 40 * units.Mbps}
	}
	if s.ChangeFraction == 0 {
		s.ChangeFraction = 0.5
	}
	if s.DelayRange[1] == 0 {
		s.DelayRange = [2]time.Duration{10 * time.Millisecond, 50 * time.Millisecond}
	}
	if s.QueueRange[1] == 0 {
		s.QueueRange = [2]int{50, 400}
	}
	if s.LossFraction == 0 {
		s.LossFraction = 0.2
	}
	if s.MaxLoss == 0 {
		s.MaxLoss = 0.02
	}
	if s.Length == 0 {
		s.Length = 20 * time.Second
	}
}

// Validate applies the defaults and checks the sampler, loading its traces.
func (s *Sampler) Validate() error {
	s.defaults()
	switch {
	case !(s.TraceFraction >= 0 && s.TraceFraction <= 1):
		return fmt.Errorf("deepcc: trace fraction %g must be in [0, 1]", s.TraceFraction)
	case s.RateRange[0] <= 0 || s.RateRange[1] < s.RateRange[0]:
		return fmt.Errorf("deepcc: rate range %v is not a positive interval", s.RateRange)
	case s.DelayRange[0] < 0 || s.DelayRange[1] < s.DelayRange[0]:
		return fmt.Errorf("deepcc: delay range %v is not an interval", s.DelayRange)
	case s.QueueRange[0] < 1 || s.QueueRange[1] < s.QueueRange[0]:
		return fmt.Errorf("deepcc: queue range %v is not an interval of positive sizes", s.QueueRange)
	case !(s.LossFraction >= 0 && s.LossFraction <= 1 && s.MaxLoss >= 0 && s.MaxLoss < 1):
		return fmt.Errorf("deepcc: loss fraction %g and maximum %g must be in [0, 1]", s.LossFraction, s.MaxLoss)
	case s.Length <= 0:
		return fmt.Errorf("deepcc: episode length %v must be positive", s.Length)
	}
	if len(s.Traces) == 0 && s.TraceFraction > 0 {
		return fmt.Errorf("deepcc: no training traces (give some, or a trace fraction of 0)")
	}
	if s.Set == nil {
		s.Set = NewTraceSet()
	}
	for _, p := range s.Traces {
		t, err := s.Set.Load(p)
		if err != nil {
			return err
		}
		if t.Period() < s.Length {
			return fmt.Errorf("deepcc: trace %s lasts %v, shorter than an episode (%v)", p, t.Period(), s.Length)
		}
	}
	return nil
}

// Draw returns one episode's link. The sampler must have been validated.
func (s *Sampler) Draw(r *rand.Rand) Link {
	logUniform := func(lo, hi float64) float64 { return lo * math.Pow(hi/lo, r.Float64()) }
	delay := s.DelayRange[0] + time.Duration(r.Float64()*float64(s.DelayRange[1]-s.DelayRange[0]))
	delay = delay.Round(time.Millisecond)
	queue := s.QueueRange[0] + r.IntN(s.QueueRange[1]-s.QueueRange[0]+1)
	loss := 0.0
	if r.Float64() < s.LossFraction {
		loss = math.Round(r.Float64()*s.MaxLoss*1e4) / 1e4
	}
	if len(s.Traces) > 0 && r.Float64() < s.TraceFraction {
		p := s.Traces[r.IntN(len(s.Traces))]
		t, _ := s.Set.Load(p) // loaded by Validate
		span := t.Period() - s.Length
		start := (time.Duration(r.Float64() * float64(span))).Truncate(time.Millisecond)
		c := MeanRate(t, start, s.Length)
		if c <= 0 {
			// A piece that is one long outage: measure against the whole
			// trace's mean instead (the agent can do nothing here).
			c = t.MeanRate()
		}
		return Link{Name: TraceName(p), Trace: p, TraceStart: start, Delay: delay, Queue: queue, Loss: loss, Capacity: c}
	}
	rate := units.Bandwidth(logUniform(float64(s.RateRange[0]), float64(s.RateRange[1])))
	rate = rate / 1000 * 1000
	l := Link{Name: "fixed", Rate: rate, Delay: delay, Queue: queue, Loss: loss, Capacity: rate}
	if r.Float64() < s.ChangeFraction {
		l.ChangeRate = units.Bandwidth(logUniform(float64(s.RateRange[0]), float64(s.RateRange[1]))) / 1000 * 1000
		l.ChangeAt = (s.Length/4 + time.Duration(r.Float64()*float64(s.Length/2))).Truncate(time.Millisecond)
		// Reference capacity: the time-weighted mean rate.
		f := float64(l.ChangeAt) / float64(s.Length)
		l.Capacity = units.Bandwidth(f*float64(rate) + (1-f)*float64(l.ChangeRate))
	}
	return l
}
