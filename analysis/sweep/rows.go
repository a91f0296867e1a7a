package sweep

import (
	"github.com/cclab/cclab/internal/fmtnum"

	"math"

	"github.com/cclab/cclab/experiment"
)

// Row is one finished run: a line of rows.jsonl. Rows are keyed by (Combo,
// Run); Params and Seed repeat what the manifest implies so that a line can
// be read on its own and checked against the manifest.
type Row struct {
	Combo  int               `json:"combo"`
	Run    int               `json:"run"`
	Seed   uint64            `json:"seed"`
	Params map[string]string `json:"params"`
	// NotApplied lists the grid keys that did not apply to the run (see
	// Combo.NotApplied).
	NotApplied []string           `json:"not_applied,omitempty"`
	Result     *experiment.Result `json:"result"`
}

// maxDetailed is the most measured flows (or background entries) that get
// their own columns in rows.csv; beyond it the columns would swamp the
// file, and rows.jsonl has every flow anyway.
const maxDetailed = 4

// Column is one numeric column of rows.csv, computed from a run's Result.
// NaN means "not defined for this run" (no flow finished, no schedule) and
// is written as an empty cell.
type Column struct {
	Name string
	// Aggregate is false for columns whose spread says nothing about the
	// combination (wall time varies with machine load).
	Aggregate bool
	Value     func(r *experiment.Result) float64
}

// scalarColumns are the per-run columns every sweep has. Multi-flow runs
// are summarised per column as documented in docs/sweeps.md.
var scalarColumns = []Column{
	{"wall_seconds", false, func(r *experiment.Result) float64 { return r.WallSeconds }},
	{"sim_seconds", true, func(r *experiment.Result) float64 { return r.SimSeconds }},
	{"events", true, func(r *experiment.Result) float64 { return float64(r.Events) }},
	{"flows", true, func(r *experiment.Result) float64 { return float64(len(r.Flows)) }},
	{"completed", true, func(r *experiment.Result) float64 {
		n := 0
		for _, f := range r.Flows {
			if f.FCT != nil {
				n++
			}
		}
		return float64(n)
	}},
	{"goodput_mbps", true, flowMean(func(f *experiment.FlowResult) float64 { return f.GoodputMbps })},
	{"total_goodput_mbps", true, (*experiment.Result).TotalGoodputMbps},
	{"fct_s", true, flowMean(func(f *experiment.FlowResult) float64 { return optional(f.FCT) })},
	{"retransmissions", true, flowSum(func(f *experiment.FlowResult) float64 { return float64(f.Retransmissions) })},
	{"rtos", true, flowSum(func(f *experiment.FlowResult) float64 { return float64(f.RTOs) })},
	{"drops", true, flowSum(func(f *experiment.FlowResult) float64 { return float64(f.Drops) })},
	{"losses", true, flowSum(func(f *experiment.FlowResult) float64 { return float64(f.Losses) })},
	{"rtt_mean_ms", true, flowMean(func(f *experiment.FlowResult) float64 { return f.RTTMeanMs })},
	{"rtt_p95_ms", true, flowMean(func(f *experiment.FlowResult) float64 { return f.RTTP95Ms })},
	{"qdelay_mean_ms", true, flowMean(func(f *experiment.FlowResult) float64 { return f.QdelayMeanMs })},
	{"qdelay_p95_ms", true, flowMean(func(f *experiment.FlowResult) float64 { return f.QdelayP95Ms })},
	{"jain", true, func(r *experiment.Result) float64 {
		if r.Jain == nil {
			return math.NaN() // no measured flow delivered: undefined
		}
		return *r.Jain
	}},
	{"rti", true, func(r *experiment.Result) float64 { return optional(r.RTI) }},
	{"utilization", true, link(func(l *experiment.LinkResult) float64 { return l.Utilization })},
	{"link_drops", true, link(func(l *experiment.LinkResult) float64 { return float64(l.Drops) })},
	{"link_losses", true, link(func(l *experiment.LinkResult) float64 { return float64(l.Losses) })},
	{"background_share", true, link(func(l *experiment.LinkResult) float64 { return l.BackgroundShare })},
}

