package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/cclab/cclab/internal/cputime"
	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/a2c"
	"github.com/cclab/cclab/learn/rl/cartpole"
	"github.com/cclab/cclab/learn/rl/checkpoint"
	"github.com/cclab/cclab/learn/rl/ddpg"
	"github.com/cclab/cclab/learn/rl/dqn"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/pendulum"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/ppo"
	"github.com/cclab/cclab/learn/rl/sac"
	"github.com/cclab/cclab/learn/rl/space"
	"github.com/cclab/cclab/learn/rl/trainlog"
)

func init() {
	register(&command{name: "rl bench", summary: "train an RL algorithm on a reference task (pendulum, cartpole) and report returns", run: runRLBench})
	register(&command{name: "rl speed", summary: "measure update speed (SAC, DDPG, PPO, MLP) or inference latency at given network sizes", run: runRLSpeed})
	register(&command{name: "rl eval", summary: "evaluate a saved policy file on a reference task", run: runRLEval})
}

// episodic is implemented by every learner: the mean return and length of
// its last 100 training episodes.
type episodic interface {
	rl.Agent
	EpisodeWindow() (meanReturn, meanLength float64)
}

type benchTask struct {
	name string
	mk   func() env.Env
}

var benchTasks = map[string]benchTask{
	"pendulum": {"Pendulum-v1", pendulum.New},
	"cartpole": {"CartPole-v1", cartpole.New},
}

func runRLBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("rl bench", stderr)
	algo := fs.String("algo", "sac", "algorithm: sac, ppo, ddpg (pendulum); ppo, a2c, dqn (cartpole)")
	steps := fs.Int64("steps", 0, "environment steps per seed (default: 20000 for sac/ddpg, 200000 for ppo, 100000 for a2c/dqn)")
	seed := fs.Uint64("seed", 1, "first random seed")
	seeds := fs.Int("seeds", 1, "number of seeds to run (seed, seed+1, ...)")
	envs := fs.Int("envs", 0, "parallel environments (default: the tuned setting for the algorithm)")
	workers := fs.Int("workers", 1, "goroutines stepping the environments (results do not depend on it)")
	evalEvery := fs.Int64("eval-every", 0, "steps between learning-curve evaluations (default steps/10)")
	evalEpisodes := fs.Int("eval-episodes", 10, "evaluation episodes, for the curve and the final score")
	threshold := fs.Float64("threshold", math.NaN(), "success threshold on the final mean return (default -200 for pendulum, 475 for cartpole)")
	csvPath := fs.String("csv", "", "write per-iteration training statistics to this CSV file (seed appended when --seeds > 1)")
	savePath := fs.String("save", "", "save the final policy to this file (seed appended when --seeds > 1)")
	ckPath := fs.String("checkpoint", "", "write training checkpoints to this file")
	ckEvery := fs.Duration("checkpoint-every", 5*time.Minute, "wall time between checkpoints")
	resume := fs.Bool("resume", false, "continue from --checkpoint if it exists")
	progress := fs.Bool("progress", false, "show a progress bar on stderr")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one task (pendulum or cartpole), got %d arguments", len(pos))
	}
	task, ok := benchTasks[pos[0]]
	if !ok {
		return usagef("unknown task %q; want pendulum or cartpole", pos[0])
	}
	switch {
	case *seeds < 1:
		return usagef("--seeds must be >= 1, got %d", *seeds)
	case *steps < 0:
		return usagef("--steps must be positive, got %d", *steps)
	case *envs < 0:
		return usagef("--envs must be positive, got %d", *envs)
	case *evalEpisodes < 1:
		return usagef("--eval-episodes must be >= 1, got %d", *evalEpisodes)
	case *resume && *ckPath == "":
		return usagef("--resume needs --checkpoint")
	case *ckPath != "" && *seeds > 1:
		return usagef("--checkpoint works with one seed at a time")
	}
	if math.IsNaN(*threshold) {
		*threshold = -200
		if pos[0] == "cartpole" {
			*threshold = 475
		}
	}
	valid := map[string][]string{"pendulum": {"sac", "ppo", "ddpg"}, "cartpole": {"ppo", "a2c", "dqn"}}
	okAlgo := false
	for _, a := range valid[pos[0]] {
		okAlgo = okAlgo || a == *algo
	}
	if !okAlgo {
		return usagef("--algo %q does not apply to %s; want one of %s", *algo, pos[0], strings.Join(valid[pos[0]], ", "))
	}
	command := "cclab rl bench " + strings.Join(args, " ")
	fmt.Fprintf(stdout, "# %s on %s, backend %s\n", *algo, task.name, nn.BackendName())
	var finals []float64
	var walls []float64
	for i := 0; i < *seeds; i++ {
		s := *seed + uint64(i)
		res, err := benchOne(ctx, benchRun{algo: *algo, task: task, taskKey: pos[0], steps: *steps, seed: s, envs: *envs, workers: *workers,
			evalEvery: *evalEvery, evalEpisodes: *evalEpisodes, csv: suffix(*csvPath, s, *seeds), save: suffix(*savePath, s, *seeds),
			ck: *ckPath, ckEvery: *ckEvery, resume: *resume, progress: *progress, command: command}, stdout, stderr)
		if err != nil {
			return err
		}
		finals = append(finals, res.mean)
		walls = append(walls, res.wall)
	}
	passed := 0
	for _, f := range finals {
		if f >= *threshold {
			passed++
		}
	}
	if *seeds > 1 {
		fmt.Fprintf(stdout, "# summary: %d of %d seeds reached %g or better; final means", passed, *seeds, *threshold)
		for _, f := range finals {
			fmt.Fprintf(stdout, " %.1f", f)
		}
		fmt.Fprintf(stdout, "; wall s")
		for _, w := range walls {
			fmt.Fprintf(stdout, " %.0f", w)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

func suffix(path string, seed uint64, seeds int) string {
	if path == "" || seeds == 1 {
		return path
	}
	return fmt.Sprintf("%s.seed%d", path, seed)
}

type benchRun struct {
	algo, taskKey    string
	task             benchTask
	steps            int64
	seed             uint64
	envs, workers    int
	evalEvery        int64
	evalEpisodes     int
	csv, save, ck    string
	ckEvery          time.Duration
	resume, progress bool
	command          string
}

type benchResult struct{ mean, std, wall float64 }

// newBenchAgent builds the learner with the settings documented in
// docs/rl.md: SB3 defaults plus the RL Zoo's tuned values for the task.
func newBenchAgent(r *benchRun, logger *trainlog.Logger) (episodic, error) {
	defEnvs := map[string]int{"sac": 1, "ddpg": 1, "ppo": 4, "a2c": 8, "dqn": 1}[r.algo]
	if r.taskKey == "cartpole" && r.algo == "ppo" {
		defEnvs = 8
	}
	if r.envs == 0 {
		r.envs = defEnvs
	}
	if r.steps == 0 {
		r.steps = map[string]int64{"sac": 20000, "ddpg": 20000, "ppo": 200000, "a2c": 100000, "dqn": 100000}[r.algo]
	}
	list := make([]env.Env, r.envs)
	for i := range list {
		list[i] = r.task.mk()
	}
	v, err := env.NewVec(list, r.workers)
	if err != nil {
		return nil, err
	}
	switch {
	case r.algo == "sac":
		// RL Zoo sac.yml Pendulum-v1: learning_rate 1e-3, the rest SB3 defaults.
		return sac.New(v, sac.Config{Seed: r.seed, LearningRate: 1e-3}, logger)
	case r.algo == "ddpg":
		// RL Zoo ddpg.yml Pendulum-v1.
		return ddpg.New(v, ddpg.Config{Seed: r.seed, Gamma: 0.98, BufferSize: 200000, LearningStarts: 10000,
			NoiseStd: 0.1, LearningRate: 1e-3, Hidden: []int{400, 300}}, logger)
	case r.algo == "ppo" && r.taskKey == "pendulum":
		// RL Zoo ppo.yml Pendulum-v1 ("Tuned"): 4 envs, n_steps 1024, λ 0.95,
		// γ 0.9, 10 epochs, ent 0, lr 1e-3, clip 0.2, gSDE every 4 steps.
		return ppo.New(v, ppo.Config{Seed: r.seed, NSteps: 1024, Gamma: 0.9, GAELambda: 0.95, NEpochs: 10, LearningRate: 1e-3,
			ClipRange: 0.2, UseSDE: true, SDESampleFreq: 4}, logger)
	case r.algo == "ppo":
		// RL Zoo ppo.yml CartPole-v1 (constant rates instead of linear decay).
		return ppo.New(v, ppo.Config{Seed: r.seed, NSteps: 32, BatchSize: 256, GAELambda: 0.8, Gamma: 0.98, NEpochs: 20, LearningRate: 1e-3}, logger)
	case r.algo == "a2c":
		return a2c.New(v, a2c.Config{Seed: r.seed, EntCoef: 0}, logger)
	case r.algo == "dqn":
		// RL Zoo dqn.yml CartPole-v1.
		return dqn.New(v, dqn.Config{Seed: r.seed, LearningRate: 2.3e-3, BatchSize: 64, BufferSize: 100000, LearningStarts: 1000,
			Gamma: 0.99, TargetUpdateInterval: 10, TrainFreq: 256, GradientSteps: 128, ExplorationFraction: 0.16, FinalEps: 0.04,
			Hidden: []int{256, 256}, TotalSteps: r.steps}, logger)
	}
	return nil, usagef("--algo %q is not available", r.algo)
}

func benchOne(ctx context.Context, r benchRun, stdout, stderr io.Writer) (benchResult, error) {
	var csvOut io.Writer
	if r.csv != "" {
		f, err := trainlog.OpenFile(r.csv, r.resume)
		if err != nil {
			return benchResult{}, err
		}
		defer f.Close()
		csvOut = f
	}
	var progressOut io.Writer
	if r.progress {
		progressOut = stderr
	}
	// The logger's total is set once steps are known, after newBenchAgent.
	tmp := &trainlog.Logger{}
	a, err := newBenchAgent(&r, tmp)
	if err != nil {
		return benchResult{}, err
	}
	*tmp = *trainlog.New(csvOut, progressOut, r.steps, fmt.Sprintf("%s seed %d", r.algo, r.seed))
	defer tmp.Close()
	every := r.evalEvery
	if every <= 0 {
		every = max(r.steps/10, 1)
	}
	evalSeed := uint64(1_000_000) + 1000*r.seed
	fmt.Fprintf(stdout, "# seed %d: %d steps, %d envs; eval of %d deterministic episodes every %d steps\n", r.seed, r.steps, r.envs, r.evalEpisodes, every)
	fmt.Fprintf(stdout, "%-8s %10s %14s %14s %10s\n", "seed", "steps", "train_return", "eval_return", "wall_s")
	start := time.Now()
	next := every
	evaluate := func(ag rl.Agent) (rl.Evaluation, error) {
		p, err := ag.Policy(policy.Meta{})
		if err != nil {
			return rl.Evaluation{}, err
		}
		return rl.Evaluate(p, r.task.mk(), r.evalEpisodes, evalSeed)
	}
	cfg := rl.TrainConfig{Steps: r.steps, CheckpointPath: r.ck, CheckpointEvery: r.ckEvery,
		AfterIteration: func(ag rl.Agent) error {
			if ag.Steps() < next && ag.Steps() < r.steps {
				return nil
			}
			for next <= ag.Steps() {
				next += every
			}
			ev, err := evaluate(ag)
			if err != nil {
				return err
			}
			tr, _ := a.EpisodeWindow()
			fmt.Fprintf(stdout, "%-8d %10d %14.1f %14.1f %10.1f\n", r.seed, ag.Steps(), tr, ev.Mean, time.Since(start).Seconds())
			return nil
		}}
	if r.resume && checkpoint.Exists(r.ck) {
		fmt.Fprintf(stdout, "# resuming from %s\n", r.ck)
	}
	run, err := rl.Train(ctx, a, cfg, r.resume)
	if err != nil {
		if errors.Is(err, context.Canceled) && r.ck != "" {
			fmt.Fprintf(stderr, "interrupted at step %d; checkpoint written to %s (continue with --resume)\n", a.Steps(), r.ck)
		}
		return benchResult{}, err
	}
	ev, err := evaluate(a)
	if err != nil {
		return benchResult{}, err
	}
	fmt.Fprintf(stdout, "# seed %d final: mean return %.1f ± %.1f over %d episodes, %d steps, training wall time %.1f s\n",
		r.seed, ev.Mean, ev.Std, r.evalEpisodes, a.Steps(), run.WallSeconds)
	if r.save != "" {
		p, err := a.Policy(policy.Meta{Algo: r.algo, Env: r.task.name, Command: r.command, Seed: r.seed, TrainingWallS: run.WallSeconds})
		if err != nil {
			return benchResult{}, err
		}
		if err := p.Save(r.save); err != nil {
			return benchResult{}, err
		}
	}
	return benchResult{mean: ev.Mean, std: ev.Std, wall: run.WallSeconds}, nil
}

func runRLEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("rl eval", stderr)
	episodes := fs.Int("episodes", 10, "evaluation episodes")
	seed := fs.Uint64("seed", 1_000_000, "seed of the first episode")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want TASK POLICY_FILE, got %d arguments", len(pos))
	}
	task, ok := benchTasks[pos[0]]
	if !ok {
		return usagef("unknown task %q; want pendulum or cartpole", pos[0])
	}
	if *episodes < 1 {
		return usagef("--episodes must be >= 1, got %d", *episodes)
	}
	p, err := policy.Load(pos[1])
	if err != nil {
		return err
	}
	ev, err := rl.Evaluate(p, task.mk(), *episodes, *seed)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[1], err)
	}
	fmt.Fprintf(stdout, "policy %s: algo %s, trained %d steps (seed %d), training_wall_s %.1f\n", pos[1], p.Meta.Algo, p.Meta.Steps, p.Meta.Seed, p.Meta.TrainingWallS)
	fmt.Fprintf(stdout, "mean return %.1f ± %.1f over %d episodes\n", ev.Mean, ev.Std, *episodes)
	return nil
}

