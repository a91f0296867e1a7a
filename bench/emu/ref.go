package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/experiment"
)

// A kernel reference is one or more kernel passes of `fidelity -json`
// (each line one scenario and controller, with the emulator's result):
// the range of each flow's goodput, queueing-delay p95 and retransmissions
// over the passes, against which `fidelity -sim -ref` scores the simulator
// without root. The idle passes behind docs/fidelity.md's first table ship
// in testdata/.
type kernelRef map[refKey][][3]float64

type refKey struct{ scenario, cc, flow string }

// refMetrics names the three scored metrics, in kernelRef's order.
var refMetrics = [3]string{"goodput", "qdelay p95", "retransmissions"}

// refTolerance is each metric's target (issue 13): goodput within 5%,
// queueing-delay p95 within 20%, retransmissions within 25% of the nearer
// end of the kernel's range.
var refTolerance = [3]float64{0.05, 0.20, 0.25}

func refValues(f *experiment.FlowResult) [3]float64 {
	return [3]float64{f.GoodputMbps, f.QdelayP95Ms, float64(f.Retransmissions)}
}

// loadRef reads kernel passes, naming the file and line of a bad one.
func loadRef(paths []string) (kernelRef, error) {
	ref := kernelRef{}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		line := 0
		for sc.Scan() {
			line++
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var row struct {
				Scenario string             `json:"scenario"`
				CC       string             `json:"cc"`
				Emu      *experiment.Result `json:"emu"`
			}
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			if row.Scenario == "" || row.CC == "" || row.Emu == nil || len(row.Emu.Flows) == 0 {
				f.Close()
				return nil, fmt.Errorf("%s:%d: want a line of fidelity -json (scenario, cc and the emulator's result with its flows)", path, line)
			}
			for i := range row.Emu.Flows {
				k := refKey{row.Scenario, row.CC, row.Emu.Flows[i].Name}
				ref[k] = append(ref[k], refValues(&row.Emu.Flows[i]))
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if line == 0 {
			return nil, fmt.Errorf("%s: empty", path)
		}
	}
	return ref, nil
}

// nearMean reports v's deviation from the kernel's mean as a fraction of
// it, and whether it is at most tol either way: for a measure whose runs
// spread wider than a difference worth catching (within's range would
// pass it), held to the mean instead.
func nearMean(v, mean, tol float64) (dev float64, ok bool) {
	if mean == 0 {
		return 0, v == 0
	}
	dev = v/mean - 1
	return dev, -tol <= dev && dev <= tol
}

// within reports whether v is inside the kernel's range vals or within
// tol of its nearer end.
func within(v float64, vals []float64, tol float64) bool {
	lo, hi := vals[0], vals[0]
	for _, x := range vals[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo <= v && v <= hi {
		return true
	}
	near := hi
	if v < lo {
		near = lo
	}
	if near == 0 {
		return v == 0
	}
	d := v - near
	if d < 0 {
		d = -d
	}
	return d <= tol*near
}

// score compares one simulated flow with the reference: whether each
// metric is within target, and the kernel's range as text; ok is false
// when the reference has no such flow.
func (r kernelRef) score(scenario, cc string, f *experiment.FlowResult) (in [3]bool, ranges [3]string, ok bool) {
	runs := r[refKey{scenario, cc, f.Name}]
	if len(runs) == 0 {
		return in, ranges, false
	}
	v := refValues(f)
	for m := range 3 {
		vals := make([]float64, len(runs))
		for i, run := range runs {
			vals[i] = run[m]
		}
		in[m] = within(v[m], vals, refTolerance[m])
		lo, hi := vals[0], vals[0]
		for _, x := range vals[1:] {
			lo, hi = min(lo, x), max(hi, x)
		}
		ranges[m] = fmt.Sprintf("%.4g-%.4g", lo, hi)
	}
	return in, ranges, true
}

// readReference reads a tab-separated reference of kernel runs: comment
// lines (#), a header, then cols columns per line, the first two the key
// (scenario and cc, or another pair). It returns each line's columns at
// the indices take as numbers, in file order under its key, and names
// the file, line and column of anything malformed.
func readReference(path string, cols int, take ...int) (map[[2]string][][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[[2]string][][]float64{}
	sc := bufio.NewScanner(f)
	header := true
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		if header {
			header = false
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != cols {
			return nil, fmt.Errorf("%s:%d: %d columns, want %d", path, n, len(c), cols)
		}
		v := make([]float64, len(take))
		for i, col := range take {
			if v[i], err = strconv.ParseFloat(c[col], 64); err != nil {
				return nil, fmt.Errorf("%s:%d: column %d: %w", path, n, col+1, err)
			}
		}
		k := [2]string{c[0], c[1]}
		out[k] = append(out[k], v)
	}
	return out, sc.Err()
}

// refHeader is the column line of a many-flow kernel reference
// (testdata/kernel-manyflows-*.tsv), which readReference skips.
const refHeader = "scenario\tcc\tseed\tgoodput_mbps\tretransmissions\tdiscarded\trtos\tjain"

// refLine is one run's line of a many-flow kernel reference: every
// measured flow's totals, as seeds -all adds them, and Jain's index.
func refLine(scenarioPath, cc string, seed int, res *experiment.Result) string {
	t := totalsOf(res)
	jain := "NaN"
	if res.Jain != nil {
		jain = strconv.FormatFloat(*res.Jain, 'f', 4, 64)
	}
	return fmt.Sprintf("%s\t%s\t%d\t%s\t%d\t%d\t%d\t%s", scenarioPath, cc, seed, strconv.FormatFloat(t.goodput, 'f', 3, 64), t.retx, t.discarded, t.rtos, jain)
}

// warnDeviceDrops says on stderr when a kernel run lost packets at its
// namespaces' TUN devices (emu.Accounting.DeviceDrops): losses outside the
// emulated path, which the simulator does not have, so the run is not a
// clean reference for it.
func warnDeviceDrops(label string, em *emu.Result) {
	if msg := em.Emulator.DeviceDropWarning(); msg != "" {
		fmt.Fprintf(os.Stderr, "warning: %s: %s; not a clean reference\n", label, msg)
	}
}
