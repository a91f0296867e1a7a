package sweep

import (
	"github.com/cclab/cclab/internal/fmtnum"

	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/internal/atomicfile"
)

// Stat is the summary of one metric over a combination's runs. Pointers
// are nil (JSON null) where a value is undefined, e.g. every run's FCT
// when no flow finished.
type Stat struct {
	Metric string   `json:"metric"`
	N      int      `json:"n"`
	Mean   *float64 `json:"mean"`
	Std    *float64 `json:"std"`
	CI95   *float64 `json:"ci95"`
	Min    *float64 `json:"min"`
	P50    *float64 `json:"p50"`
	P95    *float64 `json:"p95"`
	Max    *float64 `json:"max"`
}

// ComboStats is the aggregate of one combination.
type ComboStats struct {
	Combo  int               `json:"combo"`
	Params map[string]string `json:"params"`
	// Runs is the number of finished runs aggregated.
	Runs    int    `json:"runs"`
	Metrics []Stat `json:"metrics"`
	// params keeps the grid order for CSV columns and labels.
	params []Param
}

// Stat returns the named metric's summary, or false.
func (c *ComboStats) Stat(metric string) (Stat, bool) {
	for _, s := range c.Metrics {
		if s.Metric == metric {
			return s, true
		}
	}
	return Stat{}, false
}

// Label formats the combination's grid coordinates.
func (c *ComboStats) Label() string { return ParamsLabel(c.params) }

// Aggregate summarises rows (in key order) per combination and column:
// mean, sample standard deviation, 95% confidence half-width (Student t),
// min, p50, p95 and max over the runs where the column is defined.
// Combinations without rows are left out. The result depends only on the
// rows' values, not on the order runs finished in.
func Aggregate(m *Manifest, rows []*Row, cols []Column) []*ComboStats {
	var out []*ComboStats
	for i := 0; i < len(rows); {
		k := i
		for k < len(rows) && rows[k].Combo == rows[i].Combo {
			k++
		}
		group := rows[i:k]
		cs := &ComboStats{Combo: rows[i].Combo, Params: map[string]string{}, Runs: len(group), params: m.ComboParams(rows[i].Combo)}
		for _, p := range cs.params {
			cs.Params[p.Key] = p.Value
		}
		vals := make([]float64, len(group))
		for _, c := range cols {
			if !c.Aggregate {
				continue
			}
			for j, r := range group {
				vals[j] = c.Value(r.Result)
			}
			s := metrics.Summarize(vals)
			cs.Metrics = append(cs.Metrics, Stat{
				Metric: c.Name, N: s.N,
				Mean: fp(s.Mean), Std: fp(s.Std), CI95: fp(s.CI95),
				Min: fp(s.Min), P50: fp(s.P50), P95: fp(s.P95), Max: fp(s.Max),
			})
		}
		out = append(out, cs)
		i = k
	}
	return out
}

// fp rounds to ten significant digits, which drops float noise from sums
// (0.30000000000000004) without hiding any difference a reader can use.
func fp(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 10, 64), 64)
	return &r
}

func fmtStat(p *float64) string {
	if p == nil {
		return ""
	}
	return fmtnum.Short(*p)
}

// writeOutputs writes rows.jsonl (sorted), rows.csv, aggregate.csv and
// aggregate.json from the rows, each atomically.
// NotAppliedCell is the rows.csv cell of a grid parameter that did not
// apply to the run's combination.
const NotAppliedCell = "n/a"

func writeOutputs(dir string, m *Manifest, rs *Rows) error {
	// While runs go, rows.jsonl is only appended to (under the lock, with
	// O_APPEND); at the end it is replaced, atomically, by the same rows
	// in (combination, run) order, so that outputs do not depend on --jobs.
	if err := writeRowsJSONL(filepath.Join(dir, RowsFile), rs); err != nil {
		return err
	}
	rows := rs.Sorted()
	cols := Columns(rows)
	err := atomicfile.Write(filepath.Join(dir, RowsCSVFile), func(w io.Writer) error {
		cw := csv.NewWriter(w)
		header := []string{"combo"}
		for _, a := range m.Grid {
			header = append(header, a.Key)
		}
		header = append(header, "run", "seed")
		for _, c := range cols {
			header = append(header, c.Name)
		}
		if err := cw.Write(header); err != nil {
			return err
		}
		rec := make([]string, len(header))
		for _, r := range rows {
			rec = rec[:0]
			rec = append(rec, strconv.Itoa(r.Combo))
			for _, p := range m.ComboParams(r.Combo) {
				if slices.Contains(r.NotApplied, p.Key) {
					// The combination's controller has no such
					// parameter: the value was not used.
					rec = append(rec, NotAppliedCell)
					continue
				}
				rec = append(rec, p.Value)
			}
			rec = append(rec, strconv.Itoa(r.Run), strconv.FormatUint(r.Seed, 10))
			for _, c := range cols {
				rec = append(rec, formatValue(c.Value(r.Result)))
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return err
	}
	agg := Aggregate(m, rows, cols)
	err = atomicfile.Write(filepath.Join(dir, AggregateCSVFile), func(w io.Writer) error {
		cw := csv.NewWriter(w)
		header := []string{"combo"}
		for _, a := range m.Grid {
			header = append(header, a.Key)
		}
		header = append(header, "runs", "metric", "n", "mean", "std", "ci95", "min", "p50", "p95", "max")
		if err := cw.Write(header); err != nil {
			return err
		}
		for _, cs := range agg {
			lead := []string{strconv.Itoa(cs.Combo)}
			for _, p := range cs.params {
				lead = append(lead, p.Value)
			}
			lead = append(lead, strconv.Itoa(cs.Runs))
			for _, s := range cs.Metrics {
				rec := append(append([]string{}, lead...), s.Metric, strconv.Itoa(s.N),
					fmtStat(s.Mean), fmtStat(s.Std), fmtStat(s.CI95), fmtStat(s.Min), fmtStat(s.P50), fmtStat(s.P95), fmtStat(s.Max))
				if err := cw.Write(rec); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, AggregateJSONFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if agg == nil {
			agg = []*ComboStats{}
		}
		return enc.Encode(struct {
			Hash         string        `json:"hash"`
			Combinations []*ComboStats `json:"combinations"`
		}{m.Hash, agg})
	})
}
