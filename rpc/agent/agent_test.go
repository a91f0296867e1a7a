package agent

import (
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/papers/marlin"
	"github.com/cclab/cclab/rpc"
	"github.com/cclab/cclab/rpc/agent/agentpb"
	"github.com/cclab/cclab/transport/tcp"
	"github.com/cclab/cclab/transport/udp"
	"github.com/cclab/cclab/transport/udp/udptest"
)

// serve starts srv on a Unix socket in a temporary directory.
func serve(t *testing.T, srv agentpb.AgentServer) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.sock")
	lis, err := rpc.Listen("unix:"+path, false)
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	agentpb.RegisterAgentServer(g, srv)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return "unix:" + path
}

// shipped loads the shipped policy of kind (KindDCBBR, else MARLIN's).
func shipped(tb testing.TB, kind string) *Served {
	tb.Helper()
	spec := "marlin"
	if kind == KindDCBBR {
		spec = KindDCBBR
	}
	s, err := LoadPolicy(spec, kind)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestShapeRefused: observations that do not fit the policy's space end
// the session with INVALID_ARGUMENT naming the sizes.
func TestShapeRefused(t *testing.T) {
	addr := serve(t, NewServer(shipped(t, KindMarlin)))
	conn, err := grpc.NewClient("unix://"+strings.TrimPrefix(addr, "unix:"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := agentpb.NewAgentClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := c.Describe(ctx, &agentpb.DescribeRequest{})
	if err != nil || d.Kind != KindMarlin || d.StepUs != 100_000 {
		t.Fatalf("describe: %v %v", d, err)
	}
	for _, obs := range []*agentpb.Observation{
		{Obs: make([]float32, 5), CwndBytes: 14480},
		{Obs: make([]float32, marlin.ObservationSize+1), CwndBytes: 14480},
		{Obs: make([]float32, marlin.ObservationSize)}, // no window to scale
	} {
		st, err := c.Control(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Send(obs); err != nil {
			t.Fatal(err)
		}
		_, err = st.Recv()
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%d values: got %v, want InvalidArgument", len(obs.Obs), err)
		} else {
			t.Log(err)
		}
	}
	// A well-formed observation gets a window.
	st, _ := c.Control(ctx)
	_ = st.Send(&agentpb.Observation{Step: 0, Obs: make([]float32, marlin.ObservationSize), CwndBytes: 14480})
	a, err := st.Recv()
	if err != nil || a.CwndBytes < 1448 || a.CwndBytes > int64(marlin.WindowCap) || len(a.Raw) != 1 {
		t.Fatalf("action %v, %v", a, err)
	}
}

// TestServedWindowFollowsPolicyAction: the served window is scaled the
// way the policy was trained, 1+a for the shipped (linear) policy and
// 2^a for a log2 one, and a policy of an unknown parametrisation is
// refused when loaded, naming it.
func TestServedWindowFollowsPolicyAction(t *testing.T) {
	base, err := marlin.ShippedPolicy()
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{marlin.ActionLinear, marlin.ActionLog2, "cubic-root"} {
		p := base.Clone()
		p.Meta.Extra = maps.Clone(p.Meta.Extra)
		p.Meta.Extra["action"] = action
		path := filepath.Join(t.TempDir(), action+".policy")
		if err := p.Save(path); err != nil {
			t.Fatal(err)
		}
		s, err := LoadPolicy(path, "")
		if action == "cubic-root" {
			if err == nil || !strings.Contains(err.Error(), "cubic-root") {
				t.Errorf("unknown action: got %v, want an error naming it", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		addr := serve(t, NewServer(s))
		conn, err := grpc.NewClient("unix://"+strings.TrimPrefix(addr, "unix:"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st, err := agentpb.NewAgentClient(conn).Control(ctx)
		if err != nil {
			t.Fatal(err)
		}
		obs := make([]float32, marlin.ObservationSize)
		for i := range obs {
			obs[i] = float32(i%7) * 0.3
		}
		const cwnd = 14480
		if err := st.Send(&agentpb.Observation{Obs: obs, CwndBytes: cwnd}); err != nil {
			t.Fatal(err)
		}
		a, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		want := marlin.WindowFor(action, a.Raw[0], cwnd, udp.DefaultMSS)
		other := marlin.WindowFor(marlin.ActionLinear, a.Raw[0], cwnd, udp.DefaultMSS)
		if action == marlin.ActionLinear {
			other = marlin.WindowFor(marlin.ActionLog2, a.Raw[0], cwnd, udp.DefaultMSS)
		}
		if a.CwndBytes != int64(want) {
			t.Errorf("%s: served window %d for action %g, want %d", action, a.CwndBytes, a.Raw[0], want)
		}
		if want == other {
			t.Errorf("%s: action %g scales alike in both parametrisations; the test cannot tell them apart", action, a.Raw[0])
		}
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	if _, err := rpc.Listen("0.0.0.0:0", false); err == nil {
		t.Fatal("a wildcard address was accepted without --allow-remote")
	}
	if _, err := rpc.Listen("nonsense", false); err == nil {
		t.Fatal("a bad address was accepted")
	}
	l, err := rpc.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}

// flaky is an agent that answers late from step lateFrom on, and drops
// the session after dropAfter answers.
type flaky struct {
	agentpb.UnimplementedAgentServer
	step                time.Duration
	lateFrom, dropAfter int
}

func (f *flaky) Describe(context.Context, *agentpb.DescribeRequest) (*agentpb.DescribeResponse, error) {
	return &agentpb.DescribeResponse{Kind: KindMarlin, StepUs: f.step.Microseconds()}, nil
}

func (f *flaky) Control(st agentpb.Agent_ControlServer) error {
	for n := 0; ; n++ {
		obs, err := st.Recv()
		if err != nil {
			return nil
		}
		if n >= f.dropAfter {
			return status.Error(codes.Unavailable, "agent going away")
		}
		if n >= f.lateFrom {
			time.Sleep(3 * f.step)
		}
		// Always grow the window: 40 segments.
		if err := st.Send(&agentpb.Action{Step: obs.Step, CwndBytes: 40 * 1448}); err != nil {
			return nil
		}
	}
}

func runWithHost(t *testing.T, h *Host, bytes int64) (*live.Result, error) {
	t.Helper()
	l, err := udp.Listen("127.0.0.1:0", udp.ListenConfig{Linger: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	relay, err := udptest.New(l.Addr().String(), udptest.Path{Delay: 5 * time.Millisecond, Rate: 20e6}, udptest.Path{Delay: 5 * time.Millisecond}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { _, _ = l.Accept(ctx) }()
	alg, err := h.Controller(1448, FlowConfig{})
	if err != nil {
		t.Fatal(err)
	}
	o := live.SendOptions{Addr: relay.Addr(), Alg: alg, CCLabel: "agent", Bytes: 0, Duration: 0,
		TCP: tcp.Config{AckInterval: MarlinAckInterval}, Attach: h.Attach}
	o.Bytes = unitsBytes(bytes)
	res, err := live.Send(ctx, o)
	h.Close()
	return res, err
}

// TestMissesKeepLastAction: an agent that answers too late has its steps
// counted as misses and its late actions discarded; the flow completes on
// the last applied window.
func TestMissesKeepLastAction(t *testing.T) {
	addr := serve(t, &flaky{step: 20 * time.Millisecond, lateFrom: 3, dropAfter: 1 << 30})
	h, err := DialHost(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runWithHost(t, h, 2_000_000)
	if err != nil || !res.Complete {
		t.Fatalf("flow: %v %+v", err, res)
	}
	// Answers after the third come 3 steps late: misses, and late actions
	// discarded.
	if h.Stats.Applied == 0 || h.Stats.Misses == 0 || h.Stats.Late == 0 {
		t.Errorf("stats %+v: want applied actions, then misses and late ones", h.Stats)
	}
	t.Logf("%+v", h.Stats)
}

// TestDisconnectKeepsFlow: the agent drops the session; the flow goes on
// with the last window and completes.
func TestDisconnectKeepsFlow(t *testing.T) {
	addr := serve(t, &flaky{step: 20 * time.Millisecond, lateFrom: 1 << 30, dropAfter: 3})
	h, err := DialHost(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runWithHost(t, h, 2_000_000)
	if err != nil || !res.Complete {
		t.Fatalf("flow: %v %+v", err, res)
	}
	// The agent answered 3 steps; on a loaded machine one may arrive after
	// its step and be discarded as late.
	if !h.Stats.Disconnected || h.Stats.Applied+h.Stats.Late != 3 || h.Stats.Applied == 0 {
		t.Errorf("stats %+v: want disconnected after 3 answers, applied or late", h.Stats)
	}
	t.Logf("%+v", h.Stats)
}

// TestShippedPolicyRemote: the shipped MARLIN policy served over gRPC
// drives a live flow to completion.
func TestShippedPolicyRemote(t *testing.T) {
	addr := serve(t, NewServer(shipped(t, "")))
	h, err := DialHost(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runWithHost(t, h, 600_000)
	if err != nil || !res.Complete || res.Flow.BytesDelivered != 600_000 {
		t.Fatalf("flow: %v %+v", err, res)
	}
	if h.Stats.Applied == 0 || h.Stats.Disconnected {
		t.Errorf("stats %+v", h.Stats)
	}
	t.Logf("%+v fct %v", h.Stats, *res.Flow.FCT)
}

func unitsBytes(n int64) units.Bytes { return units.Bytes(n) }

// TestGenericPolicies: the shipped DeepCC policy, and the data-centre
// policy when asked, are served as generic policies: the right shape gets
// an action of the policy's action size, a wrong one INVALID_ARGUMENT.
func TestGenericPolicies(t *testing.T) {
	for _, spec := range []string{"papers/deepcc/policy/deepcc.policy", "papers/datacenter/policy/ppo.policy"} {
		kind := ""
		if strings.Contains(spec, "datacenter") {
			kind = KindGeneric
		}
		s, err := LoadPolicy(spec, kind)
		if err != nil {
			t.Fatal(err)
		}
		if s.Kind != KindGeneric {
			t.Errorf("%s: kind %s", spec, s.Kind)
		}
		ss := newSession(s)
		a, err := ss.act(&agentpb.Observation{Obs: make([]float32, s.Policy.Obs.Dim())})
		if err != nil || len(a.Raw) != s.Policy.Act.Dim() {
			t.Errorf("%s: action %v, %v", spec, a, err)
		}
		if _, err := ss.act(&agentpb.Observation{Obs: make([]float32, s.Policy.Obs.Dim()+1)}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: wrong shape: %v", spec, err)
		}
	}
}

// TestDCBBRRemote: the shipped data-centre policy served over gRPC (kind
// dc-bbr, guessed from its training environment) tunes a live BBR flow:
// the host builds the 25-feature observation, the agent answers with
// BBR's two windows, the host sets them, and the transfer completes with
// every byte delivered.
func TestDCBBRRemote(t *testing.T) {
	s, err := LoadPolicy("dc-bbr", "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != KindDCBBR || s.Step != 100*time.Millisecond {
		t.Fatalf("dc-bbr policy: kind %s step %v", s.Kind, s.Step)
	}
	addr := serve(t, NewServer(s))
	h, err := DialHost(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	if h.Kind() != KindDCBBR || h.dc.History != 1 {
		t.Fatalf("host: kind %s history %d", h.Kind(), h.dc.History)
	}
	if _, err := h.Controller(1448, FlowConfig{}); err == nil {
		t.Fatal("a dc-bbr host without the link's rate was accepted")
	}
	l, err := udp.Listen("127.0.0.1:0", udp.ListenConfig{Linger: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	relay, err := udptest.New(l.Addr().String(), udptest.Path{Delay: time.Millisecond, Rate: 20e6, Loss: 0.005}, udptest.Path{Delay: time.Millisecond}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recv := make(chan udp.ReceiverResult, 1)
	go func() { r, _ := l.Accept(ctx); recv <- r }()
	alg, err := h.Controller(1448, FlowConfig{LinkRate: 20 * units.Mbps})
	if err != nil {
		t.Fatal(err)
	}
	res, err := live.Send(ctx, live.SendOptions{Addr: relay.Addr(), Alg: alg, CCLabel: "dc-bbr", Bytes: 2_000_000, Attach: h.Attach})
	h.Close()
	if err != nil || !res.Complete {
		t.Fatalf("flow: %v %+v", err, res)
	}
	if r := <-recv; r.Delivered != 2_000_000 || r.Corrupt != 0 {
		t.Fatalf("receiver: delivered %d, corrupt %d", r.Delivered, r.Corrupt)
	}
	sum := h.Summary()
	if h.Stats.Applied == 0 || h.Stats.Disconnected || sum["dc_intervals"] == 0 {
		t.Fatalf("stats %+v, summary %v", h.Stats, sum)
	}
	if sum["dc_changes"] == 0 {
		t.Errorf("no action changed the windows in %d actions: %v", h.Stats.Applied, sum)
	}
	t.Logf("%+v %v", h.Stats, sum)
}

// TestCompactVariantRefused checks that a MARLIN compact-variant policy is
// refused with a message naming the variant: only the paper's variant has
// a live observer that builds its observation.
func TestCompactVariantRefused(t *testing.T) {
	p, err := marlin.ShippedCompactPolicy()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "compact.policy")
	if err := p.Save(path); err != nil {
		t.Fatal(err)
	}
	_, err = LoadPolicy(path, "")
	if err == nil || !strings.Contains(err.Error(), "compact") {
		t.Fatalf("compact policy: %v, want an error naming the variant", err)
	}
}

// describeOnly answers Describe with a step of its own.
type describeOnly struct {
	agentpb.UnimplementedAgentServer
	stepUs int64
}

func (d *describeOnly) Describe(context.Context, *agentpb.DescribeRequest) (*agentpb.DescribeResponse, error) {
	return &agentpb.DescribeResponse{Kind: KindMarlin, StepUs: d.stepUs}, nil
}

// TestStepOutOfRangeRefused: a host refuses an agent whose step interval
// is outside [1 ms, 1 min], naming step_us, including one so large that
// converting it to nanoseconds would wrap round to 100 ms.
func TestStepOutOfRangeRefused(t *testing.T) {
	wraps := int64(18446744073709552 + 100_000) // x 1000 = 2^64 + 100,000,384 ns
	for _, c := range []struct {
		us int64
		ok bool
	}{{100_000, true}, {1000, true}, {60_000_000, true}, {999, false}, {60_000_001, false}, {0, false}, {-1, false}, {wraps, false}} {
		h, err := DialHost(context.Background(), serve(t, &describeOnly{stepUs: c.us}))
		if (err == nil) != c.ok {
			t.Errorf("step_us %d: %v, want accepted %v", c.us, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "step_us") {
			t.Errorf("step_us %d: %v does not name step_us", c.us, err)
		}
		if err == nil {
			if h.Step() != time.Duration(c.us)*time.Microsecond {
				t.Errorf("step_us %d: step %v", c.us, h.Step())
			}
			h.Close()
		}
	}
}
