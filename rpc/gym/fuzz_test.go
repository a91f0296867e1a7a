package gym

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cclab/cclab/rpc/gym/gympb"
)

// FuzzRequests feeds arbitrary Make options, seeds and action bytes, and
// whole encoded requests, to a server, by unary calls and over StepStream:
// it must answer each with a well-formed response or a status error, never
// panic, and stay usable.
func FuzzRequests(f *testing.F) {
	f.Add("step", "20ms", []byte{}, pack(0.5, -0.5), false, []byte{})
	f.Add("episode_steps", "1", []byte{1, 2, 3, 4, 5, 6, 7, 8}, pack(1, 1), true, []byte{})
	f.Add("features", "cwnd,cwnd", []byte{}, pack(0), false, []byte{0x0a, 0x02})
	f.Add("action", "param:nope", []byte{}, []byte{1, 2, 3}, true, []byte{0xff, 0xff})
	f.Add("scenario_yaml", "name: x\nflows: []\n", []byte{}, pack(0, 0), false, []byte{0x12, 0x04, 0, 0, 0xc0, 0x7f})
	f.Add("reward", "power", []byte{}, pack(2e9, -3e9), false, []byte{})
	f.Fuzz(func(t *testing.T, key, val string, seeds []byte, actions []byte, auto bool, raw []byte) {
		ctx := context.Background()
		s := NewServer(Config{MaxEnvs: 4, Workers: 2})
		opts := map[string]string{"scenario": "dumbbell", "step": "5ms", "episode_steps": "2"}
		opts[key] = val
		var h uint64
		if mk, err := s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 2, Options: opts}); err == nil {
			h = mk.Handle
		} else if c := status.Code(err); c != codes.InvalidArgument {
			t.Fatalf("Make with %q=%q: %v, want InvalidArgument", key, val, err)
		} else {
			h = mustMake(t, s, "cclab/Scenario-v0", 2, map[string]string{"scenario": "dumbbell", "step": "5ms", "episode_steps": "2"}).Handle
		}
		var sd []int64
		for i := 0; i+8 <= len(seeds); i += 8 {
			sd = append(sd, int64(binary.LittleEndian.Uint64(seeds[i:])))
		}
		_, rerr := s.Reset(ctx, &gympb.ResetRequest{Handle: h, Seeds: sd})
		if rerr != nil && status.Code(rerr) != codes.InvalidArgument {
			t.Fatalf("Reset: %v", rerr)
		}
		for range 3 {
			_, err := s.Step(ctx, &gympb.StepRequest{Handle: h, Actions: actions, Autoreset: auto})
			if c := status.Code(err); err != nil && c != codes.InvalidArgument && c != codes.FailedPrecondition {
				t.Fatalf("Step: %v", err)
			}
		}
		// Whole encoded requests, as a client might garble them.
		var sr gympb.StepRequest
		if proto.Unmarshal(raw, &sr) == nil {
			sr.Handle = h
			if _, err := s.Step(ctx, &sr); err != nil && status.Code(err) == codes.Internal {
				t.Fatalf("Step(%v): %v", &sr, err)
			}
		}
		// The same requests over a stream (raw with the handle appended:
		// a later field wins): each answered by a well-formed batch until
		// one ends the stream with a status.
		enc, _ := proto.Marshal(&gympb.StepRequest{Handle: h, Actions: actions, Autoreset: auto})
		hb, _ := proto.Marshal(&gympb.StepRequest{Handle: h})
		st := &fakeStream{reqs: [][]byte{enc, append(slices.Clip(raw), hb...), enc}, keep: true}
		if err := s.StepStream(st); err != nil {
			c := status.Code(err)
			if c != codes.InvalidArgument && c != codes.FailedPrecondition && c != codes.NotFound && !(c == codes.Internal && strings.Contains(err.Error(), "unmarshal")) {
				t.Fatalf("StepStream: %v", err)
			}
		}
		for _, b := range st.sent {
			nk := len(b.Infos.GetKeys())
			if len(b.Rewards) != 16 || len(b.Terminated) != 2 || len(b.Truncated) != 2 || len(b.Observations)%8 != 0 ||
				len(b.Infos.GetValues()) != 16*nk || (len(b.Infos.GetPresent()) != 0 && len(b.Infos.GetPresent()) != 2*nk) {
				t.Fatalf("malformed batch for 2 environments: %v", b)
			}
		}
		var mr gympb.MakeRequest
		if proto.Unmarshal(raw, &mr) == nil {
			mr.NumEnvs = min(mr.NumEnvs, 2)
			if _, err := s.Make(ctx, &mr); err != nil && status.Code(err) == codes.Internal {
				t.Fatalf("Make(%v): %v", &mr, err)
			}
		}
		// The vector still works.
		if _, err := s.Reset(ctx, &gympb.ResetRequest{Handle: h}); err != nil {
			t.Fatalf("Reset after fuzzed calls: %v", err)
		}
		if _, err := s.Step(ctx, &gympb.StepRequest{Handle: h, Actions: pack(0, 0)}); err != nil {
			t.Fatalf("Step after fuzzed calls: %v", err)
		}
	})
}
