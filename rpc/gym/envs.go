package gym

import (
	"fmt"
	"strings"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/scenarioenv"
	"github.com/cclab/cclab/papers/datacenter"
	"github.com/cclab/cclab/papers/deepcc"
	"github.com/cclab/cclab/papers/marlin"
	_ "github.com/cclab/cclab/traces" // the built-in traces DeepCC trains on
)

// Option documents one Make option.
type Option struct {
	Name, Doc string
}

// Spec describes one environment id the service can make.
type Spec struct {
	// ID is the Gymnasium id, e.g. "cclab/Marlin-v0".
	ID string
	// Doc is a one-line description.
	Doc string
	// Options are the accepted Make options.
	Options []Option
	// Make builds n independent environments from the options, and
	// returns the episode limit (0 if none).
	Make func(o *options, n int) (envs []env.Env, maxSteps int, err error)
}

// marlinOptions lists both MARLIN variants' options, with the variant's
// own (extra) after the training ones and before the evaluation ones.
func marlinOptions(extra ...Option) []Option {
	o := []Option{
		{"scenario", "scenario file or built-in name [satcom-uhf]"},
		{"scenario_yaml", "the scenario's YAML itself, instead of scenario"},
		{"loss", "UHF random loss [0.03]"},
		{"randomize", "randomise switch time and background per episode [true]"},
		{"switch_range", "with randomize, the switch time's range LO,HI, as `cclab marlin train --switch-range` [5s,15s]"},
		{"background_range", "with randomize, the background's UDP scale range LO,HI, as `--background-range` [0.8,1.2]"},
		{"delay_range", "with randomize, the range LO,HI of a factor on each link's one-way delay, as `--delay-range` [none]"},
		{"rate_range", "with randomize, the range LO,HI of a factor on each link's rate, as `--rate-range` [none]"},
		{"queue_range", "with randomize, the range LO,HI of a factor on the bottleneck queue's limit, as `--queue-range` [none]"},
		{"bulk", "never-ending flow instead of 300 KB-1 MB transfers [false]"},
	}
	o = append(o, extra...)
	return append(o, []Option{
		{"eval_loss", "evaluation mode: one transfer at this UHF loss, as `cclab marlin eval` runs it; the last step's info has transfer_time_s, finished, retransmissions_total and rti [off]"},
		{"eval_bytes", "evaluation transfer size, bytes [600000]"},
		{"max_time", "evaluation time limit [120s]"},
	}...)
}

