//go:build unix

package gym

import (
	"context"
	"encoding/binary"
	"math"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/cclab/cclab/rpc/gym/gympb"
)

// laneClient is a test client of a lane: what the Python client does.
type laneClient struct {
	resp *gympb.OpenLaneResponse
	mem  []byte
	conn net.Conn
	seq  uint64
	n    int
}

func openLane(t testing.TB, c gympb.GymClient, h uint64, n int) *laneClient {
	t.Helper()
	resp, err := c.OpenSharedLane(context.Background(), &gympb.OpenLaneRequest{Handle: h, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(resp.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(resp.Size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("unix", resp.Socket)
	if err != nil {
		t.Fatal(err)
	}
	lc := &laneClient{resp: resp, mem: mem, conn: conn, n: n}
	t.Cleanup(func() { conn.Close(); syscall.Munmap(mem) })
	return lc
}

// step runs one step; it returns the answer's status and message.
func (lc *laneClient) step(t testing.TB, acts []byte, autoreset bool) (codes.Code, string) {
	t.Helper()
	lc.seq++
	copy(lc.mem[lc.resp.ActionsOffset:], acts)
	binary.LittleEndian.PutUint64(lc.mem[hReqSeq:], lc.seq)
	a := uint32(0)
	if autoreset {
		a = 1
	}
	binary.LittleEndian.PutUint32(lc.mem[hAutoreset:], a)
	if _, err := lc.conn.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	lc.conn.SetReadDeadline(time.Now().Add(time.Minute))
	var b [1]byte
	if _, err := lc.conn.Read(b[:]); err != nil {
		t.Fatalf("doorbell: %v", err)
	}
	if got := binary.LittleEndian.Uint64(lc.mem[hRespSeq:]); got != lc.seq {
		t.Fatalf("answer sequence %d, want %d", got, lc.seq)
	}
	ml := binary.LittleEndian.Uint32(lc.mem[hMsgLen:])
	return codes.Code(binary.LittleEndian.Uint32(lc.mem[hStatus:])), string(lc.mem[lc.resp.MessageOffset : lc.resp.MessageOffset+uint64(ml)])
}

// batch reads the answer as a StepBatch, to compare with the stream's.
func (lc *laneClient) batch(obsDim int) *gympb.StepBatch {
	r, n, m := lc.resp, uint64(lc.n), lc.mem
	nk := uint64(binary.LittleEndian.Uint32(m[hKeyCount:]))
	b := &gympb.StepBatch{
		Observations: m[r.ObservationsOffset : r.ObservationsOffset+4*n*uint64(obsDim)],
		Rewards:      m[r.RewardsOffset : r.RewardsOffset+8*n],
		Terminated:   m[r.TerminatedOffset : r.TerminatedOffset+n],
		Truncated:    m[r.TruncatedOffset : r.TruncatedOffset+n],
		Infos: &gympb.InfoTable{
			Values:  m[r.InfoValuesOffset : r.InfoValuesOffset+8*n*nk],
			Present: m[r.InfoPresentOffset : r.InfoPresentOffset+n*nk],
		},
	}
	k := m[r.InfoKeysOffset:]
	for range nk {
		l := binary.LittleEndian.Uint16(k)
		b.Infos.Keys = append(b.Infos.Keys, string(k[2:2+l]))
		k = k[2+l:]
	}
	return b
}

// TestLaneMatchesStream steps two vectors made and reset alike, one over
// StepStream and one over a shared-memory lane, and checks that every
// step's observations, rewards, flags and infos agree bit for bit, across
// episode ends and autoresets.
func TestLaneMatchesStream(t *testing.T) {
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
		lc := openLane(t, c, h[1], n)
		ad, od := actDim(mk.ActionSpace), obsDim(mk.ObservationSpace)
		ends := 0
		for k := range tc.steps {
			act := make([]float32, n*ad)
			for i := range act {
				act[i] = actionAt(i/ad, k)
			}
			if err := st.Send(&gympb.StepRequest{Handle: h[0], Actions: pack(act...), Autoreset: true}); err != nil {
				t.Fatal(err)
			}
			want, err := st.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if code, msg := lc.step(t, pack(act...), true); code != codes.OK {
				t.Fatalf("%s step %d: lane answered %v: %s", tc.id, k, code, msg)
			}
			got := lc.batch(od)
			if string(got.Observations) != string(want.Observations) || string(got.Rewards) != string(want.Rewards) ||
				string(got.Terminated) != string(want.Terminated) || string(got.Truncated) != string(want.Truncated) {
				t.Fatalf("%s step %d: lane's results differ from the stream's", tc.id, k)
			}
			gi, wi := batchInfos(got.Infos, n), batchInfos(want.Infos, n)
			for i := range n {
				if len(gi[i]) != len(wi[i]) {
					t.Fatalf("%s step %d env %d: lane info %v, stream %v", tc.id, k, i, gi[i], wi[i])
				}
				for key, x := range wi[i] {
					if y, ok := gi[i][key]; !ok || math.Float64bits(x) != math.Float64bits(y) {
						t.Fatalf("%s step %d env %d: info[%q] lane %v, stream %g", tc.id, k, i, key, gi[i], x)
					}
				}
				if want.Terminated[i] == 1 || want.Truncated[i] == 1 {
					ends++
				}
			}
		}
		if tc.id == "cclab/Scenario-v0" && ends == 0 {
			t.Fatalf("%s: no episode ended in %d steps; the autoreset path went untested", tc.id, tc.steps)
		}
		st.CloseSend()
	}
}

// TestLaneErrors checks that a step the stream would refuse is answered
// with the stream's status and message, that the lane and vector stay
// usable after it, that a corrupted header ends the lane with an error
// instead of a crash, and that the lane's files are gone once the client
// has attached, and when the vector closes before it does.
func TestLaneErrors(t *testing.T) {
	c := serveUnix(t)
	ctx := context.Background()
	mk, err := c.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 2, Options: dumbbell})
	if err != nil {
		t.Fatal(err)
	}
	lc := openLane(t, c, mk.Handle, 2)
	if _, err := os.Stat(lc.resp.Path); err == nil {
		// The server removes the files right after accepting; give it a
		// moment, then insist.
		time.Sleep(100 * time.Millisecond)
	}
	if code, msg := lc.step(t, pack(0, 0), false); code != codes.FailedPrecondition || !strings.Contains(msg, "Reset") {
		t.Errorf("step before reset: %v %q, want FailedPrecondition naming Reset", code, msg)
	}
	if _, err := os.Stat(lc.resp.Path); !os.IsNotExist(err) {
		t.Errorf("lane file %s still there after the client attached: %v", lc.resp.Path, err)
	}
	if _, err := c.Reset(ctx, &gympb.ResetRequest{Handle: mk.Handle}); err != nil {
		t.Fatal(err)
	}
	if code, msg := lc.step(t, pack(0, float32(math.NaN())), true); code != codes.InvalidArgument || !strings.Contains(msg, "environment 1") {
		t.Errorf("NaN action: %v %q, want InvalidArgument naming environment 1", code, msg)
	}
	if code, msg := lc.step(t, pack(0, 0), true); code != codes.OK {
		t.Fatalf("lane unusable after a refused step: %v %s", code, msg)
	}
	// A corrupted header: the answer says so and the lane ends.
	binary.LittleEndian.PutUint32(lc.mem[hObsDim:], 12345)
	if code, msg := lc.step(t, pack(0, 0), true); code != codes.InvalidArgument || !strings.Contains(msg, "observation dim") {
		t.Errorf("corrupted header: %v %q, want InvalidArgument naming the field", code, msg)
	}
	var b [1]byte
	lc.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := lc.conn.Read(b[:]); err == nil {
		t.Error("lane still open after a corrupted header")
	}
	// A new lane works; closing the vector before a client attaches
	// removes its files.
	lc2 := openLane(t, c, mk.Handle, 2)
	if code, msg := lc2.step(t, pack(0, 0), true); code != codes.OK {
		t.Fatalf("new lane: %v %s", code, msg)
	}
	resp, err := c.OpenSharedLane(ctx, &gympb.OpenLaneRequest{Handle: mk.Handle, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(resp.Path); err != nil {
		t.Fatalf("lane file missing before the client attached: %v", err)
	}
	if _, err := c.Close(ctx, &gympb.CloseRequest{Handle: mk.Handle}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(resp.Path); !os.IsNotExist(err) {
		t.Errorf("lane file %s still there after Close: %v", resp.Path, err)
	}
	if _, err := c.OpenSharedLane(ctx, &gympb.OpenLaneRequest{Handle: mk.Handle}); err == nil {
		t.Error("lane opened for a closed vector")
	}
}

// TestLaneFilesRemovedOnStop checks that a server stopping removes the
// files of a lane no client attached to.
func TestLaneFilesRemovedOnStop(t *testing.T) {
	lis, err := net.Listen("unix", t.TempDir()+"/gym.sock")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Serve(ctx, lis, Config{}, time.Second); close(done) }()
	c := dialUnix(t, lis.Addr().String())
	mk, err := c.Make(context.Background(), &gympb.MakeRequest{EnvId: "cclab/Marlin-v0", NumEnvs: 1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.OpenSharedLane(context.Background(), &gympb.OpenLaneRequest{Handle: mk.Handle, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if _, err := os.Stat(resp.Path); !os.IsNotExist(err) {
		t.Errorf("lane file %s still there after the server stopped: %v", resp.Path, err)
	}
}

// TestLaneAllocations checks that the lane's own code allocates nothing
// per step: a lane step allocates what the environments' own steps do
// (and the server's step, as StepStream's), nothing for the doorbell or
// the file.
func TestLaneAllocations(t *testing.T) {
	const n, steps = 8, 50
	s := NewServer(Config{Workers: 1})
	// Two vectors alike, stepped alike: one over the lane, one through
	// StepStream's own path (Server.step and encodeBatch), so that their
	// environments allocate alike, episode ends included.
	var h [2]uint64
	for j := range h {
		h[j] = mustMake(t, s, "cclab/Marlin-v0", n, nil).Handle
		if _, err := s.Reset(context.Background(), &gympb.ResetRequest{Handle: h[j], Seeds: make([]int64, n)}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := s.OpenSharedLane(context.Background(), &gympb.OpenLaneRequest{Handle: h[0], Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	l := s.lanes[h[0]]
	s.mu.Unlock()
	defer s.CloseLanes()
	le := binary.LittleEndian
	le.PutUint32(l.mem[hAutoreset:], 1)
	seq := uint64(0)
	lane := testing.AllocsPerRun(3, func() {
		for range steps {
			seq++
			le.PutUint64(l.mem[hReqSeq:], seq)
			if l.serve(seq) || le.Uint32(l.mem[hStatus:]) != 0 {
				t.Fatalf("lane step failed: %s", l.mem[resp.MessageOffset:resp.MessageOffset+64])
			}
		}
	}) / steps
	req := &gympb.StepRequest{Handle: h[1], Actions: make([]byte, 4*n), Autoreset: true}
	var (
		out   stepOut
		batch = &gympb.StepBatch{Infos: &gympb.InfoTable{}}
		keys  []string
	)
	stream := testing.AllocsPerRun(3, func() {
		for range steps {
			v, err := s.step(req, &out)
			if err != nil {
				t.Fatal(err)
			}
			keys = encodeBatch(batch, &out, keys)
			v.mu.Unlock()
		}
	}) / steps
	// A per-step allocation of the lane would add 1; the environments'
	// own counts wobble by a few hundredths from run to run.
	if lane > stream+0.5 {
		t.Fatalf("%.2f allocations per lane step of %d MARLIN environments, %.2f through StepStream's path: the lane allocates", lane, n, stream)
	}
	t.Logf("%.2f allocations per lane step of %d MARLIN environments (StepStream's path: %.2f, all of them the environments' and the step's own)", lane, n, stream)
}

// FuzzLaneRequest checks that parsing a lane file of any content and size
// returns a request or an error, never panics nor reads outside the file,
// and accepts only the header it should.
func FuzzLaneRequest(f *testing.F) {
	lay := newLaneLayout(3, 2, 5)
	good := make([]byte, lay.size)
	le := binary.LittleEndian
	le.PutUint32(good[hMagic:], laneMagic)
	le.PutUint32(good[hVersion:], laneVersion)
	le.PutUint32(good[hNumEnvs:], 3)
	le.PutUint32(good[hActDim:], 2)
	le.PutUint32(good[hObsDim:], 5)
	le.PutUint64(good[hReqSeq:], 7)
	f.Add(good, uint64(7))
	f.Add(good[:100], uint64(7))
	f.Add([]byte{}, uint64(0))
	f.Fuzz(func(t *testing.T, buf []byte, seq uint64) {
		acts := make([]byte, 4*3*2)
		r, err := parseLaneRequest(buf, &lay, seq, acts)
		if err != nil {
			return
		}
		if len(buf) < lay.size || le.Uint32(buf[hMagic:]) != laneMagic || le.Uint64(buf[hReqSeq:]) != seq || r.seq != seq {
			t.Fatalf("accepted a bad header: %v", r)
		}
		if string(acts) != string(buf[lay.act:lay.act+len(acts)]) {
			t.Fatal("actions not copied")
		}
	})
}

func dialUnix(t testing.TB, path string) gympb.GymClient {
	t.Helper()
	conn, err := grpc.NewClient("unix:"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return gympb.NewGymClient(conn)
}

// directLane makes a reset MARLIN vector of n and a lane on it, served
// by calling serve directly (no client attached, so its file stays).
func directLane(t testing.TB, n int) (*Server, *lane, *gympb.OpenLaneResponse) {
	t.Helper()
	s := NewServer(Config{Workers: 1})
	h := mustMake(t, s, "cclab/Marlin-v0", n, nil).Handle
	if _, err := s.Reset(context.Background(), &gympb.ResetRequest{Handle: h, Seeds: make([]int64, n)}); err != nil {
		t.Fatal(err)
	}
	resp, err := s.OpenSharedLane(context.Background(), &gympb.OpenLaneRequest{Handle: h, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	l := s.lanes[h]
	s.mu.Unlock()
	t.Cleanup(s.CloseLanes)
	return s, l, resp
}

// TestLaneTruncatedFile checks that a lane file truncated under the
// server (its mapping then faults) ends the lane instead of crashing the
// server, and that the vector stays usable.
func TestLaneTruncatedFile(t *testing.T) {
	s, l, resp := directLane(t, 2)
	if err := os.Truncate(resp.Path, 0); err != nil {
		t.Fatal(err)
	}
	if !l.serve(1) {
		t.Fatal("a step over a truncated lane file did not end the lane")
	}
	req := &gympb.StepRequest{Handle: l.handle, Actions: make([]byte, 8), Autoreset: true}
	var out stepOut
	v, err := s.step(req, &out)
	if err != nil {
		t.Fatalf("vector unusable after its lane faulted: %v", err)
	}
	v.mu.Unlock()
}

// FuzzLaneFile writes arbitrary bytes over a live lane's header and
// actions and steps it: the server answers (a result or an error status)
// and never panics.
func FuzzLaneFile(f *testing.F) {
	f.Add(uint16(24), []byte{1, 0, 0, 0, 0, 0, 0, 0}, uint64(1))
	f.Add(uint16(0), []byte("CCLN"), uint64(1))
	f.Add(uint16(128), []byte{0, 0, 0xc0, 0x7f}, uint64(1))
	f.Fuzz(func(t *testing.T, at uint16, data []byte, seq uint64) {
		_, l, _ := directLane(t, 2)
		le := binary.LittleEndian
		le.PutUint64(l.mem[hReqSeq:], 1)
		if int(at) < len(l.mem) {
			copy(l.mem[at:], data)
		}
		fatal := l.serve(seq)
		code := codes.Code(le.Uint32(l.mem[hStatus:]))
		if code == codes.OK && fatal {
			t.Fatal("fatal step answered OK")
		}
		if le.Uint64(l.mem[hRespSeq:]) != seq {
			t.Fatalf("answer sequence %d, want %d", le.Uint64(l.mem[hRespSeq:]), seq)
		}
	})
}

// benchLane is benchService over a shared-memory lane, with a client that
// allocates nothing per step, so that -benchmem counts the server's and
// the environments' allocations only (the same as over StepStream's path:
// TestLaneAllocations).
func benchLane(ctx context.Context, b *testing.B, c gympb.GymClient, n int) {
	mk := benchVector(ctx, b, c, n)
	lc := openLane(b, c, mk.Handle, n)
	le := binary.LittleEndian
	le.PutUint32(lc.mem[hAutoreset:], 1)
	var bell [1]byte
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	steps := 0
	for k := 0; steps < b.N; k++ {
		for i := range n {
			le.PutUint32(lc.mem[int(lc.resp.ActionsOffset)+4*i:], math.Float32bits(benchAction(k, i)))
		}
		lc.seq++
		le.PutUint64(lc.mem[hReqSeq:], lc.seq)
		bell[0] = 1
		if _, err := lc.conn.Write(bell[:]); err != nil {
			b.Fatal(err)
		}
		if _, err := lc.conn.Read(bell[:]); err != nil {
			b.Fatal(err)
		}
		if le.Uint32(lc.mem[hStatus:]) != 0 || le.Uint64(lc.mem[hRespSeq:]) != lc.seq {
			b.Fatal("lane step failed")
		}
		steps += n
	}
	b.ReportMetric(float64(steps)/time.Since(start).Seconds(), "steps/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(steps), "cpu-us/step")
}
