// Package bench is the RL benchmark harness behind `cclab rl bench` and
// `cclab rl speed`: the reference tasks, the tuned settings of each
// algorithm, a training run with periodic deterministic evaluations, and
// update-speed measurements at given network sizes.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cclab/cclab/internal/atomicfile"
	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/a2c"
	"github.com/cclab/cclab/learn/rl/cartpole"
	"github.com/cclab/cclab/learn/rl/checkpoint"
	"github.com/cclab/cclab/learn/rl/ddpg"
	"github.com/cclab/cclab/learn/rl/dqn"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/pendulum"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/ppo"
	"github.com/cclab/cclab/learn/rl/sac"
	"github.com/cclab/cclab/learn/rl/trainlog"
)

// Episodic is implemented by every learner: the mean return and length of
// its last 100 training episodes.
type Episodic interface {
	rl.Agent
	EpisodeWindow() (meanReturn, meanLength float64)
}

// Task is a reference task: its Gymnasium name, a constructor, the
// algorithms benchmarked on it and the final mean return that counts as
// solved.
type Task struct {
	Name      string
	New       func() env.Env
	Algos     []string
	Threshold float64
}

// Tasks are the reference tasks by command-line name.
var Tasks = map[string]Task{
	"pendulum": {"Pendulum-v1", pendulum.New, []string{"sac", "ppo", "ddpg"}, -200},
	"cartpole": {"CartPole-v1", cartpole.New, []string{"ppo", "a2c", "dqn"}, 475},
}

// Config is one training run of the benchmark: an algorithm on a task
// with one seed.
type Config struct {
	// Algo is sac, ddpg or ppo (pendulum), ppo, a2c or dqn (cartpole);
	// TaskKey is the task's key in Tasks.
	Algo, TaskKey string
	Task          Task
	// Steps and Envs are 0 for the algorithm's tuned setting.
	Steps         int64
	Seed          uint64
	Envs, Workers int
	// EvalEvery is 0 for Steps/10.
	EvalEvery    int64
	EvalEpisodes int
	// CSV, Save and Checkpoint are file paths, empty for none.
	CSV, Save, Checkpoint string
	CheckpointEvery       time.Duration
	Resume, Progress      bool
	// Command is recorded in the saved policy.
	Command string
}

// Result is the final evaluation of a run and its training wall time.
type Result struct{ Mean, Std, Wall float64 }

// NewAgent builds the learner with the settings documented in
// docs/rl.md: SB3 defaults plus the RL Zoo's tuned values for the task.
func NewAgent(r *Config, logger *trainlog.Logger) (Episodic, error) {
	defEnvs := map[string]int{"sac": 1, "ddpg": 1, "ppo": 4, "a2c": 8, "dqn": 1}[r.Algo]
	if r.TaskKey == "cartpole" && r.Algo == "ppo" {
		defEnvs = 8
	}
	if r.Envs == 0 {
		r.Envs = defEnvs
	}
	if r.Steps == 0 {
		r.Steps = map[string]int64{"sac": 20000, "ddpg": 20000, "ppo": 200000, "a2c": 100000, "dqn": 100000}[r.Algo]
	}
	list := make([]env.Env, r.Envs)
	for i := range list {
		list[i] = r.Task.New()
	}
	v, err := env.NewVec(list, r.Workers)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Algo == "sac":
		// RL Zoo sac.yml Pendulum-v1: learning_rate 1e-3, the rest SB3 defaults.
		return sac.New(v, sac.Config{Seed: r.Seed, LearningRate: 1e-3}, logger)
	case r.Algo == "ddpg":
		// RL Zoo ddpg.yml Pendulum-v1.
		return ddpg.New(v, ddpg.Config{Seed: r.Seed, Gamma: 0.98, BufferSize: 200000, LearningStarts: 10000,
			NoiseStd: 0.1, LearningRate: 1e-3, Hidden: []int{400, 300}}, logger)
	case r.Algo == "ppo" && r.TaskKey == "pendulum":
		// RL Zoo ppo.yml Pendulum-v1 ("Tuned"): 4 envs, n_steps 1024, λ 0.95,
		// γ 0.9, 10 epochs, ent 0, lr 1e-3, clip 0.2, gSDE every 4 steps.
		return ppo.New(v, ppo.Config{Seed: r.Seed, NSteps: 1024, Gamma: 0.9, GAELambda: 0.95, NEpochs: 10, LearningRate: 1e-3,
			ClipRange: 0.2, UseSDE: true, SDESampleFreq: 4}, logger)
	case r.Algo == "ppo":
		// RL Zoo ppo.yml CartPole-v1 (constant rates instead of linear decay).
		return ppo.New(v, ppo.Config{Seed: r.Seed, NSteps: 32, BatchSize: 256, GAELambda: 0.8, Gamma: 0.98, NEpochs: 20, LearningRate: 1e-3}, logger)
	case r.Algo == "a2c":
		return a2c.New(v, a2c.Config{Seed: r.Seed, EntCoef: 0}, logger)
	case r.Algo == "dqn":
		// RL Zoo dqn.yml CartPole-v1.
		return dqn.New(v, dqn.Config{Seed: r.Seed, LearningRate: 2.3e-3, BatchSize: 64, BufferSize: 100000, LearningStarts: 1000,
			Gamma: 0.99, TargetUpdateInterval: 10, TrainFreq: 256, GradientSteps: 128, ExplorationFraction: 0.16, FinalEps: 0.04,
			Hidden: []int{256, 256}, TotalSteps: r.Steps}, logger)
	}
	return nil, fmt.Errorf("algorithm %q is not available", r.Algo)
}

