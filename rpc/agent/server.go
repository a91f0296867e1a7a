// Package agent is the host-agent RPC (agentpb/agent.proto): an agent
// process serves a trained policy over gRPC, and a host running a live
// flow over transport/udp streams an observation per control step and
// applies the actions it gets back. A host whose agent does not answer
// within a step keeps the last action and counts a miss; a host whose
// agent disconnects keeps the flow running on its last action.
package agent

import (
	"context"
	"errors"
	"fmt"
	"github.com/cclab/cclab/rpc"
	"io"
	"math"
	"net"
	"path"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/space"
	"github.com/cclab/cclab/papers/datacenter"
	"github.com/cclab/cclab/papers/deepcc"
	"github.com/cclab/cclab/papers/marlin"
	"github.com/cclab/cclab/rpc/agent/agentpb"
	"github.com/cclab/cclab/transport/udp"
)

// Policy kinds: how a host builds observations and applies actions.
const (
	// KindMarlin: the MARLIN observation (marlin.LiveObserver) and window
	// scaling (marlin.WindowFor) every marlin.StepInterval.
	KindMarlin = "marlin"
	// KindDCBBR: the data-centre BBR tuner's observation
	// (datacenter.LiveObserver) every policy interval (T2); the agent
	// answers with BBR's two windows in Action.params.
	KindDCBBR = "dc-bbr"
	// KindGeneric: the agent only runs the policy; the host applies the
	// raw action.
	KindGeneric = "generic"
)

// Served is a policy with what a host needs to use it.
type Served struct {
	Kind   string
	Policy *policy.Policy
	Step   time.Duration
	// dc holds a dc-bbr policy's settings.
	dc datacenter.Config
	// marlinAction is a MARLIN policy's action parametrisation
	// (marlin.PolicyAction), which the window scaling must follow.
	marlinAction string
}