// randomEnv is a synthetic environment with the observation and action
// sizes of a real task (e.g. MARLIN's 980 inputs), for speed measurements.
type randomEnv struct {
	obs, act space.Space
	buf      []float32
	n        uint64
}

func (e *randomEnv) ObservationSpace() space.Space { return e.obs }
func (e *randomEnv) ActionSpace() space.Space      { return e.act }
func (e *randomEnv) Reset(seed uint64) ([]float32, env.Info) {
	e.n = seed
	return e.next(), nil
}
func (e *randomEnv) Step([]float32) ([]float32, float64, bool, bool, env.Info) {
	return e.next(), float64(e.n%7) / 7, false, e.n%200 == 0, nil
}
func (e *randomEnv) next() []float32 {
	for i := range e.buf {
		e.n = e.n*6364136223846793005 + 1442695040888963407
		e.buf[i] = float32(e.n>>40)/float32(1<<24) - 0.5
	}
	return e.buf
}

func runRLSpeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("rl speed", stderr)
	algo := fs.String("algo", "sac", "sac, ddpg (one gradient step), ppo (one minibatch step), mlp (one MLP update), infer (batch-1 policy inference)")
	obsDim := fs.Int("obs", 980, "observation size (MARLIN: 980)")
	actDim := fs.Int("act", 1, "action size")
	hidden := fs.String("hidden", "400,300", "hidden layer widths, comma-separated")
	batch := fs.Int("batch", 512, "minibatch size")
	seconds := fs.Float64("seconds", 10, "measurement time")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("unexpected arguments %q", pos)
	}
	var hs []int
	for _, f := range strings.Split(*hidden, ",") {
		var h int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &h); err != nil || h < 1 {
			return usagef("--hidden: %q is not a positive width", f)
		}
		hs = append(hs, h)
	}
	if *obsDim < 1 || *actDim < 1 || *batch < 1 || !(*seconds > 0) {
		return usagef("--obs, --act, --batch and --seconds must be positive")
	}
	e := &randomEnv{obs: space.Uniform(-1, 1, *obsDim), act: space.Uniform(-1, 1, *actDim), buf: make([]float32, *obsDim)}
	v, err := env.NewVec([]env.Env{e}, 1)
	if err != nil {
		return err
	}
	var step func()
	var fill rl.Agent
	perStep := 1 // gradient steps per call of step
	switch *algo {
	case "mlp":
		m := nn.NewMLP(append(append([]int{*obsDim}, hs...), *actDim), nn.ReLU, nn.Identity)
		m.InitTorchDefault(rand.New(rand.NewPCG(1, 1)))
		opt := nn.NewAdam(len(m.Params), 3e-4)
		ws := m.NewWorkspace()
		x := make([]float32, *batch**obsDim)
		dy := make([]float32, *batch**actDim)
		for i := range x {
			x[i] = float32(i%13) / 13
		}
		for i := range dy {
			dy[i] = 1 / float32(*batch)
		}
		step = func() {
			m.ZeroGrad()
			m.Forward(ws, x, *batch)
			m.Backward(ws, dy, false)
			opt.Step(m.Params, m.Grads)
		}
	case "infer":
		m := nn.NewMLP(append(append([]int{*obsDim}, hs...), 2**actDim), nn.ReLU, nn.Identity)
		m.InitTorchDefault(rand.New(rand.NewPCG(1, 1)))
		p, err := policy.New(e.obs, e.act, policy.Squash, m, nil, policy.Meta{})
		if err != nil {
			return err
		}
		x := make([]float32, *obsDim)
		step = func() { p.ActInto(x) }
	case "ppo":
		p, err := ppo.New(v, ppo.Config{Hidden: hs, BatchSize: *batch, NSteps: 4 * *batch, NEpochs: 1}, nil)
		if err != nil {
			return err
		}
		if err := p.Iterate(ctx); err != nil {
			return err
		}
		perStep = 4
		step = func() { p.Reoptimize(ctx) }
	case "sac":
		// LearningStarts = batch: the buffer fills with random actions and
		// no updates, which are then timed one by one.
		s, err := sac.New(v, sac.Config{Hidden: hs, BatchSize: *batch, BufferSize: 10000, LearningStarts: *batch, GradientSteps: 1}, nil)
		if err != nil {
			return err
		}
		step, fill = s.GradientStep, s
	case "ddpg":
		d, err := ddpg.New(v, ddpg.Config{Hidden: hs, BatchSize: *batch, BufferSize: 10000, LearningStarts: *batch}, nil)
		if err != nil {
			return err
		}
		step, fill = d.GradientStep, d
	default:
		return usagef("--algo must be sac, ddpg, ppo, mlp or infer, got %q", *algo)
	}
	for fill != nil && fill.Steps() < int64(*batch) {
		if err := fill.Iterate(ctx); err != nil {
			return err
		}
	}
	step() // warm-up: buffers sized
	n := 0
	start := time.Now()
	cpu0, _ := cputime.Process()
	for time.Since(start).Seconds() < *seconds && ctx.Err() == nil {
		step()
		n++
	}
	el := time.Since(start).Seconds()
	cpu1, _ := cputime.Process()
	cpu := (cpu1 - cpu0).Seconds() // the whole process's, so GC counts too
	n *= perStep
	if *algo == "infer" {
		fmt.Fprintf(stdout, "infer: obs %d, act %d, hidden %v, batch 1, backend %s: %.1f us/op (%d in %.1f s; %.1f s CPU)\n",
			*obsDim, *actDim, hs, nn.BackendName(), el/float64(n)*1e6, n, el, cpu)
		return nil
	}
	fmt.Fprintf(stdout, "%s update: obs %d, act %d, hidden %v, batch %d, backend %s: %.1f updates/s (%d in %.1f s; %.1f s CPU)\n",
		*algo, *obsDim, *actDim, hs, *batch, nn.BackendName(), float64(n)/el, n, el, cpu)
	return nil
}
