package gym

import (
	"context"
	"encoding/binary"
	"io"
	"math"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/rpc/gym/gympb"
)

// serveUnix serves a fresh server on a Unix-domain socket and returns a
// client of it.
func serveUnix(t testing.TB) gympb.GymClient {
	t.Helper()
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "gym.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Serve(ctx, lis, Config{}, time.Second); close(done) }()
	conn, err := grpc.NewClient("unix:"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		<-done
	})
	return gympb.NewGymClient(conn)
}

// batchInfos decodes a StepBatch's info table into one map per environment.
func batchInfos(t *gympb.InfoTable, n int) []map[string]float64 {
	out := make([]map[string]float64, n)
	nk := len(t.GetKeys())
	for i := range out {
		out[i] = map[string]float64{}
		for j, k := range t.GetKeys() {
			if len(t.GetPresent()) == 0 || t.GetPresent()[i*nk+j] == 1 {
				out[i][k] = math.Float64frombits(binary.LittleEndian.Uint64(t.GetValues()[8*(i*nk+j):]))
			}
		}
	}
	return out
}

// twins makes two vectors of 3 environments alike and resets them alike
// (seeds 5, 6, 7), for comparing two ways of stepping.
func twins(ctx context.Context, t *testing.T, c gympb.GymClient, id string, opts map[string]string) ([2]uint64, *gympb.MakeResponse) {
	t.Helper()
	var h [2]uint64
	var mk *gympb.MakeResponse
	for j := range h {
		var err error
		if mk, err = c.Make(ctx, &gympb.MakeRequest{EnvId: id, NumEnvs: 3, Options: opts}); err != nil {
			t.Fatal(err)
		}
		h[j] = mk.Handle
		if _, err := c.Reset(ctx, &gympb.ResetRequest{Handle: h[j], Seeds: []int64{5, 6, 7}}); err != nil {
			t.Fatal(err)
		}
	}
	return h, mk
}

// pathCases are the environments the step paths (unary Step, StepStream,
// the shared-memory lane) are compared on: both MARLIN variants in training
// and evaluation mode (the compact one with frame skip too), and a scenario with 3-step episodes, so that ends
// and autoresets are crossed.
var pathCases = []struct {
	id    string
	opts  map[string]string
	steps int
}{
	{"cclab/Marlin-v0", nil, 12},
	{"cclab/Scenario-v0", dumbbell, 10},
	{"cclab/Marlin-v0", map[string]string{"eval_loss": "0.05", "eval_bytes": "20000", "max_time": "2s"}, 24},
	{"cclab/MarlinCompact-v0", nil, 12},
	{"cclab/MarlinCompact-v0", map[string]string{"eval_loss": "0.05", "eval_bytes": "20000", "max_time": "2s"}, 24},
	// 23 steps of 100 ms in actions of 4: the limit cuts the sixth short.
	{"cclab/MarlinCompact-v0", map[string]string{"eval_loss": "0.05", "eval_bytes": "20000", "max_time": "2.3s", "frame_skip": "4"}, 14},
}