func optional(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// flowMean averages a per-flow value over the measured flows, skipping
// flows where it is undefined (NaN), e.g. the FCT of an unfinished flow.
func flowMean(get func(*experiment.FlowResult) float64) func(*experiment.Result) float64 {
	return func(r *experiment.Result) float64 {
		var s float64
		n := 0
		for i := range r.Flows {
			if v := get(&r.Flows[i]); !math.IsNaN(v) {
				s += v
				n++
			}
		}
		if n == 0 {
			return math.NaN()
		}
		return s / float64(n)
	}
}

func flowSum(get func(*experiment.FlowResult) float64) func(*experiment.Result) float64 {
	return func(r *experiment.Result) float64 {
		var s float64
		for i := range r.Flows {
			s += get(&r.Flows[i])
		}
		return s
	}
}

func link(get func(*experiment.LinkResult) float64) func(*experiment.Result) float64 {
	return func(r *experiment.Result) float64 {
		if len(r.Links) == 0 {
			return math.NaN()
		}
		return get(&r.Links[0])
	}
}

// perFlow are the columns repeated for each flow when a sweep has few.
var perFlow = []struct {
	name string
	get  func(*experiment.FlowResult) float64
}{
	{"goodput_mbps", func(f *experiment.FlowResult) float64 { return f.GoodputMbps }},
	{"fct_s", func(f *experiment.FlowResult) float64 { return optional(f.FCT) }},
	{"retransmissions", func(f *experiment.FlowResult) float64 { return float64(f.Retransmissions) }},
	{"rtt_p95_ms", func(f *experiment.FlowResult) float64 { return f.RTTP95Ms }},
	{"qdelay_p95_ms", func(f *experiment.FlowResult) float64 { return f.QdelayP95Ms }},
}

var perBackground = []struct {
	name string
	get  func(*experiment.BackgroundResult) float64
}{
	{"delivered_mbps", func(b *experiment.BackgroundResult) float64 { return b.DeliveredMbps }},
	{"capacity_share", func(b *experiment.BackgroundResult) float64 { return b.CapacityShare }},
}

// Columns returns the numeric columns of rows.csv for a set of rows (in
// key order): the scalar columns, then flow.NAME.* for each measured flow
// and bg.NAME.* for each background entry when there are at most four of
// them across all rows. The detailed columns depend only on the rows, so
// the same rows always give the same header.
func Columns(rows []*Row) []Column {
	cols := append([]Column{}, scalarColumns...)
	var flows, bgs []string
	seenF, seenB := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		for _, f := range r.Result.Flows {
			if !seenF[f.Name] {
				seenF[f.Name] = true
				flows = append(flows, f.Name)
			}
		}
		for _, b := range r.Result.Background {
			if !seenB[b.Name] {
				seenB[b.Name] = true
				bgs = append(bgs, b.Name)
			}
		}
	}
	if len(flows) <= maxDetailed {
		for _, name := range flows {
			for _, pf := range perFlow {
				cols = append(cols, Column{"flow." + name + "." + pf.name, true, func(r *experiment.Result) float64 {
					for i := range r.Flows {
						if r.Flows[i].Name == name {
							return pf.get(&r.Flows[i])
						}
					}
					return math.NaN()
				}})
			}
		}
	}
	if len(bgs) <= maxDetailed {
		for _, name := range bgs {
			for _, pb := range perBackground {
				cols = append(cols, Column{"bg." + name + "." + pb.name, true, func(r *experiment.Result) float64 {
					for i := range r.Background {
						if r.Background[i].Name == name {
							return pb.get(&r.Background[i])
						}
					}
					return math.NaN()
				}})
			}
		}
	}
	return cols
}

// formatValue writes a row value without float noise (fmtnum.Short: ten
// significant digits, whole numbers exact); NaN is an empty cell.
func formatValue(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return fmtnum.Short(v)
}
