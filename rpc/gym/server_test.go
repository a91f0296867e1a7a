package gym

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/papers/marlin"
	"github.com/cclab/cclab/rpc/gym/gympb"
	"github.com/cclab/cclab/scenarios"
)

// dumbbell is a cheap Scenario-v0 configuration for protocol tests.
var dumbbell = map[string]string{"scenario": "dumbbell", "step": "20ms", "episode_steps": "3"}

func pack(xs ...float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func unpack(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func mustMake(t testing.TB, s *Server, id string, n int, opts map[string]string) *gympb.MakeResponse {
	t.Helper()
	r, err := s.Make(context.Background(), &gympb.MakeRequest{EnvId: id, NumEnvs: int32(n), Options: opts})
	if err != nil {
		t.Fatalf("Make %s: %v", id, err)
	}
	return r
}

// actionAt is a deterministic, varied action sequence.
func actionAt(i, k int) float32 { return float32(math.Sin(float64(3*k+i))) * 0.8 }

// TestServiceMatchesInProcess checks that a vector of MARLIN environments
// (the paper's formulation and the compact one) stepped through the
// service follows, bit for bit, the trajectories of the same environments
// built as `cclab marlin train` builds them, reset with the same seeds and
// stepped in-process; with frame_skip, as `--frame-skip` trains, and with
// the filter windows, as `--capacity-window` and `--min-rtt-window` do,
// and with the action's span, as `--bdp-span` does.
func TestServiceMatchesInProcess(t *testing.T) {
	const n, steps = 3, 40 // 4 s: past the first deliveries over SATCOM, which vary the rewards
	base, err := scenarios.Load("satcom-uhf")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id      string
		variant string
		obsDim  int
		skip    int
		windows [2]time.Duration // capacity, minimum RTT
		span    float64
		rtt     bool
		cap     units.Bytes
		tl      marlin.Timeline // ranges beyond the default training timeline
	}{
		{"cclab/Marlin-v0", marlin.VariantPaper, marlin.ObservationSize, 1, [2]time.Duration{}, 0, false, 0, marlin.Timeline{}},
		{"cclab/MarlinCompact-v0", marlin.VariantCompact, marlin.CompactObservationSize, 1, [2]time.Duration{}, 0, false, 0, marlin.Timeline{}},
		{"cclab/MarlinCompact-v0", marlin.VariantCompact, marlin.CompactObservationSize, 4, [2]time.Duration{}, 0, false, 0, marlin.Timeline{}},
		{"cclab/MarlinCompact-v0", marlin.VariantCompact, marlin.CompactObservationSize, 1, [2]time.Duration{500 * time.Millisecond, time.Second}, 0, false, 0, marlin.Timeline{}},
		{"cclab/MarlinCompact-v0", marlin.VariantCompact, marlin.CompactObservationSize, 1, [2]time.Duration{}, 4, false, 0, marlin.Timeline{}},
		{"cclab/MarlinCompact-v0", marlin.VariantCompact, marlin.CompactHistory * marlin.CompactFeaturesRTT, 1, [2]time.Duration{}, 0, true, 0, marlin.Timeline{}},
		{id: "cclab/MarlinCompact-v0", variant: marlin.VariantCompact, obsDim: marlin.CompactObservationSize, skip: 1, span: 4, cap: 200_000},
		{id: "cclab/MarlinCompact-v0", variant: marlin.VariantCompact, obsDim: marlin.CompactObservationSize, skip: 1, tl: marlin.Timeline{
			SwitchRange: [2]time.Duration{4 * time.Second, 12 * time.Second}, BackgroundScale: [2]float64{0.5, 1.5},
			DelayScale: [2]float64{0.5, 1.5}, RateScale: [2]float64{0.5, 2}, QueueScale: [2]float64{0.5, 2}}},
		{id: "cclab/Marlin-v0", variant: marlin.VariantPaper, obsDim: marlin.ObservationSize, skip: 1, tl: marlin.Timeline{RateScale: [2]float64{0.5, 2}}},
	} {
		s := NewServer(Config{})
		opts := map[string]string{}
		if tc.skip > 1 {
			opts["frame_skip"] = strconv.Itoa(tc.skip)
		}
		if w := tc.windows; w[0] > 0 {
			opts["capacity_window"], opts["min_rtt_window"] = w[0].String(), w[1].String()
		}
		if tc.span > 0 {
			opts["bdp_span"] = strconv.FormatFloat(tc.span, 'g', -1, 64)
		}
		if tc.rtt {
			opts["rtt_feature"] = "true"
		}
		if tc.cap != 0 {
			opts["window_cap"] = tc.cap.String()
		}
		if r := tc.tl.SwitchRange; r[1] > 0 {
			opts["switch_range"] = r[0].String() + "," + r[1].String()
		}
		for name, r := range map[string][2]float64{"background_range": tc.tl.BackgroundScale, "delay_range": tc.tl.DelayScale, "rate_range": tc.tl.RateScale, "queue_range": tc.tl.QueueScale} {
			if r[1] > 0 {
				opts[name] = fmt.Sprintf("%g,%g", r[0], r[1])
			}
		}
		mk := mustMake(t, s, tc.id, n, opts)
		if want := int32(marlin.EpisodeSteps / tc.skip); mk.MaxEpisodeSteps != want {
			t.Errorf("%s frame skip %d: max_episode_steps %d, want %d", tc.id, tc.skip, mk.MaxEpisodeSteps, want)
		}
		rr, err := s.Reset(context.Background(), &gympb.ResetRequest{Handle: mk.Handle, Seeds: []int64{11, 12, 13}})
		if err != nil {
			t.Fatal(err)
		}
		// The training command's configuration, defaults filled in as
		// marlin.Train fills them.
		cfg := marlin.TrainConfig{Base: base, Loss: 0.03, Randomize: true, Variant: tc.variant, Action: marlin.ActionLinear,
			CapacityWindow: tc.windows[0], MinRTTWindow: tc.windows[1], BDPSpan: tc.span, RTTFeature: tc.rtt, WindowCap: tc.cap, Timeline: tc.tl}
		if tc.variant == marlin.VariantCompact {
			cfg.Action = marlin.ActionBDP
		}
		local := make([]env.Env, n)
		dim := obsDim(mk.ObservationSpace)
		if dim != tc.obsDim {
			t.Fatalf("%s: observation of %d values, want %d", tc.id, dim, tc.obsDim)
		}
		for i := range local {
			if local[i], err = marlin.NewFrameSkipTrainingEnv(cfg.EnvConfigFor(), tc.skip); err != nil {
				t.Fatal(err)
			}
			obs, _ := local[i].Reset(uint64(11 + i))
			if got := unpack(rr.Observations)[i*dim : (i+1)*dim]; !equal(got, obs) {
				t.Fatalf("%s env %d: reset observation differs from in-process: %v vs %v (dim %d, %d)", tc.id, i, got[:5], obs[:5], dim, len(obs))
			}
		}
		var rewards []float64
		for k := range steps / tc.skip { // 4 s of simulated time whatever the skip
			act := make([]float32, n)
			for i := range act {
				act[i] = actionAt(i, k)
			}
			sr, err := s.Step(context.Background(), &gympb.StepRequest{Handle: mk.Handle, Actions: pack(act...)})
			if err != nil {
				t.Fatal(err)
			}
			all := unpack(sr.Observations)
			for i := range local {
				obs, r, term, trunc, _ := local[i].Step(act[i : i+1])
				if !equal(all[i*dim:(i+1)*dim], obs) || sr.Rewards[i] != r || sr.Terminated[i] != term || sr.Truncated[i] != trunc {
					t.Fatalf("%s step %d env %d: service (r=%g) differs from in-process (r=%g)", tc.id, k, i, sr.Rewards[i], r)
				}
				rewards = append(rewards, r)
			}
		}
		// Not vacuous: the actions and seeds change the rewards.
		if slices.Min(rewards) == slices.Max(rewards) {
			t.Errorf("%s: every reward was %g", tc.id, rewards[0])
		}
	}
}

// equal compares bit for bit (NaNs included, -0 apart from 0).
func equal(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestSeedSequence checks Gymnasium's seeding: reset(seed) replays an
// episode, and unseeded resets continue a sequence fixed by the last seed.
func TestSeedSequence(t *testing.T) {
	s := NewServer(Config{})
	h := mustMake(t, s, "cclab/Scenario-v0", 2, dumbbell).Handle
	run := func(seeds []int64) [][]float32 {
		var out [][]float32
		if _, err := s.Reset(context.Background(), &gympb.ResetRequest{Handle: h, Seeds: seeds}); err != nil {
			t.Fatal(err)
		}
		for k := range 3 {
			sr, err := s.Step(context.Background(), &gympb.StepRequest{Handle: h, Actions: pack(actionAt(0, k), actionAt(1, k))})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, unpack(sr.Observations))
		}
		return out
	}
	a := run([]int64{4, 5})
	b := run([]int64{4, 5})
	for k := range a {
		if !equal(a[k], b[k]) {
			t.Fatalf("step %d: same seeds, different observations", k)
		}
	}
	// Two unseeded resets after the same seed replay the same sequence.
	run([]int64{9, 9})
	c1 := run(nil)
	run([]int64{9, 9})
	c2 := run(nil)
	if !equal(c1[2], c2[2]) {
		t.Fatal("unseeded resets after the same seed differ")
	}
}

// TestAutoreset checks truncation at the episode limit and NEXT_STEP
// autoreset: the step after the last returns a fresh episode's first
// observation with reward 0.
func TestAutoreset(t *testing.T) {
	s := NewServer(Config{})
	mk := mustMake(t, s, "cclab/Scenario-v0", 1, dumbbell)
	if mk.MaxEpisodeSteps != 3 {
		t.Fatalf("max_episode_steps = %d, want 3", mk.MaxEpisodeSteps)
	}
	h := mk.Handle
	rr, err := s.Reset(context.Background(), &gympb.ResetRequest{Handle: h, Seeds: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	step := func(auto bool) (*gympb.StepResponse, error) {
		return s.Step(context.Background(), &gympb.StepRequest{Handle: h, Actions: pack(0.5), Autoreset: auto})
	}
	for k := range 3 {
		sr, err := step(false)
		if err != nil {
			t.Fatal(err)
		}
		if sr.Truncated[0] != (k == 2) || sr.Terminated[0] {
			t.Fatalf("step %d: terminated %v truncated %v", k, sr.Terminated[0], sr.Truncated[0])
		}
	}
	if _, err := step(false); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("stepping an ended episode: %v, want FailedPrecondition", err)
	}
	sr, err := step(true)
	if err != nil {
		t.Fatal(err)
	}
	if sr.Rewards[0] != 0 || sr.Truncated[0] || !equal(unpack(sr.Observations), unpack(rr.Observations)) {
		t.Fatalf("autoreset step: reward %g truncated %v, want a first observation", sr.Rewards[0], sr.Truncated[0])
	}
}

// TestEveryEnv makes, resets and steps every environment once.
func TestEveryEnv(t *testing.T) {
	s := NewServer(Config{})
	opts := map[string]map[string]string{
		"cclab/Scenario-v0": {"scenario": "dumbbell", "action": "param:beta", "features": "throughput,queue_delay,capacity", "reward": "power"},
	}
	for _, sp := range Specs {
		t.Run(strings.TrimPrefix(sp.ID, "cclab/"), func(t *testing.T) {
			o := opts[sp.ID]
			if sp.ID == "cclab/Scenario-v0" {
				// beta is a CUBIC parameter.
				o["scenario_yaml"] = "name: d\nduration: 30s\nbottleneck: {rate: 10Mbps, delay: 10ms}\nflows:\n  - {name: a, cc: cubic}\n  - {name: b, cc: newreno}\n"
				delete(o, "scenario")
				o["flow"] = "a"
			}
			mk := mustMake(t, s, sp.ID, 2, o)
			if _, err := s.Reset(context.Background(), &gympb.ResetRequest{Handle: mk.Handle, Seeds: []int64{1, 2}}); err != nil {
				t.Fatal(err)
			}
			act := make([]float32, 2*actDim(mk.ActionSpace))
			sr, err := s.Step(context.Background(), &gympb.StepRequest{Handle: mk.Handle, Actions: pack(act...)})
			if err != nil {
				t.Fatal(err)
			}
			if len(sr.Observations) != 2*4*obsDim(mk.ObservationSpace) {
				t.Fatalf("%d observation bytes for 2 envs of %v", len(sr.Observations), mk.ObservationSpace.Shape)
			}
			for _, r := range sr.Rewards {
				if math.IsNaN(r) || math.IsInf(r, 0) {
					t.Fatalf("reward %g", r)
				}
			}
			if _, err := s.Close(context.Background(), &gympb.CloseRequest{Handle: mk.Handle}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func actDim(sp *gympb.Space) int {
	if sp.Kind == gympb.Space_DISCRETE {
		return 1
	}
	return obsDim(sp)
}

func obsDim(sp *gympb.Space) int {
	n := 1
	for _, d := range sp.Shape {
		n *= int(d)
	}
	return n
}

// TestBadRequests checks that malformed requests get a status naming the
// field, and leave the vector usable.
func TestBadRequests(t *testing.T) {
	s := NewServer(Config{MaxEnvs: 4})
	h := mustMake(t, s, "cclab/Scenario-v0", 2, dumbbell).Handle
	ctx := context.Background()
	check := func(name string, err error, code codes.Code, field string) {
		t.Helper()
		if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), field) {
			t.Errorf("%s: got %v, want %v naming %q", name, err, code, field)
		}
	}
	_, err := s.Step(ctx, &gympb.StepRequest{Handle: h, Actions: pack(0, 0)})
	check("step before reset", err, codes.FailedPrecondition, "Reset")
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Nope-v0", NumEnvs: 1})
	check("unknown env", err, codes.InvalidArgument, "env_id")
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 0, Options: dumbbell})
	check("zero envs", err, codes.InvalidArgument, "num_envs")
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 3, Options: dumbbell})
	check("too many envs", err, codes.ResourceExhausted, "num_envs")
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 1, Options: map[string]string{"scenario": "dumbbell", "colour": "red"}})
	check("unknown option", err, codes.InvalidArgument, `options["colour"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 1, Options: map[string]string{"scenario": "dumbbell", "step": "soon"}})
	check("bad duration", err, codes.InvalidArgument, `options["step"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/MarlinCompact-v0", NumEnvs: 1, Options: map[string]string{"action": "linear"}})
	check("compact action", err, codes.InvalidArgument, `options["action"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Marlin-v0", NumEnvs: 1, Options: map[string]string{"action": "bdp"}})
	check("paper action", err, codes.InvalidArgument, `options["action"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/MarlinCompact-v0", NumEnvs: 1, Options: map[string]string{"frame_skip": "3"}})
	check("frame skip not a divisor", err, codes.InvalidArgument, `options["frame_skip"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/MarlinCompact-v0", NumEnvs: 1, Options: map[string]string{"frame_skip": "0"}})
	check("frame skip 0", err, codes.InvalidArgument, `options["frame_skip"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/MarlinCompact-v0", NumEnvs: 1, Options: map[string]string{"capacity_window": "150ms"}})
	check("capacity window not whole steps", err, codes.InvalidArgument, `options["capacity_window"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/MarlinCompact-v0", NumEnvs: 1, Options: map[string]string{"min_rtt_window": "12s"}})
	check("minimum-RTT window too long", err, codes.InvalidArgument, `options["min_rtt_window"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Marlin-v0", NumEnvs: 1, Options: map[string]string{"capacity_window": "1s"}})
	check("paper capacity window", err, codes.InvalidArgument, `options["capacity_window"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/MarlinCompact-v0", NumEnvs: 1, Options: map[string]string{"bdp_span": "0.5"}})
	check("BDP span too narrow", err, codes.InvalidArgument, `options["bdp_span"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/MarlinCompact-v0", NumEnvs: 1, Options: map[string]string{"action": "log2", "bdp_span": "4"}})
	check("BDP span with the log2 action", err, codes.InvalidArgument, `options["bdp_span"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Marlin-v0", NumEnvs: 1, Options: map[string]string{"bdp_span": "4"}})
	check("paper BDP span", err, codes.InvalidArgument, `bdp_span`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/MarlinCompact-v0", NumEnvs: 1, Options: map[string]string{"window_cap": "1KB"}})
	check("window cap too small", err, codes.InvalidArgument, `options["window_cap"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/MarlinCompact-v0", NumEnvs: 1, Options: map[string]string{"window_cap": "wide"}})
	check("window cap not a size", err, codes.InvalidArgument, `options["window_cap"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Marlin-v0", NumEnvs: 1, Options: map[string]string{"window_cap": "200KB"}})
	check("paper window cap", err, codes.InvalidArgument, `window_cap`)
	for _, c := range []struct{ name, v, want string }{
		{"rate_range", "2,0.5", `options["rate_range"]: marlin: link-rate scale range [2 0.5] must be positive, increasing and at most 10`},
		{"queue_range", "0.5", `options["queue_range"]: want LO,HI, got "0.5"`},
		{"delay_range", "0.5,x", `options["delay_range"]: "x" in "0.5,x": not a number`},
		{"switch_range", "9s,4s", `options["switch_range"]: marlin: switch-time range [9s 4s] must be positive and increasing`},
		{"background_range", "-1,1", `options["background_range"]: marlin: background-scale range [-1 1] must be non-negative`},
	} {
		_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/MarlinCompact-v0", NumEnvs: 1, Options: map[string]string{c.name: c.v}})
		check(c.name+" "+c.v, err, codes.InvalidArgument, c.want)
	}
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Marlin-v0", NumEnvs: 1, Options: map[string]string{"randomize": "false", "rate_range": "0.5,2"}})
	check("a range without randomize", err, codes.InvalidArgument, `options["rate_range"]: needs randomize true`)
	// The paper's agent is served live one 100-ms step at a time.
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Marlin-v0", NumEnvs: 1, Options: map[string]string{"frame_skip": "2"}})
	check("paper frame skip", err, codes.InvalidArgument, `options["frame_skip"]`)
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 1, Options: map[string]string{"scenario": "dumbbell", "features": "colour"}})
	check("bad feature", err, codes.InvalidArgument, "feature")
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 1, Options: map[string]string{"scenario_yaml": "flows: [1"}})
	check("bad yaml", err, codes.InvalidArgument, "scenario_yaml")
	_, err = s.Reset(ctx, &gympb.ResetRequest{Handle: h, Seeds: []int64{1}})
	check("seed count", err, codes.InvalidArgument, "seeds")
	_, err = s.Reset(ctx, &gympb.ResetRequest{Handle: h, Options: map[string]string{"x": "1"}})
	check("reset options", err, codes.InvalidArgument, "options")
	_, err = s.Reset(ctx, &gympb.ResetRequest{Handle: 99})
	check("unknown handle", err, codes.NotFound, "handle")
	if _, err := s.Reset(ctx, &gympb.ResetRequest{Handle: h}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Step(ctx, &gympb.StepRequest{Handle: h, Actions: pack(0)})
	check("short actions", err, codes.InvalidArgument, "actions")
	_, err = s.Step(ctx, &gympb.StepRequest{Handle: h, Actions: pack(0, float32(math.NaN()))})
	check("NaN action", err, codes.InvalidArgument, "environment 1")
	if _, err := s.Step(ctx, &gympb.StepRequest{Handle: h, Actions: pack(0, 0)}); err != nil {
		t.Fatalf("vector unusable after bad requests: %v", err)
	}
}

// TestServeHealthAndShutdown serves on loopback, checks health, and stops
// cleanly when the context ends.
func TestServeHealthAndShutdown(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, lis, Config{}, time.Second) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	hr, err := healthpb.NewHealthClient(conn).Check(cctx, &healthpb.HealthCheckRequest{Service: ServiceName})
	if err != nil || hr.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v %v", hr, err)
	}
	le, err := gympb.NewGymClient(conn).ListEnvs(cctx, &gympb.ListEnvsRequest{})
	if err != nil || len(le.Envs) != len(Specs) {
		t.Fatalf("ListEnvs: %v %v", le, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop")
	}
}