// LoadPolicy reads a policy: "marlin" is the shipped MARLIN policy,
// "dc-bbr" the shipped data-centre policy, the repository paths of the
// shipped DeepCC and data-centre policies
// (papers/deepcc/policy/deepcc.policy, papers/datacenter/policy/*.policy)
// load their built-in copies, any other value is a policy file. kind ""
// guesses from the policy's training environment (marlin-* policies are
// KindMarlin, dcrl-* KindDCBBR, others KindGeneric).
func LoadPolicy(spec, kind string) (*Served, error) {
	var p *policy.Policy
	var err error
	switch {
	case spec == "marlin":
		p, err = marlin.ShippedPolicy()
	case spec == KindDCBBR:
		p, err = datacenter.LoadPolicy(datacenter.ShippedPolicyPath)
	case strings.HasPrefix(path.Clean(spec), "papers/deepcc/"):
		// The shipped DeepCC and data-centre policies load from the
		// binary when the repository is not at hand.
		p, err = deepcc.LoadPolicy(spec)
	case strings.HasPrefix(path.Clean(spec), "papers/datacenter/"):
		p, err = datacenter.LoadPolicy(spec)
	default:
		p, err = policy.Load(spec)
	}
	if err != nil {
		return nil, err
	}
	if kind == "" {
		kind = KindGeneric
		switch {
		case spec == "marlin" || strings.HasPrefix(p.Meta.Env, "marlin"):
			kind = KindMarlin
		case strings.HasPrefix(p.Meta.Env, "dcrl"):
			kind = KindDCBBR
		}
	}
	s := &Served{Kind: kind, Policy: p, Step: 100 * time.Millisecond}
	switch kind {
	case KindMarlin:
		if v := marlin.PolicyVariant(p); v != marlin.VariantPaper {
			return nil, fmt.Errorf("%s: a MARLIN %s-variant policy: only the paper's variant has a live observer to serve", spec, v)
		}
		if err := marlin.CheckPolicy(p); err != nil {
			return nil, fmt.Errorf("%s: not a MARLIN policy: %w", spec, err)
		}
		s.Step, s.marlinAction = marlin.StepInterval, marlin.PolicyAction(p)
	case KindDCBBR:
		if s.dc, err = datacenter.LiveSettings(p); err != nil {
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
		s.Step = s.dc.Interval
	case KindGeneric:
	default:
		return nil, fmt.Errorf("policy kind %q: accepted kinds are %s, %s, %s", kind, KindMarlin, KindDCBBR, KindGeneric)
	}
	return s, nil
}

// Server serves one policy; each Control session gets its own copy.
type Server struct {
	agentpb.UnimplementedAgentServer
	s *Served
}

// NewServer returns the service for s.
func NewServer(s *Served) *Server { return &Server{s: s} }

func pbSpace(s space.Space) *agentpb.Space {
	out := &agentpb.Space{Low: s.Low, High: s.High, N: int32(s.N)}
	for _, d := range s.Shape {
		out.Shape = append(out.Shape, int32(d))
	}
	return out
}

// Describe implements agentpb.AgentServer.
func (srv *Server) Describe(context.Context, *agentpb.DescribeRequest) (*agentpb.DescribeResponse, error) {
	p := srv.s.Policy
	var settings map[string]string
	if srv.s.Kind == KindDCBBR {
		settings = p.Meta.Extra
	}
	return &agentpb.DescribeResponse{
		Settings:    settings,
		Kind:        srv.s.Kind,
		Observation: pbSpace(p.Obs),
		Action:      pbSpace(p.Act),
		StepUs:      srv.s.Step.Microseconds(),
		Policy:      fmt.Sprintf("%s on %s, %d steps", p.Meta.Algo, p.Meta.Env, p.Meta.Steps),
	}, nil
}

// Control implements agentpb.AgentServer.
func (srv *Server) Control(stream agentpb.Agent_ControlServer) error {
	sess := newSession(srv.s)
	for {
		obs, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		a, err := sess.act(obs)
		if err != nil {
			return err
		}
		if err := stream.Send(a); err != nil {
			return err
		}
	}
}

// session runs one flow's policy copy.
type session struct {
	s *Served
	p *policy.Policy
}

func newSession(s *Served) *session { return &session{s: s, p: s.Policy.Clone()} }

// act checks an observation against the policy's space and answers it.
func (ss *session) act(obs *agentpb.Observation) (*agentpb.Action, error) {
	want := ss.p.Obs.Dim()
	if len(obs.Obs) != want {
		return nil, status.Errorf(codes.InvalidArgument,
			"observation has %d values, the policy's observation space %v has %d", len(obs.Obs), ss.p.Obs, want)
	}
	for i, x := range obs.Obs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, status.Errorf(codes.InvalidArgument, "observation[%d] is %v: values must be finite", i, x)
		}
	}
	raw := ss.p.ActInto(obs.Obs)
	a := &agentpb.Action{Step: obs.Step, Raw: append([]float32(nil), raw...)}
	switch ss.s.Kind {
	case KindMarlin:
		if obs.CwndBytes <= 0 {
			return nil, status.Errorf(codes.InvalidArgument, "cwnd_bytes is %d: a window-scaling policy needs the current window", obs.CwndBytes)
		}
		mss := units.Bytes(udp.DefaultMSS)
		if m, ok := obs.Stats["mss_bytes"]; ok && m >= 1 && m <= 65535 {
			mss = units.Bytes(m)
		}
		a.CwndBytes = int64(marlin.WindowFor(ss.s.marlinAction, raw[0], units.Bytes(obs.CwndBytes), mss))
	case KindDCBBR:
		a.Params = ss.s.dc.Action.Decode(raw).ParamMap()
	}
	return a, nil
}

// Serve serves s on lis until ctx is done.
func Serve(ctx context.Context, lis net.Listener, s *Served) error {
	g := grpc.NewServer()
	agentpb.RegisterAgentServer(g, NewServer(s))
	return rpc.Serve(ctx, g, lis)
}
