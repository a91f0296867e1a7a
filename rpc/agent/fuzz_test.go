package agent

import (
	"math"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cclab/cclab/cc/bbr"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/papers/marlin"
	"github.com/cclab/cclab/rpc/agent/agentpb"
)

const fuzzMSS = 1448

// FuzzHostApply hands a host arbitrary actions, as a remote agent may send
// them, for both kinds of policy it drives: it never panics, a MARLIN
// flow's window stays within [MSS, the window cap], its pacing rate is
// what was asked when that is in (0, 1e15] bit/s and is otherwise left as
// it was, with the reason in Stats.Err (an infinite pacing_bps once became
// a negative rate, which switched pacing off), and a dc-bbr flow's windows
// stay within BBR's parameter ranges.
func FuzzHostApply(f *testing.F) {
	for _, a := range []*agentpb.Action{
		{CwndBytes: 40 * fuzzMSS},
		{CwndBytes: math.MaxInt64, PacingBps: math.Inf(1)},
		{CwndBytes: math.MinInt64, PacingBps: 1e30},
		{PacingBps: math.NaN()},
		{PacingBps: 1e15},
		{PacingBps: 0.5},
		{Params: map[string]float64{"min_rtt_window": 2.5, "bw_window_rounds": 6}},
		{Params: map[string]float64{"min_rtt_window": math.NaN(), "bw_window_rounds": 1e300, "nope": 1}},
		{Params: map[string]float64{"min_rtt_window": -1, "bw_window_rounds": 6.5}},
	} {
		b, err := proto.Marshal(a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	dc := shipped(f, KindDCBBR)
	f.Fuzz(func(t *testing.T, b []byte) {
		var a agentpb.Action
		if proto.Unmarshal(b, &a) != nil {
			return
		}

		h := &Host{kind: KindMarlin}
		alg, err := h.Controller(fuzzMSS, FlowConfig{})
		if err != nil {
			t.Fatal(err)
		}
		before := alg.PacingRate()
		h.applyTo(0, alg, proto.Clone(&a).(*agentpb.Action))
		if w := alg.CongestionWindow(); w < fuzzMSS || w > marlin.WindowCap {
			t.Fatalf("cwnd_bytes %d: window %d outside [%d, %d]", a.CwndBytes, w, fuzzMSS, marlin.WindowCap)
		}
		switch p, r := a.PacingBps, alg.PacingRate(); {
		case p > 0 && p <= units.MaxBandwidth:
			if r != units.Bandwidth(p) {
				t.Fatalf("pacing_bps %v: rate %v", p, r)
			}
		case r != before:
			t.Fatalf("pacing_bps %v: rate changed from %v to %v", p, before, r)
		case p > units.MaxBandwidth && h.Stats.Err == "":
			t.Fatalf("pacing_bps %v refused without a reason", p)
		}

		h = NewLocalHost(dc)
		if alg, err = h.Controller(fuzzMSS, FlowConfig{LinkRate: 100e6}); err != nil {
			t.Fatal(err)
		}
		a2 := proto.Clone(&a).(*agentpb.Action)
		h.applyTo(0, alg, a2)
		h.view.applied(a2)
		p := h.view.(*dcView).o.Params()
		for name, v := range map[string]float64{"min_rtt_window": p.MinRTTWindow, "bw_window_rounds": float64(p.BwWindowRounds)} {
			if err := checkParam(name, v); err != nil {
				t.Fatalf("params %v: the flow's %v", a.Params, err)
			}
		}
	})
}

func checkParam(name string, v float64) error {
	s, _ := bbr.Spec.Param(name)
	return s.Check(v)
}

// FuzzAct answers arbitrary observations with the shipped MARLIN and dc-bbr
// policies, as the agent's server does for a remote host: it never panics,
// refuses with INVALID_ARGUMENT, and an answer is finite, a MARLIN window
// within [MSS, the window cap] (the cap itself when the policy grows a
// window already at or above it) and dc-bbr parameters BBR accepts.
func FuzzAct(f *testing.F) {
	servedM, servedD := shipped(f, KindMarlin), shipped(f, KindDCBBR)
	for _, s := range []*Served{servedM, servedD} {
		n := s.Policy.Obs.Dim()
		for _, o := range []*agentpb.Observation{
			{Obs: make([]float32, n), CwndBytes: 10 * fuzzMSS},
			{Obs: make([]float32, n), CwndBytes: math.MaxInt64, Stats: map[string]float64{"mss_bytes": 65535}},
			{Obs: make([]float32, n), CwndBytes: 1 << 62},
			{Obs: make([]float32, n), CwndBytes: 0, Stats: map[string]float64{"mss_bytes": math.NaN()}},
			{Obs: append(make([]float32, n-1), float32(math.Inf(1))), CwndBytes: 1},
			{Obs: make([]float32, n+1)},
		} {
			b, err := proto.Marshal(o)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var o agentpb.Observation
		if proto.Unmarshal(b, &o) != nil {
			return
		}
		for _, s := range []*Served{servedM, servedD} {
			a, err := newSession(s).act(&o)
			if err != nil {
				if status.Code(err) != codes.InvalidArgument {
					t.Fatalf("%s: got %v, want InvalidArgument", s.Kind, err)
				}
				continue
			}
			for _, x := range a.Raw {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("%s: raw action %v", s.Kind, a.Raw)
				}
			}
			switch s.Kind {
			case KindMarlin:
				mss := int64(fuzzMSS)
				if m, ok := o.Stats["mss_bytes"]; ok && m >= 1 && m <= 65535 {
					mss = int64(m)
				}
				if a.CwndBytes < min(mss, int64(marlin.WindowCap)) || a.CwndBytes > int64(marlin.WindowCap) {
					t.Fatalf("cwnd %d: window %d outside [%d, %d]", o.CwndBytes, a.CwndBytes, mss, marlin.WindowCap)
				}
				if a.Raw[0] >= 0 && o.CwndBytes >= int64(marlin.WindowCap) && a.CwndBytes != int64(marlin.WindowCap) {
					t.Fatalf("cwnd %d grown by %v: window %d, want the cap %d", o.CwndBytes, a.Raw[0], a.CwndBytes, marlin.WindowCap)
				}
			case KindDCBBR:
				for name, v := range a.Params {
					if err := checkParam(name, v); err != nil {
						t.Fatalf("dc-bbr answered %v", err)
					}
				}
			}
		}
	})
}