// TestStepStreamMatchesStep steps two vectors made and reset alike, one
// with unary Step and one over StepStream, and checks that every step's
// observations, rewards, flags and infos agree bit for bit, across episode
// ends and autoresets.
func TestStepStreamMatchesStep(t *testing.T) {
	c := serveUnix(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range pathCases {
		const n = 3
		h, mk := twins(ctx, t, c, tc.id, tc.opts)
		st, err := c.StepStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ad := actDim(mk.ActionSpace)
		ends := 0
		for k := range tc.steps {
			act := make([]float32, n*ad)
			for i := range act {
				act[i] = actionAt(i/ad, k)
			}
			want, err := c.Step(ctx, &gympb.StepRequest{Handle: h[0], Actions: pack(act...), Autoreset: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Send(&gympb.StepRequest{Handle: h[1], Actions: pack(act...), Autoreset: true}); err != nil {
				t.Fatal(err)
			}
			got, err := st.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if !equal(unpack(got.Observations), unpack(want.Observations)) {
				t.Fatalf("%s step %d: stream observations differ from Step's", tc.id, k)
			}
			infos := batchInfos(got.Infos, n)
			for i := range n {
				r := math.Float64frombits(binary.LittleEndian.Uint64(got.Rewards[8*i:]))
				if math.Float64bits(r) != math.Float64bits(want.Rewards[i]) || (got.Terminated[i] == 1) != want.Terminated[i] || (got.Truncated[i] == 1) != want.Truncated[i] {
					t.Fatalf("%s step %d env %d: stream (%g, %d, %d) vs Step (%g, %v, %v)", tc.id, k, i, r, got.Terminated[i], got.Truncated[i], want.Rewards[i], want.Terminated[i], want.Truncated[i])
				}
				if len(infos[i]) != len(want.Infos[i].Values) {
					t.Fatalf("%s step %d env %d: stream info %v, Step info %v", tc.id, k, i, infos[i], want.Infos[i].Values)
				}
				for key, x := range want.Infos[i].Values {
					if y, ok := infos[i][key]; !ok || math.Float64bits(x) != math.Float64bits(y) {
						t.Fatalf("%s step %d env %d: info[%q] stream %v, Step %g", tc.id, k, i, key, infos[i], x)
					}
				}
				if want.Terminated[i] || want.Truncated[i] {
					ends++
				}
			}
		}
		if tc.id == "cclab/Scenario-v0" && ends == 0 {
			t.Fatalf("%s: no episode ended in %d steps; the autoreset path went untested", tc.id, tc.steps)
		}
		st.CloseSend()
		if _, err := st.Recv(); err != io.EOF {
			t.Fatalf("after CloseSend: %v, want io.EOF", err)
		}
	}
}

// TestStepStreamErrors checks that a request Step refuses ends the stream
// with Step's status naming the field, and that the vector then works on a
// new stream.
func TestStepStreamErrors(t *testing.T) {
	c := serveUnix(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mk, err := c.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 2, Options: dumbbell})
	if err != nil {
		t.Fatal(err)
	}
	send := func(req *gympb.StepRequest) error {
		st, err := c.StepStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer st.CloseSend()
		if err := st.Send(req); err != nil {
			t.Fatal(err)
		}
		_, err = st.Recv()
		return err
	}
	for _, tc := range []struct {
		name  string
		req   *gympb.StepRequest
		code  codes.Code
		field string
	}{
		{"before reset", &gympb.StepRequest{Handle: mk.Handle, Actions: pack(0, 0)}, codes.FailedPrecondition, "Reset"},
		{"unknown handle", &gympb.StepRequest{Handle: 99, Actions: pack(0, 0)}, codes.NotFound, "handle"},
	} {
		if err := send(tc.req); status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.field) {
			t.Errorf("%s: %v, want %v naming %q", tc.name, err, tc.code, tc.field)
		}
	}
	if _, err := c.Reset(ctx, &gympb.ResetRequest{Handle: mk.Handle}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, field string
		actions     []byte
	}{
		{"short", "actions", pack(0)},
		{"NaN", "environment 1", pack(0, float32(math.NaN()))},
		{"odd bytes", "actions", []byte{1, 2, 3}},
	} {
		err := send(&gympb.StepRequest{Handle: mk.Handle, Actions: tc.actions})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tc.field) {
			t.Errorf("%s actions: %v, want InvalidArgument naming %q", tc.name, err, tc.field)
		}
	}
	if err := send(&gympb.StepRequest{Handle: mk.Handle, Actions: pack(0, 0)}); err != nil {
		t.Fatalf("vector unusable on a new stream after bad requests: %v", err)
	}
}

// fakeStream is a StepStream server stream fed from a slice, for calling
// Server.StepStream without a network (fuzzing, allocation counts).
type fakeStream struct {
	grpc.ServerStream
	reqs [][]byte // encoded requests, as gRPC would receive them
	sent []*gympb.StepBatch
	keep bool
}

func (f *fakeStream) Context() context.Context { return context.Background() }

func (f *fakeStream) RecvMsg(m any) error {
	if len(f.reqs) == 0 {
		return io.EOF
	}
	b := f.reqs[0]
	f.reqs = f.reqs[1:]
	if err := proto.Unmarshal(b, m.(proto.Message)); err != nil {
		return status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err)
	}
	return nil
}

