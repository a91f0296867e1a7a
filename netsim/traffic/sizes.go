package traffic

import (
	"github.com/cclab/cclab/internal/boundedio"

	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cclab/cclab/core/units"
)

// SizeDist is an empirical flow-size distribution: a piecewise-linear CDF.
type SizeDist struct {
	// Name identifies it in messages.
	Name string
	// Sizes and CDF are the distribution's points, both non-decreasing,
	// CDF ending at 1.
	Sizes []float64
	CDF   []float64
}

// Named distributions. Both are the flow-size CDFs widely used in
// data-centre transport studies (pFabric, HPCC, and the data-centre RL
// paper's setting): "websearch" from DCTCP (Alizadeh et al., SIGCOMM 2010)
// and "datamining" from VL2 (Greenberg et al., SIGCOMM 2009), in bytes.
var named = map[string]SizeDist{
	"websearch": {
		Name:  "websearch",
		Sizes: []float64{6e3, 6e3, 13e3, 19e3, 33e3, 53e3, 133e3, 667e3, 1333e3, 3333e3, 6667e3, 20000e3},
		CDF:   []float64{0, 0.15, 0.2, 0.3, 0.4, 0.53, 0.6, 0.7, 0.8, 0.9, 0.97, 1},
	},
	"datamining": {
		Name:  "datamining",
		Sizes: []float64{100, 100, 180, 216, 560, 900, 1100, 1870, 3160, 10000, 400e3, 3.16e6, 100e6, 1e9},
		CDF:   []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 1},
	},
}

// NamedDistributions lists the built-in distributions.
func NamedDistributions() []string { return []string{"datamining", "websearch"} }

// LoadSizes returns a named distribution or reads one from a file with one
// "size_bytes cdf" pair per line ('#' comments allowed).
func LoadSizes(nameOrPath string) (*SizeDist, error) {
	if d, ok := named[nameOrPath]; ok {
		return &d, nil
	}
	var key sizeKey
	if st, err := os.Stat(nameOrPath); err == nil {
		key = sizeKey{nameOrPath, st.Size(), st.ModTime()}
		sizeFiles.mu.Lock()
		d := sizeFiles.m[key]
		sizeFiles.mu.Unlock()
		if d != nil {
			return d, nil
		}
	}
	f, err := boundedio.Open(nameOrPath, "flow-size CDF file")
	if err != nil {
		return nil, fmt.Errorf("flow sizes %q: not a built-in distribution (%s) and %v", nameOrPath, strings.Join(NamedDistributions(), ", "), err)
	}
	defer f.Close()
	d, err := ParseSizes(boundedio.Limit(f, nameOrPath, maxSizesFile, "flow-size CDF file"), nameOrPath)
	if err != nil || key.path == "" {
		return d, err
	}
	sizeFiles.mu.Lock()
	if sizeFiles.m == nil || len(sizeFiles.m) >= maxCachedSizeFiles {
		sizeFiles.m = map[sizeKey]*SizeDist{}
	}
	sizeFiles.m[key] = d
	sizeFiles.mu.Unlock()
	return d, nil
}

// sizeFiles keeps parsed CDF files, keyed as trace.Cache keys traces, by
// path, size and modification time (an edited file is read again): a
// scenario's validation reads its arrivals' file to report a mistake
// before the run, and the run, every sweep point and every tuner
// evaluation that builds the scenario again would read it anew. A
// SizeDist is never modified after parsing, so callers share one.
var sizeFiles struct {
	mu sync.Mutex
	m  map[sizeKey]*SizeDist
}

type sizeKey struct {
	path  string
	size  int64
	mtime time.Time
}

// maxCachedSizeFiles bounds the cache (emptied when full): a sweep names
// a handful of CDF files, not thousands.
const maxCachedSizeFiles = 64

// maxSizesFile bounds CDF files: published ones have tens of lines.
const maxSizesFile = 4 << 20

// maxFlowSize bounds sizes in CDF files (1 PB), so that every size is a
// valid byte count.
const maxFlowSize = 1e15

// ParseSizes reads a CDF file; errors name the file and line.
func ParseSizes(r io.Reader, name string) (*SizeDist, error) {
	d := &SizeDist{Name: name}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		fs := strings.Fields(t)
		if len(fs) != 2 {
			return nil, fmt.Errorf("%s:%d: want two numbers \"size_bytes cdf\", got %q", name, line, t)
		}
		sz, err1 := strconv.ParseFloat(fs[0], 64)
		c, err2 := strconv.ParseFloat(fs[1], 64)
		if err1 != nil || err2 != nil || math.IsNaN(sz) || math.IsNaN(c) || math.IsInf(sz, 0) {
			return nil, fmt.Errorf("%s:%d: %q is not two numbers", name, line, t)
		}
		if sz < 0 || sz > maxFlowSize || c < 0 || c > 1 {
			return nil, fmt.Errorf("%s:%d: need 0 <= size <= %g bytes and 0 <= cdf <= 1, got %g %g", name, line, float64(maxFlowSize), sz, c)
		}
		if n := len(d.Sizes); n > 0 && (sz < d.Sizes[n-1] || c < d.CDF[n-1]) {
			return nil, fmt.Errorf("%s:%d: sizes and cdf values must not decrease", name, line)
		}
		d.Sizes = append(d.Sizes, sz)
		d.CDF = append(d.CDF, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(d.Sizes) == 0 || d.CDF[len(d.CDF)-1] != 1 {
		return nil, fmt.Errorf("%s: a CDF file needs at least one line and must end at cdf 1", name)
	}
	return d, nil
}

// Sample draws a size by inverting the CDF with linear interpolation; at
// least one byte.
func (d *SizeDist) Sample(rnd *rand.Rand) units.Bytes {
	u := rnd.Float64()
	i := sort.SearchFloat64s(d.CDF, u)
	if i == 0 {
		return units.Bytes(max(1, d.Sizes[0]))
	}
	if i >= len(d.CDF) {
		return units.Bytes(max(1, d.Sizes[len(d.Sizes)-1]))
	}
	c0, c1 := d.CDF[i-1], d.CDF[i]
	s0, s1 := d.Sizes[i-1], d.Sizes[i]
	v := s1
	if c1 > c0 {
		v = s0 + (u-c0)/(c1-c0)*(s1-s0)
	}
	return units.Bytes(max(1, math.Round(v)))
}

// Mean returns the distribution's mean size in bytes.
func (d *SizeDist) Mean() float64 {
	var m float64
	for i := 1; i < len(d.Sizes); i++ {
		m += (d.CDF[i] - d.CDF[i-1]) * (d.Sizes[i] + d.Sizes[i-1]) / 2
	}
	if d.CDF[0] > 0 {
		m += d.CDF[0] * d.Sizes[0]
	}
	return m
}
