package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
)

// Format is the version of the output directory layout and row schema;
// a directory written by another format is refused rather than mixed.
const Format = 1

// MaxJobs bounds combinations × runs: beyond it a sweep is almost certainly
// a mistyped grid, and the plan would not fit in memory.
const MaxJobs = 50_000_000

// Shard selects the Index-th of Count disjoint slices of a sweep's runs.
// Count 1 is the whole sweep.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// ParseShard parses "I/N" with 0 <= I < N (the numbering of Kubernetes'
// JOB_COMPLETION_INDEX and of a SLURM array declared --array=0-(N-1)).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%q: want I/N with 0 <= I < N, e.g. 0/8", s)
	}
	return Shard{Index: i, Count: n}, nil
}

// String formats the shard as --shard takes it, "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Spec is what a user asks for: the scenario, fixed overrides, the grid,
// the seeds and the shard.
type Spec struct {
	// ScenarioPath names the scenario in errors and resolves its relative
	// paths (traces); ScenarioData is its content.
	ScenarioPath string
	ScenarioData []byte
	// Sets are fixed dotted.path=value overrides applied before the grid.
	Sets []string
	// Grid is applied in order; the last axis varies fastest.
	Grid []Axis
	// FirstSeed is the seed of run 0; nil means the scenario's seed.
	FirstSeed *uint64
	// Runs is the number of runs per combination.
	Runs int
	// Shard is the slice to run; the zero value means the whole sweep.
	Shard Shard
}

// Manifest describes a sweep; it is stored as sweep.json in the output
// directory so that a restart, a merge or a report knows what the rows
// belong to.
type Manifest struct {
	Format int `json:"format"`
	// Hash identifies the sweep definition (everything below except
	// ScenarioPath, Combinations and Shard): rows are only ever combined
	// with rows of the same hash.
	Hash string `json:"hash"`
	// ScenarioPath is the scenario file as given on the command line.
	ScenarioPath string `json:"scenario_path"`
	// ScenarioName is the scenario's name field.
	ScenarioName string `json:"scenario_name"`
	// Scenario is the scenario file's content, byte for byte.
	Scenario string   `json:"scenario"`
	Sets     []string `json:"sets"`
	Grid     []Axis   `json:"grid"`
	// FirstSeed is the seed of run 0; run r uses FirstSeed+r.
	FirstSeed uint64 `json:"first_seed"`
	Runs      int    `json:"runs"`
	// Combinations is the product of the grid's axis lengths.
	Combinations int   `json:"combinations"`
	Shard        Shard `json:"shard"`
}

// definition is the hashed part of a manifest: what determines the rows.
type definition struct {
	Format    int      `json:"format"`
	Scenario  string   `json:"scenario"`
	Sets      []string `json:"sets"`
	Grid      []Axis   `json:"grid"`
	FirstSeed uint64   `json:"first_seed"`
	Runs      int      `json:"runs"`
}

