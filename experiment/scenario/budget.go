package scenario

import (
	"fmt"
	"time"
)

// Budgets refuse, before anything is built, runs that could not finish or
// would not fit in memory: a 1 Tbit/s link for 10^6 s, a timer firing
// every nanosecond, ten million flows, a time series sampled every
// microsecond. Each is an estimate, stated in the message, and far above
// what the shipped scenarios and studies use (the largest, many-flows,
// needs about 10^8 events).
const (
	// MaxEvents bounds the estimated simulator events of one run: at some
	// ten million events per second of wall time (the order measured by
	// bench/ on the development machine, itself shared and noisy), 10^10
	// is a quarter of an hour or more.
	MaxEvents = 1e10
	// MaxFlows bounds the transport flows of one run: measured flows,
	// background TCP flows and the expected number of arrivals.
	MaxFlows = 1_000_000
	// MaxSeriesValues bounds the time-series samples held in memory
	// (8 bytes each).
	MaxSeriesValues = 50_000_000
	// MinTimer is the smallest accepted transport timer (RTO bounds,
	// delayed-ACK and SACK timeouts).
	MinTimer = time.Microsecond
)

// eventsPerPacket approximates the simulator events of one data packet:
// sent, enqueued, serialised, delivered, and its ACK sent and delivered.
const eventsPerPacket = 6

// CheckBudget returns an error when the run's estimated events, flows or
// time-series samples exceed the budgets above. Validate calls it; so does
// network.Build, since callers may change Sample after validation.
func (s *Scenario) CheckBudget() error {
	dur := s.Duration.V.Seconds()
	if dur <= 0 {
		return nil
	}
	// Bottleneck packets: the fastest rate the link ever has, in
	// packets of the smallest segment in use.
	rate := float64(s.Bottleneck.Rate.V)
	for _, c := range s.Bottleneck.Schedule {
		rate = max(rate, float64(c.Rate.V))
	}
	pkt := 1500.0
	if m := s.Transport.MSS.V; m > 0 {
		pkt = min(pkt, float64(m)+52)
	}
	events := rate / 8 / pkt * dur * eventsPerPacket
	what := fmt.Sprintf("%s for %v", s.Bottleneck.Rate.Raw, s.Duration.V)

	flows := 0.0
	for i := range s.Flows {
		f := &s.Flows[i]
		n := float64(max(f.Count, 1))
		flows += n
		t := s.Transport
		if f.Transport != nil {
			t = mergeTimers(t, *f.Transport)
		}
		if e := n * dur / shortestTimer(t).Seconds(); e > 0 {
			events += e
		}
	}
	for i := range s.Background {
		e, f := backgroundLoad(&s.Background[i], dur, s.Transport)
		events += e
		flows += f
	}
	if flows > MaxFlows {
		return errf("flows", "about %.3g flows in total (measured, background TCP and expected arrivals over %v) exceed the limit of %d", flows, s.Duration.V, MaxFlows)
	}
	if events > MaxEvents {
		return errf("duration", "this run would simulate about %.2g events (bottleneck %s, %g flows, background sources and timers), more than the limit of %.0g: shorten the duration or lower the rates", events, what, flows, float64(MaxEvents))
	}
	if s.Sample.V > 0 {
		samples := dur / s.Sample.V.Seconds()
		// Per sample: the bottleneck's 4 series and 4 per flow.
		values := samples * (4 + 4*flows)
		if values > MaxSeriesValues {
			return errf("sample", "sampling every %v for %v keeps about %.3g values (%.3g GB) for %g flows, more than the limit of %d: sample less often (e.g. 100ms)", s.Sample.V, s.Duration.V, values, values*8/1e9, flows, MaxSeriesValues)
		}
	}
	return nil
}

// mergeTimers overlays a flow's transport timers on the scenario's.
func mergeTimers(base, over Transport) Transport {
	for _, p := range [][2]*Duration{{&base.MinRTO, &over.MinRTO}, {&base.DelAckTimeout, &over.DelAckTimeout}, {&base.SACKTimeout, &over.SACKTimeout}} {
		if p[1].IsSet() {
			*p[0] = *p[1]
		}
	}
	return base
}

// shortestTimer is the period of the most frequent per-flow timer in the
// worst case (a timer re-armed as soon as it fires).
func shortestTimer(t Transport) time.Duration {
	d := 200 * time.Millisecond // tcp's default min RTO
	if t.MinRTO.V > 0 {
		d = t.MinRTO.V
	}
	for _, x := range []Duration{t.DelAckTimeout, t.SACKTimeout} {
		if x.V > 0 {
			d = min(d, x.V)
		}
	}
	return max(d, MinTimer)
}

// backgroundLoad estimates a background source's events (packets it
// generates, whether or not the bottleneck takes them) and flows.
func backgroundLoad(b *Background, dur float64, t Transport) (events, flows float64) {
	n := float64(max(b.Count, 1))
	active := dur
	if b.Stop.V > 0 {
		active = min(active, (b.Stop.V - b.Start.V).Seconds())
	}
	switch b.Type {
	case "cbr", "poisson", "onoff", "mice":
		if size := float64(b.Size.V); size > 0 {
			events = n * float64(b.Rate.V) / 8 / size * active
		}
	case "tcp":
		flows = n
		events = n * active / shortestTimer(t).Seconds()
	case "arrivals":
		if b.Interval.V > 0 {
			flows = n * active / b.Interval.V.Seconds()
		}
	case "sequence":
		for i := range b.Sequence {
			e, f := backgroundLoad(&b.Sequence[i], dur, t)
			events, flows = events+n*e, flows+n*f
		}
	}
	return events, flows
}