// Run trains one seed, printing a learning-curve row to stdout at each
// evaluation and the final score, and saves the policy if asked.
func Run(ctx context.Context, r Config, stdout, stderr io.Writer) (Result, error) {
	var csvOut io.Writer
	if r.CSV != "" {
		f, err := trainlog.OpenFile(r.CSV, r.Resume)
		if err != nil {
			return Result{}, err
		}
		defer f.Close()
		csvOut = f
	}
	// Saving comes after training, which can take hours: a path it cannot
	// write should fail now, as an unwritable --csv does.
	if r.Save != "" {
		if err := CheckSavePath(r.Save); err != nil {
			return Result{}, err
		}
	}
	var progressOut io.Writer
	if r.Progress {
		progressOut = stderr
	}
	// The logger's total is set once steps are known, after NewAgent.
	tmp := &trainlog.Logger{}
	a, err := NewAgent(&r, tmp)
	if err != nil {
		return Result{}, err
	}
	*tmp = *trainlog.New(csvOut, progressOut, r.Steps, fmt.Sprintf("%s seed %d", r.Algo, r.Seed))
	defer tmp.Close()
	every := r.EvalEvery
	if every <= 0 {
		every = max(r.Steps/10, 1)
	}
	evalSeed := uint64(1_000_000) + 1000*r.Seed
	fmt.Fprintf(stdout, "# seed %d: %d steps, %d envs; eval of %d deterministic episodes every %d steps\n", r.Seed, r.Steps, r.Envs, r.EvalEpisodes, every)
	fmt.Fprintf(stdout, "%-8s %10s %14s %14s %10s\n", "seed", "steps", "train_return", "eval_return", "wall_s")
	start := time.Now()
	next := every
	evaluate := func(ag rl.Agent) (rl.Evaluation, error) {
		p, err := ag.Policy(policy.Meta{})
		if err != nil {
			return rl.Evaluation{}, err
		}
		return rl.Evaluate(p, r.Task.New(), r.EvalEpisodes, evalSeed)
	}
	cfg := rl.TrainConfig{Steps: r.Steps, CheckpointPath: r.Checkpoint, CheckpointEvery: r.CheckpointEvery,
		AfterIteration: func(ag rl.Agent) error {
			if ag.Steps() < next && ag.Steps() < r.Steps {
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
			fmt.Fprintf(stdout, "%-8d %10d %14s %14.1f %10.1f\n", r.Seed, ag.Steps(), formatReturn(tr), ev.Mean, time.Since(start).Seconds())
			return nil
		}}
	if r.Resume && checkpoint.Exists(r.Checkpoint) {
		fmt.Fprintf(stdout, "# resuming from %s\n", r.Checkpoint)
	}
	run, err := rl.Train(ctx, a, cfg, r.Resume)
	if err != nil {
		if errors.Is(err, context.Canceled) && r.Checkpoint != "" {
			fmt.Fprintf(stderr, "interrupted at step %d; checkpoint written to %s (continue with --resume)\n", a.Steps(), r.Checkpoint)
		}
		return Result{}, err
	}
	ev, err := evaluate(a)
	if err != nil {
		return Result{}, err
	}
	fmt.Fprintf(stdout, "# seed %d final: mean return %.1f ± %.1f over %d episodes, %d steps, training wall time %.1f s\n",
		r.Seed, ev.Mean, ev.Std, r.EvalEpisodes, a.Steps(), run.WallSeconds)
	if r.Save != "" {
		p, err := a.Policy(policy.Meta{Algo: r.Algo, Env: r.Task.Name, Command: r.Command, Seed: r.Seed, TrainingWallS: run.WallSeconds})
		if err != nil {
			return Result{}, err
		}
		if err := p.Save(r.Save); err != nil {
			return Result{}, err
		}
	}
	return Result{Mean: ev.Mean, Std: ev.Std, Wall: run.WallSeconds}, nil
}

// formatReturn prints a mean training return with one decimal, and a dash
// before any episode has finished (the mean of nothing, NaN), as the
// tool's other text tables print undefined values. The CSV keeps its own
// convention: an empty cell.
func formatReturn(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// CheckSavePath reports whether a policy can be saved to path: path is not
// a folder, and its folder takes the temporary file that policy.Save
// writes and renames (created and removed here).
func CheckSavePath(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("cannot save the policy to %s: it is a folder", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), atomicfile.TempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("cannot save the policy to %s: %w", path, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
