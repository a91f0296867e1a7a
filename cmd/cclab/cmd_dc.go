package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cclab/cclab/papers/datacenter"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/trainlog"
)

func init() {
	register(&command{name: "dc train", summary: "train agents that tune BBR's RTprop/BtlBw windows in a data centre (paper 001; PPO, A2C, DQN)", run: runDCTrain})
	register(&command{name: "dc eval", summary: "compare default BBR, the best static windows and trained agents on training and unseen data-centre conditions", run: runDCEval})
}

// DefaultDCPolicy is the trained single-agent PPO policy shipped with cclab.
const DefaultDCPolicy = "papers/datacenter/policy/ppo.policy"

// dcConfig builds the environment configuration from the shared flags.
func dcConfig(scn string, sets []string, agents int, action string, history int, interval time.Duration, episode int, alpha float64, tau time.Duration) (datacenter.Config, error) {
	if scn == "" {
		scn = "datacenter"
	}
	base, err := loadScenario(scn, "", -1, sets)
	if err != nil {
		return datacenter.Config{}, err
	}
	kind, err := datacenter.ParseActionKind(action)
	if err != nil {
		return datacenter.Config{}, usagef("--action: %v", err)
	}
	switch {
	case agents < 1:
		return datacenter.Config{}, usagef("--agents must be at least 1, got %d", agents)
	case history < 1 || history > 16:
		return datacenter.Config{}, usagef("--history must be in [1, 16], got %d", history)
	case interval < time.Millisecond:
		return datacenter.Config{}, usagef("--interval must be at least 1ms, got %v", interval)
	case episode < 1:
		return datacenter.Config{}, usagef("--episode must be at least 1 step, got %d", episode)
	case !(alpha > 0 && alpha <= 1):
		return datacenter.Config{}, usagef("--alpha must be in (0, 1], got %g", alpha)
	case tau <= 0:
		return datacenter.Config{}, usagef("--tau must be positive, got %v", tau)
	}
	cfg := datacenter.Config{Base: base, Agents: agents, Action: kind, History: history, Interval: interval, Steps: episode,
		Reward: datacenter.RewardConfig{Alpha: alpha, Tau: tau}, Random: datacenter.TrainingRandomization()}
	if _, err := datacenter.NewSim(cfg); err != nil {
		return datacenter.Config{}, err
	}
	return cfg, nil
}