func (f *fakeStream) Recv() (*gympb.StepRequest, error) {
	var r gympb.StepRequest
	return &r, f.RecvMsg(&r)
}

func (f *fakeStream) Send(b *gympb.StepBatch) error {
	if f.keep {
		f.sent = append(f.sent, proto.Clone(b).(*gympb.StepBatch))
	}
	return nil
}

// TestStepStreamAllocations checks that a step over a stream allocates
// little beyond what the environments' own steps do, since the stream
// reuses its buffers (gRPC's transport is not part of this count).
func TestStepStreamAllocations(t *testing.T) {
	const n, steps = 8, 50
	s := NewServer(Config{Workers: 1})
	mk := mustMake(t, s, "cclab/Marlin-v0", n, nil)
	if _, err := s.Reset(context.Background(), &gympb.ResetRequest{Handle: mk.Handle, Seeds: make([]int64, n)}); err != nil {
		t.Fatal(err)
	}
	req, _ := proto.Marshal(&gympb.StepRequest{Handle: mk.Handle, Actions: pack(make([]float32, n)...), Autoreset: true})
	reqs := make([][]byte, steps)
	for i := range reqs {
		reqs[i] = req
	}
	stream := &fakeStream{}
	perStep := testing.AllocsPerRun(3, func() {
		stream.reqs = reqs
		if err := s.StepStream(stream); err != nil {
			t.Fatal(err)
		}
	}) / steps
	// The same environments stepped directly.
	envs, err := MakeEnvs("cclab/Marlin-v0", nil, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range envs {
		e.Reset(0)
	}
	act := []float32{0}
	own := testing.AllocsPerRun(3, func() {
		for range steps {
			for _, e := range envs {
				e.Step(act)
			}
		}
	}) / steps
	// The service's share: the request's action bytes and little else,
	// whatever the vector's size.
	const extra = 3
	if perStep > own+extra {
		t.Fatalf("%.1f allocations per stream step of %d MARLIN environments, their own steps %.1f: want at most %d more", perStep, n, own, extra)
	}
	t.Logf("%.1f allocations per stream step of %d MARLIN environments (their own steps: %.1f)", perStep, n, own)
}

// panicky is an environment whose steps panic.
type panicky struct{ env.Env }

func (panicky) Step([]float32) ([]float32, float64, bool, bool, env.Info) { panic("boom") }

// TestPanicBreaksVector checks that an environment panicking inside a
// stream step ends the stream with codes.Internal naming it, leaves the
// server running, and marks the vector broken for later calls.
func TestPanicBreaksVector(t *testing.T) {
	for _, workers := range []int{1, 2} {
		s := NewServer(Config{Workers: workers})
		ctx := context.Background()
		mk := mustMake(t, s, "cclab/Scenario-v0", 3, dumbbell)
		if _, err := s.Reset(ctx, &gympb.ResetRequest{Handle: mk.Handle}); err != nil {
			t.Fatal(err)
		}
		s.vecs[mk.Handle].envs[1] = panicky{s.vecs[mk.Handle].envs[1]}
		req, _ := proto.Marshal(&gympb.StepRequest{Handle: mk.Handle, Actions: pack(0, 0, 0)})
		err := s.StepStream(&fakeStream{reqs: [][]byte{req}})
		if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "environment 1") || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("workers %d: stream step of a panicking environment: %v, want Internal naming environment 1", workers, err)
		}
		_, err = s.Step(ctx, &gympb.StepRequest{Handle: mk.Handle, Actions: pack(0, 0, 0)})
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "close it") {
			t.Fatalf("workers %d: step of a broken vector: %v, want FailedPrecondition", workers, err)
		}
		other := mustMake(t, s, "cclab/Scenario-v0", 1, dumbbell)
		if _, err := s.Reset(ctx, &gympb.ResetRequest{Handle: other.Handle}); err != nil {
			t.Fatalf("workers %d: server unusable after a panic: %v", workers, err)
		}
	}
}
