package trainlog

import (
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// ErrNoRows is ReadColumns' error for a file without a row whose named
// cells are all numbers: a run stopped before its first episode ended.
var ErrNoRows = errors.New("no rows")

// ReadColumns reads a learning-curve CSV written by Logger and returns the
// named columns, one slice per name, keeping the rows where every named
// cell is a number (a NaN statistic is written as an empty cell, so rows
// logged before the first episode ended are skipped). A header line met
// again mid-file re-maps the columns.
func ReadColumns(path string, names ...string) ([][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cols := make([][]float64, len(names))
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = -1
	}
	vals := make([]float64, len(names))
rows:
	for _, row := range rows {
		if len(row) > 0 && row[0] == "step" {
			for i, name := range names {
				idx[i] = -1
				for k, h := range row {
					if h == name {
						idx[i] = k
					}
				}
			}
			continue
		}
		for i, k := range idx {
			if k < 0 || k >= len(row) {
				continue rows
			}
			v, err := strconv.ParseFloat(row[k], 64)
			if err != nil || math.IsNaN(v) {
				continue rows
			}
			vals[i] = v
		}
		for i, v := range vals {
			cols[i] = append(cols[i], v)
		}
	}
	if len(names) > 0 && len(cols[0]) == 0 {
		return nil, fmt.Errorf("%s: %w with %s", path, ErrNoRows, strings.Join(names, ", "))
	}
	return cols, nil
}
