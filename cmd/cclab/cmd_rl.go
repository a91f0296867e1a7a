package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/bench"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/policy"
)

func init() {
	register(&command{name: "rl bench", summary: "train an RL algorithm on a reference task (pendulum, cartpole) and report returns",
		args: "TASK", help: "TASK is pendulum or cartpole.", run: runRLBench})
	register(&command{name: "rl speed", summary: "measure update speed (SAC, DDPG, PPO, MLP) or inference latency at given network sizes", run: runRLSpeed})
	register(&command{name: "rl eval", summary: "evaluate a saved policy file on a reference task",
		args: "TASK POLICY", help: "TASK is pendulum or cartpole; POLICY a policy file saved by cclab rl bench --save.", run: runRLEval})
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
	showProgress := fs.Bool("progress", false, "show a progress bar on stderr")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one task (pendulum or cartpole), got %d arguments", len(pos))
	}
	task, ok := bench.Tasks[pos[0]]
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
		*threshold = task.Threshold
	}
	if !slices.Contains(task.Algos, *algo) {
		return usagef("--algo %q does not apply to %s; want one of %s", *algo, pos[0], strings.Join(task.Algos, ", "))
	}
	// Every seed's policy file, before the first seed trains: a later
	// seed's path failing would otherwise waste the earlier seeds' hours.
	for i := 0; i < *seeds; i++ {
		if p := suffix(*savePath, *seed+uint64(i), *seeds); p != "" {
			if err := bench.CheckSavePath(p); err != nil {
				return fmt.Errorf("--save: %w", err)
			}
		}
	}
	command := "cclab rl bench " + strings.Join(args, " ")
	fmt.Fprintf(stdout, "# %s on %s, backend %s\n", *algo, task.Name, nn.BackendName())
	var finals []float64
	var walls []float64
	for i := 0; i < *seeds; i++ {
		s := *seed + uint64(i)
		res, err := bench.Run(ctx, bench.Config{Algo: *algo, Task: task, TaskKey: pos[0], Steps: *steps, Seed: s, Envs: *envs, Workers: *workers,
			EvalEvery: *evalEvery, EvalEpisodes: *evalEpisodes, CSV: suffix(*csvPath, s, *seeds), Save: suffix(*savePath, s, *seeds),
			Checkpoint: *ckPath, CheckpointEvery: *ckEvery, Resume: *resume, Progress: *showProgress, Command: command}, stdout, stderr)
		if err != nil {
			return err
		}
		finals = append(finals, res.Mean)
		walls = append(walls, res.Wall)
	}
	printBenchSummary(stdout, finals, walls, *threshold)
	return nil
}

// printBenchSummary prints how many seeds reached the threshold, with
// every seed's final mean return and wall time.
func printBenchSummary(stdout io.Writer, finals, walls []float64, threshold float64) {
	passed := 0
	for _, f := range finals {
		if f >= threshold {
			passed++
		}
	}
	if len(finals) > 1 {
		fmt.Fprintf(stdout, "# summary: %d of %d seeds reached %g or better; final means", passed, len(finals), threshold)
		for _, f := range finals {
			fmt.Fprintf(stdout, " %.1f", f)
		}
		fmt.Fprintf(stdout, "; wall s")
		for _, w := range walls {
			fmt.Fprintf(stdout, " %.0f", w)
		}
		fmt.Fprintln(stdout)
	}
}