// Specs are the environments the service offers, in ListEnvs order.
var Specs = []Spec{
	{
		ID:      "cclab/Marlin-v0",
		Doc:     "MARLIN (papers/marlin): a Mockets flow's window on the SATCOM-to-UHF dumbbell; 10 stacked 14x7 statistics, 200-step episodes, as `cclab marlin train` trains",
		Options: marlinOptions(),
		Make:    makeMarlin(marlin.VariantPaper),
	},
	{
		ID:  "cclab/MarlinCompact-v0",
		Doc: "compact MARLIN (ours, papers/marlin/variant.go): 8 normalised features x 4 steps, the window in BDP units, a reward pricing transfer time, retransmissions and queueing; as `cclab marlin train --variant compact` trains",
		Options: marlinOptions(Option{"action", "bdp (window = BDP estimate x 2^(span a)) or log2 (w' = w 2^a) [bdp]"},
			Option{"bdp_span", "with the bdp action, its span, as `cclab marlin train --bdp-span`; from 1 to 8 [2]"},
			Option{"frame_skip", "hold each action for this many 100-ms steps, rewards summed, as `cclab marlin train --frame-skip`; a divisor of 200 [1]"},
			Option{"capacity_window", "the capacity estimate's max-filter window, as `cclab marlin train --capacity-window`; a multiple of 100ms up to 10s [2s]"},
			Option{"min_rtt_window", "the minimum-RTT filter's window, as `cclab marlin train --min-rtt-window`; a multiple of 100ms up to 10s [5s]"},
			Option{"rtt_feature", "add the windowed minimum RTT to each step's features (9 x 4 values), as `cclab marlin train --rtt-feature` [false]"},
			Option{"window_cap", "the largest window the agent may set, as `cclab marlin train --window-cap`; 15KB to 10MB [150KB, the paper's]"}),
		Make: makeMarlin(marlin.VariantCompact),
	},
	{
		ID:  "cclab/DeepCC-v0",
		Doc: "DeepCC (papers/deepcc): goal-conditioned window and pacing of a bulk flow over sampled cellular traces and fixed links, 20 s episodes",
		Options: []Option{
			{"traces", "comma-separated built-in training traces [" + strings.Join(deepcc.TrainTraces, ",") + "]"},
			{"length", "episode length in simulated time [20s]"},
		},
		Make: makeDeepCC,
	},
	{
		ID:  "cclab/BBRTuning-v0",
		Doc: "data-centre BBR tuning (papers/datacenter): one agent sets the RTprop/BtlBw windows of every BBR flow, randomised training conditions",
		Options: []Option{
			{"scenario", "scenario file or built-in name [datacenter]"},
			{"scenario_yaml", "the scenario's YAML itself, instead of scenario"},
			{"action", "discrete (12 settings) or continuous [discrete]"},
			{"history", "stacked observations, 1-16 [1]"},
			{"interval", "agent step [100ms]"},
			{"steps", "steps per episode [30]"},
		},
		Make: makeBBR,
	},
	{
		ID:  "cclab/Scenario-v0",
		Doc: "any scenario: the agent drives one flow's window, pacing rate or a controller parameter, or the bottleneck's ECN marking threshold (docs/python.md)",
		Options: []Option{
			{"scenario", "scenario file or built-in name (required unless scenario_yaml)"},
			{"scenario_yaml", "the scenario's YAML itself, instead of scenario"},
			{"flow", "name of the flow the agent drives [the first]"},
			{"action", "window, pacing, mark_threshold or param:NAME [window]"},
			{"step", "time between actions [100ms]"},
			{"episode_steps", "steps per episode before truncation [200]"},
			{"features", "comma-separated observation features [" + strings.Join(scenarioenv.DefaultFeatures, ",") + "] from: " + strings.Join(scenarioenv.Features, ", ")},
			{"reward", "utilization, utilization-delay or power [utilization-delay]"},
			{"delay_weight", "utilization-delay's queueing-delay weight [0.5]"},
			{"loss_weight", "utilization-delay's loss weight [1]"},
			{"initial_rate_mbps", "the pacing action's first rate [1]"},
		},
		Make: makeScenario,
	},
}

// lookup returns the spec with the given id.
func lookup(id string) (*Spec, error) {
	ids := make([]string, len(Specs))
	for i := range Specs {
		if Specs[i].ID == id {
			return &Specs[i], nil
		}
		ids[i] = Specs[i].ID
	}
	return nil, fmt.Errorf("env_id: unknown environment %q (available: %s)", id, strings.Join(ids, ", "))
}

func makeN(n int, f func() (env.Env, error)) ([]env.Env, error) {
	envs := make([]env.Env, n)
	for i := range envs {
		e, err := f()
		if err != nil {
			return nil, err
		}
		envs[i] = e
	}
	return envs, nil
}

