package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cclab/cclab/internal/progress"
	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/bench"
	"github.com/cclab/cclab/learn/rl/checkpoint"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/trainlog"
	"github.com/cclab/cclab/papers/datacenter"
)

func init() {
	register(&command{name: "dc train", summary: "train agents that tune BBR's RTprop/BtlBw windows in a data centre (the data-centre BBR paper; PPO, A2C, DQN)", run: runDCTrain})
	register(&command{name: "dc eval", summary: "compare default BBR, the best static windows and trained agents on training and unseen data-centre conditions", run: runDCEval})
}

// checkAlpha is --alpha's usage error, nil for a weight in (0, 1].
func checkAlpha(alpha float64) error {
	if !(alpha > 0 && alpha <= 1) {
		return usagef("--alpha must be in (0, 1], got %g", alpha)
	}
	return nil
}

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
	}
	if err := checkAlpha(alpha); err != nil {
		return datacenter.Config{}, err
	}
	if tau <= 0 {
		return datacenter.Config{}, usagef("--tau must be positive, got %v", tau)
	}
	cfg := datacenter.Config{Base: base, Agents: agents, Action: kind, History: history, Interval: interval, Steps: episode,
		Reward: datacenter.RewardConfig{Alpha: alpha, Tau: tau}, Random: datacenter.TrainingRandomization()}
	if _, err := datacenter.NewSim(cfg); err != nil {
		return datacenter.Config{}, err
	}
	return cfg, nil
}

// dcTrainFlags are dc train's flags.
type dcTrainFlags struct {
	algo, mode, action, out, scn, csvPath, ck string
	agents, envs, workers, history, episode   int
	steps                                     int64
	seed                                      uint64
	interval, tau, ckEvery                    time.Duration
	alpha, lr, gamma, lambda                  float64
	resume, force                             bool
	sets                                      stringList
	wl                                        *dcWorkloadFlags
	shareEvery                                int
	consensus, fairness                       float64
}

func (f *dcTrainFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.algo, "algo", "ppo", "learning algorithm: ppo, a2c or dqn")
	fs.IntVar(&f.agents, "agents", 1, "number of agents K; the controlled flows are split into K contiguous subsets")
	fs.StringVar(&f.mode, "mode", datacenter.Shared, "multi-agent learning: shared (one policy, parameter sharing) or independent (K learners, team reward)")
	fs.StringVar(&f.action, "action", "discrete", "action space: discrete (12-setting grid: 4 RTprop x 3 BtlBw windows) or continuous (ppo, a2c)")
	fs.Int64Var(&f.steps, "steps", 60_000, "training budget in simulated intervals (summed over parallel environments; rounded up to the algorithm's whole iterations, such as PPO's rollouts)")
	fs.IntVar(&f.envs, "envs", 4, "parallel simulations")
	fs.IntVar(&f.workers, "workers", 0, "goroutines stepping them (default: one per simulation; results do not depend on it)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of networks, exploration and episodes")
	fs.StringVar(&f.out, "out", "dc.policy", "policy file (independent agents: FILE.agentI.EXT)")
	fs.StringVar(&f.scn, "scenario", "", "scenario file or built-in name (default: datacenter)")
	fs.Var(&f.sets, "set", "override a scenario field (dotted.path=value)")
	fs.IntVar(&f.history, "history", 1, "stacked observation frames")
	fs.DurationVar(&f.interval, "interval", datacenter.DefaultInterval, "agent step T2")
	fs.IntVar(&f.episode, "episode", datacenter.DefaultSteps, "agent steps per episode")
	fs.Float64Var(&f.alpha, "alpha", 0.75, "reward weight of utilisation against the RTprop/RTT term")
	fs.DurationVar(&f.tau, "tau", time.Millisecond, "latency scale of the reward's sigmoid term")
	fs.Float64Var(&f.fairness, "fairness", 0, fmt.Sprintf("2+ agents, ours: subtract this weight times (1 - Jain's index of the agents' goodputs per active flow) from the reward each interval, in [0, %d] (0: the paper's reward; its evaluation uses the same reward)", datacenter.MaxFairness))
	fs.Float64Var(&f.lr, "lr", 0, "learning rate (default: ppo 1e-3, a2c 7e-4, dqn 5e-4)")
	fs.Float64Var(&f.gamma, "gamma", 0.8, "discount factor")
	fs.Float64Var(&f.lambda, "lambda", 0.9, "GAE lambda (ppo, a2c)")
	fs.StringVar(&f.csvPath, "csv", "", "learning-curve CSV (default: OUT without extension + .csv)")
	fs.StringVar(&f.ck, "checkpoint", "", "checkpoint file (single learner only)")
	fs.DurationVar(&f.ckEvery, "checkpoint-every", 5*time.Minute, "wall time between checkpoints")
	fs.BoolVar(&f.resume, "resume", false, "continue from --checkpoint")
	fs.BoolVar(&f.force, "force", false, "start afresh even if --checkpoint exists (overwrites it and the learning curve)")
	f.wl = addDCWorkloadFlags(fs)
	fs.IntVar(&f.shareEvery, "share-every", 0, "independent agents: average their actors and critics every this many joint iterations (the paper's T1 sharing; 0: never)")
	fs.Float64Var(&f.consensus, "consensus", 0, "ppo, 2+ agents: coefficient c of the paper's consensus penalty c·mean_b mean_j (V_i(s_b) − V_j(s_b))², the disagreement between an agent's value estimates and its neighbours', added to its loss (the paper gives no value; 0: off)")
}

