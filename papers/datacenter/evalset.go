package datacenter

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cclab/cclab/learn/rl/policy"
)

// ShippedPolicyPath is the trained single-agent PPO policy shipped with
// cclab (LoadPolicy finds the built-in copy from any directory).
const ShippedPolicyPath = "papers/datacenter/policy/ppo.policy"

// ShippedPaperPolicyPath is the trained PPO policy for the paper's own
// workload (Workloads' "paper"), built into cclab likewise.
const ShippedPaperPolicyPath = "papers/datacenter/policy/paper-ppo.policy"

// PolicyPaths returns the files an independent K-agent run writes: out
// itself for one policy, out with ".agentI" before the extension for K.
func PolicyPaths(out string, k int) []string {
	if k == 1 {
		return []string{out}
	}
	ext := filepath.Ext(out)
	stem := strings.TrimSuffix(out, ext)
	var ps []string
	for i := range k {
		ps = append(ps, fmt.Sprintf("%s.agent%d%s", stem, i, ext))
	}
	return ps
}

// LoadPolicies loads a comma-separated list of policy files.
func LoadPolicies(list string) ([]*policy.Policy, []string, error) {
	var pols []*policy.Policy
	var files []string
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := LoadPolicy(f)
		if err != nil {
			return nil, nil, err
		}
		pols = append(pols, p)
		files = append(files, f)
	}
	if len(pols) == 0 {
		return nil, nil, fmt.Errorf("no policy file in %q", list)
	}
	return pols, files, nil
}

// ParseParams parses "WINDOW_S,ROUNDS" (e.g. "0.1,2").
func ParseParams(s string) (Params, error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return Params{}, fmt.Errorf("want RTPROP_WINDOW_S,BTLBW_ROUNDS (e.g. 0.1,2), got %q", s)
	}
	w, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	r, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || !(w >= 0.1 && w <= 600) || r < 1 || r > 100 {
		return Params{}, fmt.Errorf("want an RTprop window in [0.1, 600] s and an integer BtlBw window in [1, 100] rounds, got %q", s)
	}
	return Params{MinRTTWindow: w, BwWindowRounds: r}, nil
}

// PolicyName names a learned scheme after its first policy file: the
// algorithm, and the agents and mode for several agents.
func PolicyName(list string) string {
	name := "learned"
	if p, err := LoadPolicy(strings.Split(list, ",")[0]); err == nil {
		name = strings.ToUpper(p.Meta.Algo)
		if p.Meta.Extra["agents"] != "" && p.Meta.Extra["agents"] != "1" {
			name += fmt.Sprintf(" ×%s %s", p.Meta.Extra["agents"], p.Meta.Extra["mode"])
		}
	}
	return name
}

// Learned is a trained scheme to evaluate.
type Learned struct {
	Name     string
	Policies []*policy.Policy
	Action   ActionKind
}

// AddLearned loads the comma-separated policy files of a learned scheme,
// checks them against the environment and records them in the report.
// The first scheme's policies set the environment settings (agents,
// history, interval, episode, reward) in *cfg; later ones must match them.
func (r *EvalReport) AddLearned(cfg *Config, ls []Learned, name, list string) ([]Learned, error) {
	pols, files, err := LoadPolicies(list)
	if err != nil {
		return nil, err
	}
	pc, err := ConfigFromPolicy(*cfg, pols[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", files[0], err)
	}
	if len(ls) == 0 {
		*cfg = pc
	} else if pc.History != cfg.History || pc.Agents != cfg.Agents || pc.Interval != cfg.Interval || pc.Steps != cfg.Steps || pc.Reward != cfg.Reward {
		return nil, fmt.Errorf("%s was trained with other environment settings than %s (agents, history, interval, episode or reward); evaluate them separately", files[0], ls[0].Name)
	}
	if err := CheckPolicies(pc, pols); err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(files, ","), err)
	}
	m := pols[0].Meta
	r.Policies[name] = PolicyInfo{Files: files, Algo: m.Algo, Steps: m.Steps, TrainingWallS: m.TrainingWallS, Mode: m.Extra["mode"], Action: m.Extra["action"]}
	return append(ls, Learned{name, pols, pc.Action}), nil
}

// Schemes are the evaluated schemes: default BBR, the best static setting,
// the best static setting per agent if perAgent is given, and the learned
// ones.
func Schemes(staticBest Params, perAgent []Params, ls []Learned) []Scheme {
	schemes := []Scheme{
		StaticScheme("default BBR", DefaultParams),
		StaticScheme("static best", staticBest),
	}
	if len(perAgent) > 0 {
		schemes = append(schemes, StaticAgentsScheme(StaticPerAgentName, perAgent))
	}
	for _, l := range ls {
		schemes = append(schemes, PolicyScheme(l.Name, l.Policies, l.Action))
	}
	return schemes
}

// AddTraces records one episode's time series per scheme (seed seed) for
// the report's figures; "static best" is left out when it is the default.
func (r *EvalReport) AddTraces(cfg Config, seed uint64, schemes []Scheme) error {
	r.TraceSeed = seed
	for _, s := range schemes {
		if s.Name == "static best" && r.StaticBest == DefaultParams {
			continue
		}
		tr, err := Trace(cfg, seed, s.New())
		if err != nil {
			return err
		}
		r.Traces[s.Name] = tr
	}
	return nil
}