// makeMarlin makes the MARLIN environments of one formulation
// (marlin.VariantPaper or marlin.VariantCompact).
func makeMarlin(variant string) func(o *options, n int) ([]env.Env, int, error) {
	return func(o *options, n int) ([]env.Env, int, error) {
		base := o.Scenario("scenario", "satcom-uhf")
		tc := marlin.TrainConfig{
			Base:      base,
			Loss:      o.Float("loss", 0.03, 0, 0.99),
			Randomize: o.Bool("randomize", true),
			Bulk:      o.Bool("bulk", false),
			Variant:   variant,
			Action:    marlin.ActionLinear,
		}
		timelineOptions(o, &tc.Timeline, tc.Randomize)
		skip := 1
		if variant == marlin.VariantCompact {
			tc.Action = o.String("action", marlin.ActionBDP)
			if tc.Action != marlin.ActionBDP && tc.Action != marlin.ActionLog2 {
				o.fail("action", "%q: want %s or %s", tc.Action, marlin.ActionBDP, marlin.ActionLog2)
			}
			if skip = o.Int("frame_skip", 1, 1, marlin.EpisodeSteps); marlin.EpisodeSteps%skip != 0 {
				o.fail("frame_skip", "%d does not divide the episode's %d steps", skip, marlin.EpisodeSteps)
			}
			for _, w := range []struct {
				name string
				def  time.Duration
				d    *time.Duration
			}{{"capacity_window", marlin.DefaultCapacityWindow, &tc.CapacityWindow}, {"min_rtt_window", marlin.DefaultMinRTTWindow, &tc.MinRTTWindow}} {
				if *w.d = o.Duration(w.name, w.def, marlin.StepInterval, marlin.MaxFilterWindow); !marlin.ValidFilterWindow(*w.d) {
					o.fail(w.name, "%v is not a multiple of %v", *w.d, marlin.StepInterval)
				}
				if *w.d == w.def {
					*w.d = 0 // the default, recorded as such
				}
			}
			if _, ok := o.m["bdp_span"]; ok && tc.Action != marlin.ActionBDP {
				o.fail("bdp_span", "needs the %s action", marlin.ActionBDP)
			}
			if tc.BDPSpan = o.Float("bdp_span", marlin.DefaultBDPSpan, 1, marlin.MaxBDPSpan); tc.BDPSpan == marlin.DefaultBDPSpan {
				tc.BDPSpan = 0 // the default, recorded as such
			}
			tc.RTTFeature = o.Bool("rtt_feature", false)
			if v, ok := o.raw("window_cap"); ok {
				var err error
				if tc.WindowCap, err = marlin.ParseWindowCap(v); err != nil {
					o.fail("window_cap", "%v", err)
				}
			}
		}
		_, evalMode := o.m["eval_loss"]
		evalLoss := o.Float("eval_loss", 0, 0, 0.99)
		evalBytes := o.Float("eval_bytes", 600_000, 1, 1e12)
		maxTime := o.Duration("max_time", 120*time.Second, marlin.StepInterval, time.Hour)
		if err := o.Done(); err != nil {
			return nil, 0, err
		}
		if evalMode {
			envs, err := makeN(n, func() (env.Env, error) {
				e, err := marlin.NewConfigEvalEnv(base, evalLoss, units.Bytes(evalBytes), maxTime, tc.EnvConfigFor(), skip)
				return &marlinEval{EvalEnv: e}, err
			})
			// The last action may be held for fewer steps (the limit).
			return envs, (int(maxTime/marlin.StepInterval) + skip - 1) / skip, err
		}
		envs, err := makeN(n, func() (env.Env, error) { return marlin.NewFrameSkipTrainingEnv(tc.EnvConfigFor(), skip) })
		return envs, marlin.EpisodeSteps / skip, err
	}
}

// timelineOptions reads the training timeline's ranges into t, each as
// `cclab marlin train` reads its flag and checked as Train checks it.
func timelineOptions(o *options, t *marlin.Timeline, randomize bool) {
	for _, r := range []string{"switch-range", "background-range", "delay-range", "rate-range", "queue-range"} {
		name := strings.ReplaceAll(r, "-", "_")
		v, ok := o.raw(name)
		if !ok {
			continue
		}
		if !randomize {
			o.fail(name, "needs randomize true")
			continue
		}
		err := t.SetRange(r, v)
		if err == nil {
			// The ranges before this one passed: a failure is this one's.
			err = t.Check()
		}
		if err != nil {
			o.fail(name, "%v", err)
		}
	}
}

// marlinEval reports the transfer's outcome in the info of the step that
// ends the episode.
type marlinEval struct {
	*marlin.EvalEnv
	info env.Info
}