// policyPaths returns the files an independent K-agent run writes: out
// itself for one policy, out with ".agentI" before the extension for K.
func policyPaths(out string, k int) []string {
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

func runDCTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dc train", stderr)
	algo := fs.String("algo", "ppo", "learning algorithm: ppo, a2c or dqn")
	agents := fs.Int("agents", 1, "number of agents K; the controlled flows are split into K contiguous subsets")
	mode := fs.String("mode", datacenter.Shared, "multi-agent learning: shared (one policy, parameter sharing) or independent (K learners, team reward)")
	action := fs.String("action", "discrete", "action space: discrete (30-setting grid) or continuous (ppo, a2c)")
	steps := fs.Int64("steps", 60_000, "training budget in simulated intervals (summed over parallel environments)")
	envs := fs.Int("envs", 4, "parallel simulations")
	workers := fs.Int("workers", 0, "goroutines stepping them (default: one per simulation; results do not depend on it)")
	seed := fs.Uint64("seed", 1, "seed of networks, exploration and episodes")
	out := fs.String("out", "dc.policy", "policy file (independent agents: FILE.agentI.EXT)")
	scn := fs.String("scenario", "", "scenario file or built-in name (default: datacenter)")
	var sets stringList
	fs.Var(&sets, "set", "override a scenario field (dotted.path=value)")
	history := fs.Int("history", 1, "stacked observation frames")
	interval := fs.Duration("interval", datacenter.DefaultInterval, "agent step T2")
	episode := fs.Int("episode", datacenter.DefaultSteps, "agent steps per episode")
	alpha := fs.Float64("alpha", 0.75, "reward weight of utilisation against the RTprop/RTT term")
	tau := fs.Duration("tau", time.Millisecond, "latency scale of the reward's sigmoid term")
	lr := fs.Float64("lr", 0, "learning rate (default: ppo 1e-3, a2c 7e-4, dqn 5e-4)")
	gamma := fs.Float64("gamma", 0.8, "discount factor")
	lambda := fs.Float64("lambda", 0.9, "GAE lambda (ppo, a2c)")
	csvPath := fs.String("csv", "", "learning-curve CSV (default: OUT without extension + .csv)")
	ck := fs.String("checkpoint", "", "checkpoint file (single learner only)")
	ckEvery := fs.Duration("checkpoint-every", 5*time.Minute, "wall time between checkpoints")
	resume := fs.Bool("resume", false, "continue from --checkpoint")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("dc train takes no arguments, got %q", pos)
	}
	switch {
	case *algo != "ppo" && *algo != "a2c" && *algo != "dqn":
		return usagef("--algo must be ppo, a2c or dqn, got %q", *algo)
	case *mode != datacenter.Shared && *mode != datacenter.Independent:
		return usagef("--mode must be %s or %s, got %q", datacenter.Shared, datacenter.Independent, *mode)
	case *steps < 1 || *envs < 1 || *workers < 0:
		return usagef("--steps and --envs must be positive and --workers non-negative")
	case *lr < 0 || !(*gamma > 0 && *gamma <= 1) || !(*lambda > 0 && *lambda <= 1):
		return usagef("--lr must be positive, --gamma and --lambda in (0, 1]")
	case *resume && *ck == "":
		return usagef("--resume needs --checkpoint")
	case *algo == "dqn" && *action == "continuous":
		return usagef("--algo dqn needs --action discrete")
	case *ck != "" && *mode == datacenter.Independent && *agents > 1:
		return usagef("--checkpoint needs a single learner: one agent or --mode shared")
	}
	cfg, err := dcConfig(*scn, sets, *agents, *action, *history, *interval, *episode, *alpha, *tau)
	if err != nil {
		return err
	}
	k := 1
	if *mode == datacenter.Independent {
		k = *agents
	}
	paths := policyPaths(*out, k)
	if *csvPath == "" {
		*csvPath = strings.TrimSuffix(*out, filepath.Ext(*out)) + ".csv"
	}
	csvPaths := policyPaths(*csvPath, k)
	var files []*trainlog.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, p := range csvPaths {
		f, err := trainlog.OpenFile(p, *resume)
		if err != nil {
			return fmt.Errorf("--csv: %w", err)
		}
		files = append(files, f)
	}
	// A bar on a terminal, plain lines with an ETA otherwise (trainlog).
	progress := io.Writer(stderr)
	command := "cclab dc train " + strings.Join(args, " ")
	fmt.Fprintf(stderr, "training %s, %d agent(s) (%s), %d intervals of %v on %d simulations; learning curve %s\n",
		*algo, *agents, *mode, *steps, *interval, *envs, strings.Join(csvPaths, ", "))
	res, err := datacenter.Train(ctx, datacenter.TrainConfig{Env: cfg, Algo: *algo, Mode: *mode, Steps: *steps, Envs: *envs, Workers: *workers,
		Seed: *seed, LearningRate: *lr, Gamma: *gamma, Lambda: *lambda, Checkpoint: *ck, CheckpointEvery: *ckEvery, Resume: *resume,
		CSV: func(i int) io.Writer { return files[i] }, Progress: progress, Command: command})
	if err != nil {
		return trainingError(err, *ck)
	}
	for i, p := range res.Policies {
		if err := p.Save(paths[i]); err != nil {
			return err
		}
	}
	for i, c := range csvPaths {
		stem := strings.TrimSuffix(c, ".csv")
		label := *algo
		if len(csvPaths) > 1 {
			label = fmt.Sprintf("%s, agent %d", *algo, i)
		}
		if err := datacenter.PlotLearningCurve(c, stem, label); err != nil {
			fmt.Fprintf(stderr, "learning-curve plot: %v\n", err)
		}
	}
	fmt.Fprintf(stdout, "trained %d intervals in %.0f s of wall time; policy written to %s\n", res.Intervals, res.Run.WallSeconds, strings.Join(paths, ", "))
	return nil
}

// namedPolicies is a repeatable NAME=FILE[,FILE...] flag.
type namedPolicies []struct{ name, files string }

func (n *namedPolicies) String() string { return fmt.Sprint(len(*n)) }
func (n *namedPolicies) Set(v string) error {
	name, files, ok := strings.Cut(v, "=")
	if !ok || name == "" || files == "" {
		return fmt.Errorf("want NAME=FILE[,FILE...], got %q", v)
	}
	*n = append(*n, struct{ name, files string }{name, files})
	return nil
}

// loadPolicies loads a comma-separated list of policy files.
func loadPolicies(list string) ([]*policy.Policy, []string, error) {
	var pols []*policy.Policy
	var files []string
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := datacenter.LoadPolicy(f)
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

// parseParams parses "WINDOW_S,ROUNDS" (e.g. "0.1,2").
func parseParams(s string) (datacenter.Params, error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return datacenter.Params{}, fmt.Errorf("want RTPROP_WINDOW_S,BTLBW_ROUNDS (e.g. 0.1,2), got %q", s)
	}
	w, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	r, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || !(w >= 0.1 && w <= 600) || r < 1 || r > 100 {
		return datacenter.Params{}, fmt.Errorf("want an RTprop window in [0.1, 600] s and an integer BtlBw window in [1, 100] rounds, got %q", s)
	}
	return datacenter.Params{MinRTTWindow: w, BwWindowRounds: r}, nil
}

func runDCEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dc eval", stderr)
	pol := fs.String("policy", DefaultDCPolicy, "trained policy file(s), comma-separated for independent agents; \"none\" for the baselines only")
	var more namedPolicies
	fs.Var(&more, "compare", "another trained scheme NAME=FILE[,FILE...] (repeatable; same environment settings)")
	runs := fs.Int("runs", 8, "episodes per scheme and condition")
	seed := fs.Uint64("seed", 1000, "seed of the first evaluation episode (the grid search uses others)")
	gridRuns := fs.Int("grid-runs", 6, "episodes per setting in the static grid search")
	static := fs.String("static-best", "", "skip the grid search and use this static setting, RTPROP_WINDOW_S,BTLBW_ROUNDS")
	conds := fs.String("conditions", strings.Join(datacenter.ConditionNames(), ","), "conditions to evaluate on")
	jobs := fs.Int("jobs", 0, "parallel episodes (default: all cores)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	out := fs.String("out", "", "write dc_eval.json, figures and report.html to this directory")
	scn := fs.String("scenario", "", "scenario file or built-in name (default: datacenter)")
	var sets stringList
	fs.Var(&sets, "set", "override a scenario field (dotted.path=value)")
	agents := fs.Int("agents", 1, "number of agents when no policy is given (otherwise the policy's)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("dc eval takes no arguments, got %q", pos)
	}
	if *runs < 1 || *gridRuns < 1 || *jobs < 0 {
		return usagef("--runs and --grid-runs must be at least 1 and --jobs non-negative")
	}
	if *jobs == 0 {
		*jobs = runtime.GOMAXPROCS(0)
	}
	cl, err := datacenter.LookupConditions(strings.Split(*conds, ","))
	if err != nil {
		return usagef("--conditions: %v", err)
	}
	cfg, err := dcConfig(*scn, sets, *agents, "discrete", 1, datacenter.DefaultInterval, datacenter.DefaultSteps, 0.75, time.Millisecond)
	if err != nil {
		return err
	}
	rep := &datacenter.EvalReport{Runs: *runs, Seed: *seed, Policies: map[string]datacenter.PolicyInfo{}, Traces: map[string][]datacenter.TracePoint{}}
	type learned struct {
		name string
		pols []*policy.Policy
		kind datacenter.ActionKind
	}
	var ls []learned
	add := func(name, list string) error {
		pols, files, err := loadPolicies(list)
		if err != nil {
			return err
		}
		pc, err := datacenter.ConfigFromPolicy(cfg, pols[0])
		if err != nil {
			return fmt.Errorf("%s: %w", files[0], err)
		}
		if len(ls) == 0 {
			cfg = pc
		} else if pc.History != cfg.History || pc.Agents != cfg.Agents || pc.Interval != cfg.Interval || pc.Steps != cfg.Steps || pc.Reward != cfg.Reward {
			return fmt.Errorf("%s was trained with other environment settings than %s (agents, history, interval, episode or reward); evaluate them separately", files[0], ls[0].name)
		}
		if err := datacenter.CheckPolicies(pc, pols); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(files, ","), err)
		}
		m := pols[0].Meta
		rep.Policies[name] = datacenter.PolicyInfo{Files: files, Algo: m.Algo, Steps: m.Steps, TrainingWallS: m.TrainingWallS, Mode: m.Extra["mode"], Action: m.Extra["action"]}
		ls = append(ls, learned{name, pols, pc.Action})
		return nil
	}
	if *pol != "none" {
		name := "learned"
		if p, err := datacenter.LoadPolicy(strings.Split(*pol, ",")[0]); err == nil {
			name = strings.ToUpper(p.Meta.Algo)
			if p.Meta.Extra["agents"] != "" && p.Meta.Extra["agents"] != "1" {
				name += fmt.Sprintf(" ×%s %s", p.Meta.Extra["agents"], p.Meta.Extra["mode"])
			}
		}
		if err := add(name, *pol); err != nil {
			return fmt.Errorf("--policy: %w", err)
		}
	}
	for _, m := range more {
		if _, dup := rep.Policies[m.name]; dup {
			return usagef("--compare: scheme name %q used twice", m.name)
		}
		if err := add(m.name, m.files); err != nil {
			return fmt.Errorf("--compare %s: %w", m.name, err)
		}
	}
	sim, err := datacenter.NewSim(cfg)
	if err != nil {
		return err
	}
	rep.Agents = sim.Agents()
	for _, c := range cl {
		rep.Conditions = append(rep.Conditions, datacenter.ConditionInfo{Name: c.Name, Doc: c.Doc})
	}
	if *static != "" {
		p, err := parseParams(*static)
		if err != nil {
			return usagef("--static-best: %v", err)
		}
		rep.StaticBest = p
	} else {
		bar := newProgress(stderr, "dc eval: static grid search")
		// Grid-search seeds are disjoint from the evaluation's.
		rep.Grid, rep.StaticBest, err = datacenter.GridSearch(ctx, cfg, *gridRuns, 1_000_000+*seed, *jobs, bar.update)
		bar.finish()
		if err != nil {
			return err
		}
		rep.GridRuns = *gridRuns
	}
	schemes := []datacenter.Scheme{
		datacenter.StaticScheme("default BBR", datacenter.DefaultParams),
		datacenter.StaticScheme("static best", rep.StaticBest),
	}
	for _, l := range ls {
		schemes = append(schemes, datacenter.PolicyScheme(l.name, l.pols, l.kind))
	}
	bar := newProgress(stderr, "dc eval")
	rep.Rows, err = datacenter.Evaluate(ctx, datacenter.EvalConfig{Env: cfg, Conditions: cl, Schemes: schemes, Runs: *runs, Seed: *seed, Jobs: *jobs, Progress: bar.update})
	bar.finish()
	if err != nil {
		return err
	}
	if *out != "" {
		rep.TraceSeed = *seed
		for _, s := range schemes {
			if s.Name == "static best" && rep.StaticBest == datacenter.DefaultParams {
				continue
			}
			tr, err := datacenter.Trace(cfg, *seed, s.New())
			if err != nil {
				return err
			}
			rep.Traces[s.Name] = tr
		}
		if err := rep.Write(*out); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, *asJSON, rep, func(w io.Writer) { printDCEval(w, rep) })
}

