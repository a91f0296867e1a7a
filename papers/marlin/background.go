package marlin

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
)

// Pattern is the background traffic of a scenario as it was delivered over
// the bottleneck, per component (a UDP source, or the TCP flows started by
// one sequence entry), the data of the paper's Figure 2 ("Characterization
// of the background traffic patterns").
type Pattern struct {
	Scenario string `json:"scenario"`
	// T are the sample times (end of each interval), seconds; Interval
	// the sampling interval.
	T        []float64 `json:"t_s"`
	Interval float64   `json:"interval_s"`
	// Components are the background components in scenario order: UDP
	// sources first, then the TCP elephants.
	Components []Component `json:"components"`
	// Changes are the link changes' times, seconds (the SATCOM to UHF
	// switch).
	Changes []float64 `json:"changes_s"`
}

// Component is one background component's rates per interval: Mbps is
// what it delivered over the bottleneck, OfferedMbps what a UDP source
// emitted (the pattern itself; nil for TCP, whose sending the network
// shapes).
type Component struct {
	Name        string    `json:"name"`
	Kind        string    `json:"kind"` // "udp" or "tcp"
	Mbps        []float64 `json:"mbps"`
	OfferedMbps []float64 `json:"offered_mbps,omitempty"`
	// MeanMbps is the mean over the run.
	MeanMbps float64 `json:"mean_mbps"`
}

// BackgroundPattern runs scenario s (a copy; its measured flows are kept,
// since the TCP elephants react to them) sampled every interval and
// returns the background's delivered rates.
func BackgroundPattern(s *scenario.Scenario, interval time.Duration) (*Pattern, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("marlin: sample interval %v must be positive", interval)
	}
	if len(s.Background) == 0 {
		return nil, fmt.Errorf("marlin: scenario %s has no background traffic", s.Name)
	}
	c := s.Clone()
	c.Sample = scenario.Dur(interval)
	_, n, err := experiment.Run(context.Background(), c)
	if err != nil {
		return nil, fmt.Errorf("marlin: %w", err)
	}
	ser := n.Series
	p := &Pattern{Scenario: s.Name, Interval: interval.Seconds()}
	for _, t := range ser.T {
		p.T = append(p.T, t.Seconds())
	}
	for _, seg := range n.Segments[1:] {
		p.Changes = append(p.Changes, seg.Start.Seconds())
	}
	for i, src := range n.Sources {
		p.Components = append(p.Components, Component{Name: src.Name, Kind: "udp", Mbps: append([]float64(nil), ser.SourceMbps[i]...),
			OfferedMbps: append([]float64(nil), ser.SourceSentMbps[i]...)})
	}
	// TCP elephants: one component per sequence entry, summing the flows
	// it started (named entry#k, one per period).
	idx := map[string]int{}
	var tcp []Component
	for i, f := range n.Flows {
		if !f.Background {
			continue
		}
		name, _, _ := strings.Cut(f.Name, "#")
		k, ok := idx[name]
		if !ok {
			k = len(tcp)
			idx[name] = k
			tcp = append(tcp, Component{Name: name, Kind: "tcp", Mbps: make([]float64, len(p.T))})
		}
		fs := ser.Flows[i]
		for j, v := range fs.Mbps {
			tcp[k].Mbps[fs.Offset+j] += v
		}
	}
	sort.SliceStable(tcp, func(a, b int) bool { return tcp[a].Name < tcp[b].Name })
	p.Components = append(p.Components, tcp...)
	for i := range p.Components {
		sum := 0.0
		for _, v := range p.Components[i].Mbps {
			sum += v
		}
		if len(p.T) > 0 {
			p.Components[i].MeanMbps = sum / float64(len(p.T))
		}
	}
	return p, nil
}

// Window returns the pattern's samples with from < t <= to, one series per
// component (for one panel of the figure): what UDP sources emitted and
// what the TCP elephants delivered.
func (p *Pattern) Window(from, to float64) (t []float64, mbps [][]float64) {
	mbps = make([][]float64, len(p.Components))
	for i, x := range p.T {
		if x <= from || x > to {
			continue
		}
		t = append(t, x)
		for k, c := range p.Components {
			v := c.Mbps[i]
			if c.OfferedMbps != nil {
				v = c.OfferedMbps[i]
			}
			mbps[k] = append(mbps[k], v)
		}
	}
	return t, mbps
}