func (e *marlinEval) Step(a []float32) ([]float32, float64, bool, bool, env.Info) {
	obs, r, term, trunc, info := e.EvalEnv.Step(a)
	if !term && !trunc {
		return obs, r, term, trunc, info
	}
	if e.info == nil {
		e.info = env.Info{}
	}
	clear(e.info)
	for k, v := range info {
		e.info[k] = v
	}
	out := e.Outcome()
	e.info["transfer_time_s"] = out.TransferTime
	e.info["retransmissions_total"] = out.Retransmissions
	e.info["rti"] = out.RTI
	e.info["finished"] = 0
	if out.Finished {
		e.info["finished"] = 1
	}
	return obs, r, term, trunc, e.info
}

func makeDeepCC(o *options, n int) ([]env.Env, int, error) {
	names := o.List("traces", deepcc.TrainTraces)
	length := o.Duration("length", 20*time.Second, time.Second, 10*time.Minute)
	if err := o.Done(); err != nil {
		return nil, 0, err
	}
	if len(names) == 0 {
		return nil, 0, fmt.Errorf("options[\"traces\"]: names no trace")
	}
	s := deepcc.Sampler{Traces: deepcc.TracePaths("traces", names), Length: length}
	if err := s.Validate(); err != nil {
		return nil, 0, fmt.Errorf("options[\"traces\"]: %w", err)
	}
	envs, err := makeN(n, func() (env.Env, error) {
		c := s // each environment draws from its own copy; traces are shared
		return deepcc.NewEnv(deepcc.EnvConfig{Sampler: &c, Length: length})
	})
	return envs, 0, err
}

func makeBBR(o *options, n int) ([]env.Env, int, error) {
	base := o.Scenario("scenario", "datacenter")
	action := o.String("action", "discrete")
	cfg := datacenter.Config{
		Base:     base,
		Agents:   1,
		History:  o.Int("history", 1, 1, 16),
		Interval: o.Duration("interval", datacenter.DefaultInterval, time.Millisecond, time.Minute),
		Steps:    o.Int("steps", datacenter.DefaultSteps, 1, 100_000),
		Random:   datacenter.TrainingRandomization(),
	}
	if err := o.Done(); err != nil {
		return nil, 0, err
	}
	kind, err := datacenter.ParseActionKind(action)
	if err != nil {
		return nil, 0, fmt.Errorf("options[\"action\"]: %w", err)
	}
	cfg.Action = kind
	envs, err := makeN(n, func() (env.Env, error) { return datacenter.NewEnv(cfg) })
	return envs, cfg.Steps, err
}

func makeScenario(o *options, n int) ([]env.Env, int, error) {
	cfg := scenarioenv.Config{
		Scenario:     o.Scenario("scenario", ""),
		Flow:         o.String("flow", ""),
		Action:       o.String("action", scenarioenv.ActionWindow),
		Step:         o.Duration("step", 100*time.Millisecond, time.Millisecond, time.Minute),
		EpisodeSteps: o.Int("episode_steps", 200, 1, 1_000_000),
		Features:     o.List("features", nil),
		Reward:       o.String("reward", "utilization-delay"),
		DelayWeight:  o.Float("delay_weight", 0.5, 0, 1e6),
		LossWeight:   o.Float("loss_weight", 1, 0, 1e6),
	}
	cfg.InitialRate = units.Bandwidth(o.Float("initial_rate_mbps", 1, 0.008, 1e6) * float64(units.Mbps))
	if err := o.Done(); err != nil {
		return nil, 0, err
	}
	envs, err := makeN(n, func() (env.Env, error) { return scenarioenv.New(cfg) })
	if err != nil {
		return nil, 0, fmt.Errorf("options: %w", err)
	}
	return envs, cfg.EpisodeSteps, nil
}

// MakeEnvs builds n environments of id in-process, exactly as the service
// does for a Make request with these options.
func MakeEnvs(id string, opts map[string]string, n int) ([]env.Env, error) {
	spec, err := lookup(id)
	if err != nil {
		return nil, err
	}
	envs, _, err := spec.Make(newOptions(opts, spec.Options), n)
	return envs, err
}