func (f *dcTrainFlags) check() error {
	switch {
	case f.algo != "ppo" && f.algo != "a2c" && f.algo != "dqn":
		return usagef("--algo must be ppo, a2c or dqn, got %q", f.algo)
	case f.mode != datacenter.Shared && f.mode != datacenter.Independent:
		return usagef("--mode must be %s or %s, got %q", datacenter.Shared, datacenter.Independent, f.mode)
	case f.steps < 1 || f.envs < 1 || f.workers < 0:
		return usagef("--steps and --envs must be positive and --workers non-negative")
	case f.lr < 0 || !(f.gamma > 0 && f.gamma <= 1) || !(f.lambda > 0 && f.lambda <= 1):
		return usagef("--lr must be positive, --gamma and --lambda in (0, 1]")
	case f.resume && f.ck == "":
		return usagef("--resume needs --checkpoint")
	case f.algo == "dqn" && f.action == "continuous":
		return usagef("--algo dqn needs --action discrete")
	case f.ck != "" && f.mode == datacenter.Independent && f.agents > 1:
		return usagef("--checkpoint needs a single learner: one agent or --mode shared")
	}
	return nil
}

func runDCTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dc train", stderr)
	var f dcTrainFlags
	f.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("dc train takes no arguments, got %q", pos)
	}
	if err := f.check(); err != nil {
		return err
	}
	wl, err := f.wl.resolve(fs, &f.scn, &f.interval, &f.episode)
	if err != nil {
		return err
	}
	cfg, err := dcConfig(f.scn, f.sets, f.agents, f.action, f.history, f.interval, f.episode, f.alpha, f.tau)
	if err != nil {
		return err
	}
	if f.fairness != 0 && f.agents < 2 {
		return usagef("--fairness weighs the agents' goodputs against each other: it needs --agents 2 or more")
	}
	cfg.Reward.Fairness = f.fairness
	if cfg, err = withWorkload(cfg, wl.Name, wl.Random); err != nil {
		return err
	}
	k := 1
	if f.mode == datacenter.Independent {
		k = f.agents
	}
	paths := datacenter.PolicyPaths(f.out, k)
	if f.ck != "" {
		if err := checkpoint.CheckFresh(f.ck, f.resume, f.force); err != nil {
			return err
		}
	}
	// The policies are saved after training: a path that cannot take one
	// fails now, not hours later.
	for _, p := range paths {
		if err := bench.CheckSavePath(p); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if f.csvPath == "" {
		f.csvPath = strings.TrimSuffix(f.out, filepath.Ext(f.out)) + ".csv"
	}
	csvPaths := datacenter.PolicyPaths(f.csvPath, k)
	var files []*trainlog.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, p := range csvPaths {
		f, err := trainlog.OpenFile(p, f.resume)
		if err != nil {
			return fmt.Errorf("--csv: %w", err)
		}
		files = append(files, f)
	}
	// A bar on a terminal, plain lines with an ETA otherwise (trainlog).
	bar := io.Writer(stderr)
	command := "cclab dc train " + strings.Join(args, " ")
	fmt.Fprintf(stderr, "training %s, %d agent(s) (%s), %d intervals of %v on %d simulations; learning curve %s\n",
		f.algo, f.agents, f.mode, f.steps, f.interval, f.envs, strings.Join(csvPaths, ", "))
	res, err := datacenter.Train(ctx, datacenter.TrainConfig{Env: cfg, Algo: f.algo, Mode: f.mode, Steps: f.steps, Envs: f.envs, Workers: f.workers,
		Seed: f.seed, LearningRate: f.lr, Gamma: f.gamma, Lambda: f.lambda, Checkpoint: f.ck, CheckpointEvery: f.ckEvery, Resume: f.resume,
		CSV: func(i int) io.Writer { return files[i] }, Progress: bar, Command: command, ShareEvery: f.shareEvery, Consensus: f.consensus})
	if err != nil {
		return trainingError(err, f.ck)
	}
	for i, p := range res.Policies {
		if err := p.Save(paths[i]); err != nil {
			return err
		}
	}
	for i, c := range csvPaths {
		stem := strings.TrimSuffix(c, ".csv")
		label := f.algo
		if len(csvPaths) > 1 {
			label = fmt.Sprintf("%s, agent %d", f.algo, i)
		}
		if err := datacenter.PlotLearningCurve(c, stem, label); err != nil {
			fmt.Fprintf(stderr, "learning-curve plot: %v\n", err)
		}
	}
	fmt.Fprintf(stdout, "trained %d intervals in %.0f s of wall time; policy written to %s\n", res.Intervals, res.Run.WallSeconds, strings.Join(paths, ", "))
	if d := res.ValueDisagreement; len(d) > 0 {
		// What the consensus penalty acts on, with or without it.
		tail := d[len(d)-max(1, len(d)/10):]
		var m float64
		for _, v := range tail {
			m += v / float64(len(tail))
		}
		fmt.Fprintf(stdout, "agents' value disagreement, mean (V_i − V_j)² over a rollout: first iteration %.4g, last 10%% of iterations %.4g\n", d[0], m)
	}
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

// dcEvalFlags are dc eval's flags.
type dcEvalFlags struct {
	pol, static, conds, out, scn string
	more                         namedPolicies
	seedPols                     stringList
	valRuns                      int
	valSeed                      uint64
	runs, gridRuns, jobs, agents int
	seed                         uint64
	asJSON, perAgent             bool
	sets                         stringList
	wl                           *dcWorkloadFlags
	onlineLR                     float64
	// alpha overrides the reward's weight when given (0: the policy's).
	alpha float64
}

func (f *dcEvalFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.pol, "policy", "", "trained policy file(s), comma-separated for independent agents; \"none\" for the baselines only (default: the PPO policy built into cclab for --workload, "+datacenter.ShippedPolicyPath+" or "+datacenter.ShippedPaperPolicyPath+")")
	fs.Var(&f.seedPols, "seed-policy", "one independently trained policy of a configuration, FILE[,FILE...] for independent agents (repeat once per training seed; replaces --policy): the learned scheme is reported per policy and as mean ± 95% CI across policies")
	fs.IntVar(&f.valRuns, "validation-runs", 8, "with several --seed-policy: training-condition episodes per policy for choosing the median seed (0: skip the choice)")
	fs.Uint64Var(&f.valSeed, "validation-seed", 0, "with several --seed-policy: seed of the first validation episode (default: --seed + 2000000); must not overlap the evaluation's seeds")
	fs.Var(&f.more, "compare", "another trained scheme NAME=FILE[,FILE...] (repeatable; same environment settings)")
	fs.IntVar(&f.runs, "runs", 8, "episodes per scheme and condition")
	fs.Uint64Var(&f.seed, "seed", 1000, "seed of the first evaluation episode (the grid search uses others)")
	fs.IntVar(&f.gridRuns, "grid-runs", 6, "episodes per setting in the static grid search")
	fs.StringVar(&f.static, "static-best", "", "skip the grid search and use this static setting, RTPROP_WINDOW_S,BTLBW_ROUNDS")
	fs.BoolVar(&f.perAgent, "static-per-agent", false, "2-3 agents: also search every combination of one static setting per agent (144 for two agents, each --grid-runs episodes) and compare with the best, \""+datacenter.StaticPerAgentName+"\"")
	fs.StringVar(&f.conds, "conditions", strings.Join(datacenter.ConditionNames(), ","), "conditions to evaluate on")
	fs.IntVar(&f.jobs, "jobs", 0, "parallel episodes (default: all cores)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fs.StringVar(&f.out, "out", "", "write dc_eval.json, figures and report.html to this directory")
	fs.StringVar(&f.scn, "scenario", "", "scenario file or built-in name (default: datacenter)")
	fs.Var(&f.sets, "set", "override a scenario field (dotted.path=value)")
	fs.IntVar(&f.agents, "agents", 1, "number of agents when no policy is given (otherwise the policy's)")
	f.wl = addDCWorkloadFlags(fs)
	fs.Float64Var(&f.alpha, "alpha", 0, "score every scheme with this reward weight of utilisation against the RTprop/RTT term, in (0, 1] (default: the first policy's, 0.75 without one)")
	fs.Float64Var(&f.onlineLR, "online-lr", 0, "also evaluate the --policy while it keeps learning (PPO) at this learning rate, the paper's online evaluation (it used 1e-4); 0: off")
}

// learned loads the --policy and --compare schemes into rep, fixing the
// environment settings in cfg from the first.
func (f *dcEvalFlags) learned(rep *datacenter.EvalReport, cfg *datacenter.Config) ([]datacenter.Learned, error) {
	var ls []datacenter.Learned
	var err error
	if len(f.seedPols) > 0 {
		name := datacenter.PolicyName(f.seedPols[0])
		seen := map[uint64]string{}
		var schemes []string
		for _, files := range f.seedPols {
			pols, _, err := datacenter.LoadPolicies(files)
			if err != nil {
				return nil, fmt.Errorf("--seed-policy: %w", err)
			}
			sd := pols[0].Meta.Seed
			if prev, dup := seen[sd]; dup {
				return nil, usagef("--seed-policy: %s and %s were both trained with seed %d; independently trained policies need distinct training seeds", prev, files, sd)
			}
			seen[sd] = files
			sn := datacenter.SeedSchemeName(name, sd)
			if ls, err = rep.AddLearned(cfg, ls, sn, files); err != nil {
				return nil, fmt.Errorf("--seed-policy %s: %w", files, err)
			}
			schemes = append(schemes, sn)
		}
		rep.Seeds = &datacenter.SeedsSummary{Name: name, Schemes: schemes}
	} else if f.pol != "none" {
		if ls, err = rep.AddLearned(cfg, ls, datacenter.PolicyName(f.pol), f.pol); err != nil {
			return nil, fmt.Errorf("--policy: %w", err)
		}
	}
	for _, m := range f.more {
		if _, dup := rep.Policies[m.name]; dup {
			return nil, usagef("--compare: scheme name %q used twice", m.name)
		}
		if ls, err = rep.AddLearned(cfg, ls, m.name, m.files); err != nil {
			return nil, fmt.Errorf("--compare %s: %w", m.name, err)
		}
	}
	return ls, nil
}

// staticBest sets the best static setting: --static-best, or a grid
// search; and with --static-per-agent the best per-agent combination.
func (f *dcEvalFlags) staticBest(ctx context.Context, rep *datacenter.EvalReport, cfg datacenter.Config, stderr io.Writer) error {
	if f.static != "" {
		p, err := datacenter.ParseParams(f.static)
		if err != nil {
			return usagef("--static-best: %v", err)
		}
		rep.StaticBest = p
	} else {
		bar := progress.NewRuns(stderr, "dc eval: static grid search")
		// Grid-search seeds are disjoint from the evaluation's.
		var err error
		rep.Grid, rep.StaticBest, err = datacenter.GridSearch(ctx, cfg, f.gridRuns, 1_000_000+f.seed, f.jobs, bar.Update)
		bar.Finish()
		if err != nil {
			return err
		}
		rep.GridRuns = f.gridRuns
	}
	if !f.perAgent {
		return nil
	}
	rep.GridRuns = f.gridRuns
	bar := progress.NewRuns(stderr, "dc eval: per-agent static grid search")
	// The shared grid's episodes, so its settings are the diagonal.
	var err error
	rep.GridPerAgent, rep.StaticPerAgent, err = datacenter.GridSearchPerAgent(ctx, cfg, f.gridRuns, 1_000_000+f.seed, f.jobs, bar.Update)
	bar.Finish()
	return err
}

func runDCEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dc eval", stderr)
	var f dcEvalFlags
	f.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("dc eval takes no arguments, got %q", pos)
	}
	if len(f.seedPols) > 0 {
		if flagGiven(fs, "policy") {
			return usagef("--policy and --seed-policy exclude each other: give every independently trained policy as a --seed-policy")
		}
	}
	if f.valRuns < 0 {
		return usagef("--validation-runs must be non-negative, got %d", f.valRuns)
	}
	alphaSet := flagGiven(fs, "alpha")
	if alphaSet {
		if err := checkAlpha(f.alpha); err != nil {
			return err
		}
	}
	if f.valSeed == 0 {
		f.valSeed = f.seed + datacenter.ValidationSeedOffset
	}
	if len(f.seedPols) > 1 && f.valRuns > 0 {
		if err := rl.CheckDisjoint("seed", rl.SeedRange(f.valSeed, f.valRuns), rl.SeedRange(f.seed, f.runs)); err != nil {
			return usagef("--validation-seed: %v", err)
		}
	}
	if f.runs < 1 || f.gridRuns < 1 || f.jobs < 0 {
		return usagef("--runs and --grid-runs must be at least 1 and --jobs non-negative")
	}
	if f.jobs == 0 {
		f.jobs = runtime.GOMAXPROCS(0)
	}
	cl, err := datacenter.LookupConditions(strings.Split(f.conds, ","))
	if err != nil {
		return usagef("--conditions: %v", err)
	}
	ival, ep := datacenter.DefaultInterval, datacenter.DefaultSteps
	wl, err := f.wl.resolve(fs, &f.scn, &ival, &ep)
	if err != nil {
		return err
	}
	cfg, err := dcConfig(f.scn, f.sets, f.agents, "discrete", 1, ival, ep, 0.75, time.Millisecond)
	if err != nil {
		return err
	}
	if cfg, err = withWorkload(cfg, wl.Name, wl.Random); err != nil {
		return err
	}
	if f.pol == "" {
		f.pol = wl.Policy
	}
	rep := &datacenter.EvalReport{Runs: f.runs, Seed: f.seed, Policies: map[string]datacenter.PolicyInfo{}, Traces: map[string][]datacenter.TracePoint{}}
	ls, err := f.learned(rep, &cfg)
	if err != nil {
		return err
	}
	if alphaSet {
		// After the policies are loaded: they must agree with each other
		// on the reward they were trained with, whatever it is scored with.
		cfg.Reward.Alpha = f.alpha
		rep.Alpha = f.alpha
	}
	sim, err := datacenter.NewSim(cfg)
	if err != nil {
		return err
	}
	rep.Agents = sim.Agents()
	if f.perAgent {
		if _, err := datacenter.PerAgentGrid(rep.Agents); err != nil {
			return usagef("--static-per-agent (agents: a policy's, or --agents): %v", err)
		}
	}
	for _, c := range cl {
		rep.Conditions = append(rep.Conditions, datacenter.ConditionInfo{Name: c.Name, Doc: c.Describe(wl.Random)})
	}
	if err := f.staticBest(ctx, rep, cfg, stderr); err != nil {
		return err
	}
	var sel *rl.Selection
	if sd := rep.Seeds; sd != nil && len(sd.Schemes) > 1 && f.valRuns > 0 {
		bar := progress.NewRuns(stderr, "dc eval: validation")
		s, err := datacenter.SelectPolicy(ctx, cfg, ls[:len(sd.Schemes)], f.valRuns, f.valSeed, f.seed, f.runs, f.jobs)
		bar.Finish()
		if err != nil {
			return err
		}
		sel = &s
		fmt.Fprintf(stderr, "median seed on %d validation episodes each: %s, scores %.4f\n", f.valRuns, sd.Schemes[s.Index], s.Scores)
	}
	schemes := datacenter.Schemes(rep.StaticBest, rep.StaticPerAgent, ls)
	var first []*policy.Policy
	firstName := ""
	if len(ls) > 0 {
		first, firstName = ls[0].Policies, ls[0].Name
	}
	online, err := dcOnlineSchemes(f.onlineLR, firstName, first)
	if err != nil {
		return err
	}
	bar := progress.NewRuns(stderr, "dc eval")
	rep.Rows, err = datacenter.Evaluate(ctx, datacenter.EvalConfig{Env: cfg, Conditions: cl, Schemes: schemes, Runs: f.runs, Seed: f.seed, Jobs: f.jobs, Progress: bar.Update, Online: online})
	bar.Finish()
	if err != nil {
		return err
	}
	if sd := rep.Seeds; sd != nil {
		if rep.Seeds, err = datacenter.SummarizeSeeds(rep.Rows, sd.Name, sd.Schemes); err != nil {
			return err
		}
		rep.Seeds.Selection = sel
	}
	if f.out != "" {
		if err := rep.AddTraces(cfg, f.seed, schemes); err != nil {
			return err
		}
		if err := rep.Write(f.out); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, f.asJSON, rep, rep.WriteText)
}
