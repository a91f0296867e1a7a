package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cclab/cclab/netsim/traffic"
)

// BackgroundTypes lists the accepted background source types.
var BackgroundTypes = []string{"cbr", "poisson", "onoff", "mice", "tcp", "arrivals", "sequence"}

func (s *Scenario) validateBackground(b *Background, p string, depth int) error {
	if b.Name == "" {
		b.Name = strings.ReplaceAll(strings.ReplaceAll(p, "[", "-"), "]", "")
	}
	if err := parseRate(&b.Rate, p+".rate"); err != nil {
		return err
	}
	if err := parseSize(&b.Size, p+".size", false); err != nil {
		return err
	}
	if err := parseSize(&b.Bytes, p+".bytes", false); err != nil {
		return err
	}
	for _, d := range []struct {
		v    *Duration
		name string
	}{{&b.Start, "start"}, {&b.Stop, "stop"}, {&b.On, "on"}, {&b.Off, "off"}, {&b.Interval, "interval"}, {&b.Burst, "burst"}, {&b.ExtraDelay, "extra_delay"}, {&b.Period, "period"}} {
		if err := parseDuration(d.v, p+"."+d.name, false); err != nil {
			return err
		}
	}
	if b.Stop.IsSet() && b.Stop.V <= b.Start.V {
		return errf(p+".stop", "must be after start (%v), got %v", b.Start.V, b.Stop.V)
	}
	if b.Count == 0 {
		b.Count = 1
	}
	if b.Count < 0 || b.Count > 10000 {
		return errf(p+".count", "must be in [1, 10000], got %d", b.Count)
	}
	if !b.Size.IsSet() && b.Type != "tcp" && b.Type != "arrivals" && b.Type != "sequence" {
		b.Size = SizeOf(1500)
	}
	needRate := func() error {
		if !b.Rate.IsSet() || b.Rate.V <= 0 {
			return errf(p+".rate", "a %s source needs a positive rate (e.g. 500kbps)", b.Type)
		}
		if b.Size.V < 28 || b.Size.V > 65535 {
			return errf(p+".size", "UDP packet size must be in [28B, 65535B], got %q", b.Size.Raw)
		}
		return nil
	}
	switch b.Type {
	case "cbr", "poisson":
		return needRate()
	case "onoff":
		if err := needRate(); err != nil {
			return err
		}
		if b.On.V <= 0 || b.Off.V < 0 {
			return errf(p+".on", "an onoff source needs on > 0 and off >= 0 durations")
		}
	case "mice":
		if err := needRate(); err != nil {
			return err
		}
		if b.Interval.V <= 0 {
			return errf(p+".interval", "a mice source needs the mean time between bursts (interval)")
		}
		if b.Burst.V <= 0 {
			return errf(p+".burst", "a mice source needs the burst duration (burst: 5ms)")
		}
	case "tcp":
		if err := validateCC(&b.CC, p+".cc"); err != nil {
			return err
		}
	case "arrivals":
		if err := validateCC(&b.CC, p+".cc"); err != nil {
			return err
		}
		if b.Sizes == "" && !b.Size.IsSet() {
			return errf(p+".sizes", "arrivals need flow sizes: a fixed size, a CDF file, or one of websearch, datamining")
		}
		// Read now, as a trace is found now: a missing or malformed CDF
		// file is the scenario's mistake, not a failure of the run.
		if _, err := s.FlowSizes(b); err != nil {
			return errf(p+".sizes", "%v", err)
		}
		if !(b.Load >= 0 && b.Load < 1) { // a NaN fails too
			return errf(p+".load", "must be in [0, 1), got %g", b.Load)
		}
		if b.Load == 0 && b.Interval.V <= 0 {
			return errf(p+".interval", "arrivals need a mean inter-arrival time (interval) or an offered load (load)")
		}
		if b.Load > 0 && b.Interval.IsSet() {
			return errf(p+".interval", "give interval or load, not both (load %g sets the mean inter-arrival time itself)", b.Load)
		}
	case "sequence":
		if depth > 0 {
			return errf(p+".type", "sequences cannot be nested")
		}
		if b.Period.V <= 0 {
			return errf(p+".period", "a sequence needs a positive period (e.g. 8s)")
		}
		if len(b.Sequence) == 0 {
			return errf(p+".sequence", "a sequence needs parts")
		}
		for i := range b.Sequence {
			q := &b.Sequence[i]
			qp := fmt.Sprintf("%s.sequence[%d]", p, i)
			if q.Name == "" {
				q.Name = fmt.Sprintf("%s/%d", b.Name, i)
			}
			if err := s.validateBackground(q, qp, depth+1); err != nil {
				return err
			}
			if q.Type == "arrivals" {
				return errf(qp+".type", "arrivals cannot be part of a sequence")
			}
			if q.Stop.V > b.Period.V || q.Start.V >= b.Period.V {
				return errf(qp, "part [%v, %v) must lie within the period %v", q.Start.V, q.Stop.V, b.Period.V)
			}
		}
	default:
		return errf(p+".type", "unknown background type %q (accepted: %s)", b.Type, strings.Join(BackgroundTypes, ", "))
	}
	return nil
}

// FlowSizes returns an arrivals source's flow-size distribution: a
// built-in one by name, or a CDF file relative to the scenario's folder;
// nil if the source has a fixed size.
func (s *Scenario) FlowSizes(b *Background) (*traffic.SizeDist, error) {
	if b.Sizes == "" {
		return nil, nil
	}
	// A built-in distribution's name is not a path.
	src := b.Sizes
	if !slices.Contains(traffic.NamedDistributions(), src) {
		src = s.Path(src)
	}
	return traffic.LoadSizes(src)
}

// Arrivals returns an arrivals source's flow sizes (FlowSizes) and its
// mean time between flows: interval, or with load the time in which the
// bottleneck's rate carries load times the mean flow size. The simulator
// and the emulator spawn flows from both.
func (s *Scenario) Arrivals(b *Background) (*traffic.SizeDist, time.Duration, error) {
	sizes, err := s.FlowSizes(b)
	if err != nil {
		return nil, 0, err
	}
	gap := b.Interval.V
	if b.Load > 0 {
		rate := s.Bottleneck.Rate.V
		if rate <= 0 {
			return nil, 0, fmt.Errorf("load needs a rate-based bottleneck; give interval instead")
		}
		mean := float64(b.Size.V)
		if sizes != nil {
			mean = sizes.Mean()
		}
		gap = time.Duration(mean * 8 / (b.Load * float64(rate)) * 1e9)
	}
	return sizes, gap, nil
}

// Process returns the packet process of a UDP source (cbr, poisson,
// onoff, mice) active in w, as the simulator and the emulator run it.
func (b *Background) Process(w traffic.Window) traffic.Process {
	p := traffic.Process{
		Poisson: b.Type == "poisson" || b.Type == "mice",
		Rate:    b.Rate.V,
		Size:    b.Size.V,
		Window:  w,
	}
	// An onoff source inside a sequence part keeps the part's window;
	// alone it cycles on/off from its start.
	if b.Type == "onoff" && p.Window.Period == 0 {
		p.Window.Period = b.On.V + b.Off.V
		p.Window.From, p.Window.To = 0, b.On.V
	}
	if b.Type == "mice" {
		p.Poisson = false // constant rate inside a burst
		p.MiceGap, p.BurstLen = b.Interval.V, b.Burst.V
	}
	return p
}