func fmtEst(e datacenter.Estimate, digits int) string {
	if math.IsNaN(e.Mean) {
		return "n/a"
	}
	if math.IsNaN(e.CI) || e.N < 2 {
		return strconv.FormatFloat(e.Mean, 'f', digits, 64)
	}
	return fmt.Sprintf("%.*f ±%.*f", digits, e.Mean, digits, e.CI)
}

func printDCEval(w io.Writer, r *datacenter.EvalReport) {
	fmt.Fprintf(w, "Data-centre BBR tuning: %d episodes per scheme and condition (seeds %d-%d), %d agent(s)\n", r.Runs, r.Seed, r.Seed+uint64(r.Runs)-1, r.Agents)
	if len(r.Grid) > 0 {
		fmt.Fprintf(w, "static best: %v (grid search, %d settings x %d episodes on the training condition)\n", r.StaticBest, len(r.Grid), r.GridRuns)
	} else {
		fmt.Fprintf(w, "static best: %v (given)\n", r.StaticBest)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Policies)) {
		p := r.Policies[name]
		fmt.Fprintf(w, "%s: %s, %d learner steps, %.0f s of training (%s)\n", name, p.Algo, p.Steps, p.TrainingWallS, strings.Join(p.Files, ", "))
	}
	for _, c := range r.Conditions {
		fmt.Fprintf(w, "\ncondition %s: %s\n", c.Name, c.Doc)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "scheme\treward\tvs default\tvs static best\tutil\tgoodput Mbit/s\tRTT p50 ms\tRTT p95 ms\tretx %\tRTprop acc\tbg FCT ms\tshort FCT p95 ms\t")
		var static *datacenter.Row
		for i, row := range r.Rows {
			if row.Condition == c.Name && row.Scheme == "static best" {
				static = &r.Rows[i]
			}
		}
		for _, row := range r.Rows {
			if row.Condition != c.Name {
				continue
			}
			vsStatic := "-"
			if static != nil && row.Scheme != "default BBR" && row.Scheme != "static best" {
				vsStatic = fmtEst(datacenter.PairedGain(row, *static), 3)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Scheme,
				fmtEst(row.Get("reward"), 3), fmtEst(row.RewardGain, 3), vsStatic, fmtEst(row.Get("util"), 3), fmtEst(row.Get("goodput_mbps"), 0),
				fmtEst(row.Get("rtt_p50_ms"), 2), fmtEst(row.Get("rtt_p95_ms"), 2), fmtEst(row.Get("retx_pct"), 1),
				fmtEst(row.Get("rtprop_accuracy"), 2), fmtEst(row.Get("bg_fct_mean_ms"), 0), fmtEst(row.Get("small_fct_p95_ms"), 0))
		}
		tw.Flush()
	}
}