func (m *Manifest) hash() string {
	b, _ := json.Marshal(definition{m.Format, m.Scenario, m.Sets, m.Grid, m.FirstSeed, m.Runs})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// Jobs is the number of runs in the whole sweep.
func (m *Manifest) Jobs() int { return m.Combinations * m.Runs }

// InShard reports whether job j (combo*Runs + run) belongs to m's shard.
// Jobs are dealt round-robin, so every shard gets a similar mix of
// combinations, cheap and expensive alike.
func (m *Manifest) InShard(j int) bool { return j%m.Shard.Count == m.Shard.Index }

// ShardJobs is the number of runs in m's shard.
func (m *Manifest) ShardJobs() int {
	n := m.Jobs()
	return n/m.Shard.Count + btoi(m.Shard.Index < n%m.Shard.Count)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Seed returns the seed of run r. Every combination uses the same seed for
// the same run index (common random numbers: differences between
// combinations are not blurred by different random draws), and the rng
// package decorrelates consecutive seeds, so seed+1 is as independent as any
// other seed.
func (m *Manifest) Seed(run int) uint64 { return m.FirstSeed + uint64(run) }

// Param is one grid coordinate of a combination.
type Param struct {
	Key, Value string
}

// Combo is one point of the grid.
type Combo struct {
	Index  int
	Params []Param
	// NotApplied lists the grid keys that do not apply to this
	// combination: a controller's parameter when no flow uses that
	// controller (--grid cc=cubic,bbr --grid cubic.beta=0.5,0.7).
	NotApplied []string
	// Scenario is the validated scenario of this combination (seed not
	// yet set); clone it for each run.
	Scenario *scenario.Scenario
}

// Label is "key=value, key=value", or "all runs" for an empty grid.
func (c *Combo) Label() string { return ParamsLabel(c.Params) }

// ParamsLabel formats grid coordinates for tables and legends.
func ParamsLabel(ps []Param) string {
	if len(ps) == 0 {
		return "all runs"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Key + "=" + p.Value
	}
	return strings.Join(parts, ", ")
}

// Plan is a checked sweep: its manifest and every combination's scenario.
type Plan struct {
	Manifest *Manifest
	Combos   []*Combo
}

// Job is one run of one combination.
type Job struct {
	Combo, Run int
}

// Index is the job's position in the whole sweep (combination-major).
func (p *Plan) Index(j Job) int { return j.Combo*p.Manifest.Runs + j.Run }

// Scenario returns a fresh copy of job j's scenario with its seed set.
func (p *Plan) Scenario(j Job) *scenario.Scenario {
	s := p.Combos[j.Combo].Scenario.Clone()
	s.Seed = p.Manifest.Seed(j.Run)
	return s
}

// NewPlan decodes the scenario, applies the fixed overrides and then every
// grid combination, and validates each, so that a bad key or value is found
// before any run starts. Errors name the flag, the value and, for
// validation errors, the scenario file's line.
func NewPlan(spec Spec) (*Plan, error) {
	if spec.Runs < 1 {
		return nil, fmt.Errorf("--runs %d: want at least 1", spec.Runs)
	}
	if spec.Runs > MaxJobs {
		return nil, fmt.Errorf("--runs %d: more than %d runs in total; split the sweep", spec.Runs, MaxJobs)
	}
	if spec.Shard.Count == 0 {
		spec.Shard = Shard{0, 1}
	}
	if spec.Shard.Index < 0 || spec.Shard.Index >= spec.Shard.Count {
		return nil, fmt.Errorf("--shard %s: want I/N with 0 <= I < N", spec.Shard)
	}
	base, file, err := scenario.Decode(spec.ScenarioData, spec.ScenarioPath)
	if err != nil {
		return nil, err
	}
	ovs, err := base.ApplySets("--set", spec.Sets)
	if err != nil {
		return nil, err
	}
	if err := base.Validate(); err != nil {
		return nil, scenario.LocateOverrides(err, file, spec.ScenarioPath, ovs)
	}
	combos := 1
	seen := map[string]bool{}
	for _, a := range spec.Grid {
		if err := a.check(); err != nil {
			return nil, fmt.Errorf("--grid %v", err)
		}
		if seen[a.Key] {
			return nil, fmt.Errorf("--grid %s: the key is given twice; list all its values in one --grid flag", a.Key)
		}
		seen[a.Key] = true
		// Divide rather than multiply: --runs 9223372036854775807 overflowed.
		if len(a.Values) > MaxJobs/combos || combos*len(a.Values) > MaxJobs/spec.Runs {
			return nil, fmt.Errorf("--grid: more than %d runs in total; split the sweep", MaxJobs)
		}
		combos *= len(a.Values)
	}
	first := base.Seed
	if spec.FirstSeed != nil {
		first = *spec.FirstSeed
	}
	m := &Manifest{
		Format:       Format,
		ScenarioPath: spec.ScenarioPath,
		ScenarioName: base.Name,
		Scenario:     string(spec.ScenarioData),
		Sets:         append([]string{}, spec.Sets...),
		Grid:         append([]Axis{}, spec.Grid...),
		FirstSeed:    first,
		Runs:         spec.Runs,
		Combinations: combos,
		Shard:        spec.Shard,
	}
	if m.Sets == nil {
		m.Sets = []string{}
	}
	m.Hash = m.hash()
	p := &Plan{Manifest: m, Combos: make([]*Combo, combos)}
	for c := range combos {
		params := m.ComboParams(c)
		s := base.Clone()
		var notApplied []string
		for _, pa := range params {
			if err := s.Set(pa.Key, pa.Value); err != nil {
				if ue := (*scenario.UnusedParamError)(nil); errors.As(err, &ue) && len(spec.Grid) > 1 {
					notApplied = append(notApplied, pa.Key)
					continue
				}
				return nil, comboError(params, pa, err)
			}
		}
		if err := s.Validate(); err != nil {
			label := "--grid combination " + ParamsLabel(params)
			cov := ovs
			for _, pa := range params {
				cov = append(cov[:len(cov):len(cov)], scenario.Override{Path: pa.Key, Origin: label})
			}
			located := scenario.LocateOverrides(err, file, spec.ScenarioPath, cov)
			if e := (*scenario.Error)(nil); errors.As(located, &e) && e.Origin != "" {
				return nil, located
			}
			return nil, fmt.Errorf("%s: %w", label, located)
		}
		p.Combos[c] = &Combo{Index: c, Params: params, NotApplied: notApplied, Scenario: s}
	}
	// A parameter that applies to no combination is a mistake after all.
	for _, a := range spec.Grid {
		applied := false
		for _, c := range p.Combos {
			applied = applied || !slices.Contains(c.NotApplied, a.Key)
		}
		if !applied {
			s := base.Clone()
			err := s.Set(a.Key, a.Values[0])
			return nil, fmt.Errorf("--grid %s: applies to no combination: %v", a.Key, err)
		}
	}
	if err := p.checkFiles(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkFiles builds the network of the first combination with each
// distinct set of referenced files (traces, flow-size distributions), which
// Validate does not read: a missing or malformed file is then an error now,
// not a failure hours into the sweep.
func (p *Plan) checkFiles() error {
	seen := map[string]bool{}
	for _, c := range p.Combos {
		s := c.Scenario
		key := s.Path(s.Bottleneck.Trace)
		for _, b := range s.Background {
			key += "\x00" + backgroundFiles(s, b)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if _, err := network.Build(s.Clone()); err != nil {
			if len(c.Params) == 0 {
				return fmt.Errorf("%s: %v", p.Manifest.ScenarioPath, err)
			}
			return fmt.Errorf("--grid combination %s: %s: %v", c.Label(), p.Manifest.ScenarioPath, err)
		}
	}
	return nil
}

func backgroundFiles(s *scenario.Scenario, b scenario.Background) string {
	key := ""
	if b.Sizes != "" {
		key = s.Path(b.Sizes)
	}
	for _, part := range b.Sequence {
		key += "\x00" + backgroundFiles(s, part)
	}
	return key
}

func comboError(params []Param, bad Param, err error) error {
	if len(params) == 1 {
		return fmt.Errorf("--grid %s=%s: %v", bad.Key, bad.Value, err)
	}
	return fmt.Errorf("--grid %s=%s (in combination %s): %v", bad.Key, bad.Value, ParamsLabel(params), err)
}

// ComboParams returns the grid coordinates of combination c; the last axis
// varies fastest.
func (m *Manifest) ComboParams(c int) []Param {
	params := make([]Param, len(m.Grid))
	for i := len(m.Grid) - 1; i >= 0; i-- {
		a := m.Grid[i]
		params[i] = Param{a.Key, a.Values[c%len(a.Values)]}
		c /= len(a.Values)
	}
	return params
}