func suffix(path string, seed uint64, seeds int) string {
	if path == "" || seeds == 1 {
		return path
	}
	return fmt.Sprintf("%s.seed%d", path, seed)
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
	task, ok := bench.Tasks[pos[0]]
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
	ev, err := rl.Evaluate(p, task.New(), *episodes, *seed)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[1], err)
	}
	fmt.Fprintf(stdout, "policy %s: algo %s, trained %d steps (seed %d), training_wall_s %.1f\n", pos[1], p.Meta.Algo, p.Meta.Steps, p.Meta.Seed, p.Meta.TrainingWallS)
	fmt.Fprintf(stdout, "mean return %.1f ± %.1f over %d episodes\n", ev.Mean, ev.Std, *episodes)
	return nil
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
		if h > maxSpeedWidth {
			return usagef("--hidden: width %d is out of range; accepted: 1 to %d", h, maxSpeedWidth)
		}
		hs = append(hs, h)
	}
	if len(hs) > maxSpeedLayers {
		return usagef("--hidden: %d layers; accepted: 1 to %d", len(hs), maxSpeedLayers)
	}
	for _, b := range []struct {
		name   string
		v, max int
	}{{"--obs", *obsDim, maxSpeedObs}, {"--act", *actDim, maxSpeedAct}, {"--batch", *batch, maxSpeedBatch}} {
		if b.v < 1 || b.v > b.max {
			return usagef("%s %d is out of range; accepted: 1 to %d", b.name, b.v, b.max)
		}
	}
	if !(*seconds > 0) {
		return usagef("--seconds must be positive, got %g", *seconds)
	}
	if !slices.Contains(bench.SpeedAlgos, *algo) {
		return usagef("--algo must be sac, ddpg, ppo, mlp or infer, got %q", *algo)
	}
	if mem, params := speedFootprint(*algo, *obsDim, *actDim, hs, *batch); mem > speedMemoryLimit {
		return usagef("--obs %d --act %d --hidden %s --batch %d: %s at these sizes has %.3g parameters and needs about %s of memory, above the limit of %s; use a smaller --obs, --hidden or --batch",
			*obsDim, *actDim, *hidden, *batch, *algo, params, humanBytes(mem), humanBytes(speedMemoryLimit))
	}
	n, el, cpu, err := bench.Speed(ctx, bench.SpeedConfig{Algo: *algo, Obs: *obsDim, Act: *actDim, Hidden: hs, Batch: *batch, Seconds: *seconds})
	if err != nil {
		return err
	}
	if *algo == "infer" {
		fmt.Fprintf(stdout, "infer: obs %d, act %d, hidden %v, batch 1, backend %s: %.1f us/op (%d in %.1f s; %.1f s CPU)\n",
			*obsDim, *actDim, hs, nn.BackendName(), el/float64(n)*1e6, n, el, cpu)
		return nil
	}
	fmt.Fprintf(stdout, "%s update: obs %d, act %d, hidden %v, batch %d, backend %s: %.1f updates/s (%d in %.1f s; %.1f s CPU)\n",
		*algo, *obsDim, *actDim, hs, *batch, nn.BackendName(), float64(n)/el, n, el, cpu)
	return nil
}

// Bounds of rl speed's sizes. Each alone keeps the arithmetic below far
// from overflow; speedMemoryLimit then refuses combinations that would
// exhaust memory (the runtime's out-of-memory error is a fatal crash, not
// an error the command could report).
const (
	maxSpeedObs    = 1 << 20
	maxSpeedAct    = 4096
	maxSpeedWidth  = 65536
	maxSpeedLayers = 16
	maxSpeedBatch  = 65536
	// speedMemoryLimit is what a measurement may need by speedFootprint's
	// estimate: well above the sizes measured in practice (MARLIN's 980
	// inputs and [400, 300] need about 0.1 GiB) and well below a machine's
	// memory once the garbage collector's headroom is added.
	speedMemoryLimit = 2 << 30
)

// speedFootprint estimates the memory (bytes) of rl speed's measurement
// and the number of trainable parameters. It follows what the learners
// allocate, in float32s: per trained network the parameters, gradients and
// Adam's two moments, two more copies for each target network, the
// activations and backward scratch of every workspace, and the batch's
// transitions (a replay buffer of about one batch, which grows by
// appending, and the sampled minibatch).
func speedFootprint(algo string, obs, act int, hidden []int, batch int) (bytes, params float64) {
	type net struct{ in, out int }
	nparams := func(n net) float64 {
		p, in := 0.0, float64(n.in)
		for _, w := range append(append([]int(nil), hidden...), n.out) {
			p += in*float64(w) + float64(w)
			in = float64(w)
		}
		return p
	}
	workspace := func(n net, b int) float64 {
		widest, sum := max(n.in, n.out), float64(n.out)
		for _, w := range hidden {
			widest = max(widest, w)
			sum += float64(w)
		}
		return float64(b) * (2*float64(n.in) + sum + 2*float64(widest))
	}
	b, o, a := float64(batch), float64(obs), float64(act)
	transitions := 3 * b * (2*o + a + 2)
	var floats float64
	switch algo {
	case "mlp":
		m := net{obs, act}
		params = nparams(m)
		floats = 4*params + workspace(m, batch) + b*(o+a)
	case "infer":
		m := net{obs, 2 * act}
		params = nparams(m)
		floats = 4*params + workspace(m, 1) + o
	case "sac":
		actor, critic := net{obs, 2 * act}, net{obs + act, 1}
		params = nparams(actor) + 2*nparams(critic)
		floats = 4*nparams(actor) + 2*(4+2)*nparams(critic) + 3*workspace(actor, batch) + 4*workspace(critic, batch) + transitions
	case "ddpg":
		actor, critic := net{obs, act}, net{obs + act, 1}
		params = nparams(actor) + nparams(critic)
		floats = 6*params + 3*workspace(actor, batch) + 2*workspace(critic, batch) + transitions
	case "ppo":
		pi, vf := net{obs, act}, net{obs, 1}
		params = nparams(pi) + nparams(vf)
		// A rollout of 4 batches, then minibatches of one.
		floats = 4*params + 2*workspace(pi, batch) + 2*workspace(vf, batch) + 5*b*(o+a+9)
	}
	return 4 * floats, params
}

// humanBytes prints a size in MiB or GiB.
func humanBytes(b float64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.3g GiB", b/(1<<30))
}
