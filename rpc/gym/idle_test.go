package gym

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cclab/cclab/rpc/gym/gympb"
)

// fakeClock is a clock the test moves; safe for concurrent use.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(1_700_000_000, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// idleServer is a server of at most maxEnvs environments closing vectors
// idle for longer than timeout, on a clock the test moves.
func idleServer(maxEnvs int, timeout time.Duration) (*Server, *fakeClock) {
	c := &fakeClock{}
	s := NewServer(Config{MaxEnvs: maxEnvs, Workers: 1, IdleTimeout: timeout})
	s.now = c.now
	return s, c
}

// resetVec makes a reset dumbbell vector of n environments.
func resetVec(t testing.TB, s *Server, n int) uint64 {
	t.Helper()
	h := mustMake(t, s, "cclab/Scenario-v0", n, dumbbell).Handle
	if _, err := s.Reset(context.Background(), &gympb.ResetRequest{Handle: h}); err != nil {
		t.Fatal(err)
	}
	return h
}

func stepVec(s *Server, h uint64, n int) error {
	_, err := s.Step(context.Background(), &gympb.StepRequest{Handle: h, Actions: make([]byte, 4*n), Autoreset: true})
	return err
}

// checkLive checks the server's count of live environments against its
// table.
func checkLive(t testing.TB, s *Server) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := 0
	for _, v := range s.vecs {
		sum += len(v.envs)
	}
	if s.live != sum {
		t.Fatalf("server counts %d live environments, its vectors hold %d", s.live, sum)
	}
}

// isReclaimed reports whether err is the error of a call on a vector the
// server closed for being idle.
func isReclaimed(err error) bool {
	return status.Code(err) == codes.NotFound && strings.Contains(err.Error(), "idle") && strings.Contains(err.Error(), "--idle-timeout")
}

// TestIdleReclaimOnMake: a Make that would exceed the limit closes the
// vectors idle for longer than the timeout (those of crashed clients),
// oldest first and only as many as it needs, never one used recently; a
// later call on a closed handle says why it is gone.
func TestIdleReclaimOnMake(t *testing.T) {
	ctx := context.Background()
	s, clk := idleServer(4, 10*time.Minute)
	var logged []string
	s.cfg.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	a := resetVec(t, s, 1) // a crashed client's
	clk.advance(time.Minute)
	b := resetVec(t, s, 1) // another's, a minute younger
	c := resetVec(t, s, 2) // a live client's
	clk.advance(9*time.Minute + 59*time.Second)
	if err := stepVec(s, c, 2); err != nil {
		t.Fatal(err)
	}
	// Before the timeout, nothing is closed: a is idle 10m59s, but b only
	// 9m59s, and the Make needs both.
	_, err := s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 2, Options: dumbbell})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--idle-timeout 10m0s") || !strings.Contains(err.Error(), "too few") {
		t.Fatalf("Make of 2 with 1 environment idle: %v, want ResourceExhausted naming --idle-timeout", err)
	}
	if err := stepVec(s, b, 1); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Minute)
	if err := stepVec(s, a, 1); err != nil {
		t.Fatalf("a vector idle for too little to make room was closed: %v", err)
	}
	clk.advance(10 * time.Minute)
	if err := stepVec(s, c, 2); err != nil {
		t.Fatal(err)
	}
	clk.advance(30 * time.Second)
	// Now b is idle 11m30s, a 10m30s, c 30s: b goes, the oldest.
	d := resetVec(t, s, 1)
	if err := stepVec(s, b, 1); !isReclaimed(err) {
		t.Fatalf("step of the oldest idle vector after a Make made room: %v, want NotFound saying it was closed for being idle", err)
	}
	if err := stepVec(s, a, 1); err != nil {
		t.Fatalf("a second idle vector closed though the Make needed one: %v", err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], fmt.Sprint("vector ", b, " ")) || !strings.Contains(logged[0], "11m30s idle") {
		t.Errorf("logged %q, want one line naming vector %d and its idle time", logged, b)
	}
	if err := stepVec(s, c, 2); err != nil {
		t.Fatalf("a vector in use closed: %v", err)
	}
	req, err := proto.Marshal(&gympb.StepRequest{Handle: b, Actions: make([]byte, 4)})
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"Reset": func() error { _, err := s.Reset(ctx, &gympb.ResetRequest{Handle: b}); return err },
		"OpenSharedLane": func() error {
			_, err := s.OpenSharedLane(ctx, &gympb.OpenLaneRequest{Handle: b, Dir: t.TempDir()})
			return err
		},
		"StepStream": func() error { return s.StepStream(&fakeStream{reqs: [][]byte{req}}) },
		"Close":      func() error { _, err := s.Close(ctx, &gympb.CloseRequest{Handle: b}); return err },
	} {
		if name == "OpenSharedLane" && errNoLanes != nil {
			continue
		}
		if err := call(); !isReclaimed(err) || !strings.Contains(err.Error(), fmt.Sprint("vector ", b, " ")) || !strings.Contains(err.Error(), "11m30s") {
			t.Errorf("%s on a closed idle vector: %v, want NotFound naming it and --idle-timeout", name, err)
		}
	}
	// b, c and d were all used just now: nothing to close.
	_, err = s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 1, Options: dumbbell})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "none in a vector idle for longer than --idle-timeout 10m0s") {
		t.Fatalf("Make with no idle vector: %v, want ResourceExhausted naming --idle-timeout", err)
	}
	_ = d
	checkLive(t, s)
}

// TestIdleReclaimNever: with no timeout, idle vectors stay however long,
// and the limit's error says why.
func TestIdleReclaimNever(t *testing.T) {
	s, clk := idleServer(2, 0)
	a := resetVec(t, s, 2)
	clk.advance(1000 * time.Hour)
	_, err := s.Make(context.Background(), &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 1, Options: dumbbell})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--idle-timeout is 0") {
		t.Fatalf("Make beyond the limit without a timeout: %v, want ResourceExhausted naming --idle-timeout", err)
	}
	if err := stepVec(s, a, 2); err != nil {
		t.Fatal(err)
	}
}

// TestIdleReclaimSkipsBusy: a vector in a call (a step longer than the
// timeout) is in use, not idle, however long ago the call began, and its
// call's end counts as use.
func TestIdleReclaimSkipsBusy(t *testing.T) {
	s, clk := idleServer(2, 10*time.Minute)
	a := resetVec(t, s, 2)
	v, err := s.vec(a) // a call begins
	if err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Hour)
	if _, err := s.Make(context.Background(), &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 1, Options: dumbbell}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("Make beside a vector in a call: %v, want ResourceExhausted", err)
	}
	s.release(v) // and ends
	clk.advance(5 * time.Minute)
	if _, err := s.Make(context.Background(), &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 1, Options: dumbbell}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("Make 5 minutes after a long call ended: %v, want ResourceExhausted", err)
	}
	if err := stepVec(s, a, 2); err != nil {
		t.Fatal(err)
	}
}

// TestIdleReclaimConcurrent makes, steps and closes vectors from several
// goroutines while Makes close idle ones (run it with -race): every call
// either works or finds its vector closed for being idle, and the count
// of live environments stays right.
func TestIdleReclaimConcurrent(t *testing.T) {
	ctx := context.Background()
	s, clk := idleServer(4, time.Minute)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 40 {
				mk, err := s.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 1, Options: dumbbell})
				if status.Code(err) == codes.ResourceExhausted {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				if _, err := s.Reset(ctx, &gympb.ResetRequest{Handle: mk.Handle}); err != nil && !isReclaimed(err) {
					errs <- err
					return
				}
				for range k % 3 {
					if err := stepVec(s, mk.Handle, 1); err != nil && !isReclaimed(err) {
						errs <- err
						return
					}
				}
				if (g+k)%2 == 0 {
					if _, err := s.Close(ctx, &gympb.CloseRequest{Handle: mk.Handle}); err != nil && !isReclaimed(err) {
						errs <- err
						return
					}
				}
				clk.advance(40 * time.Second)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkLive(t, s)
	if len(s.reclaimed) == 0 {
		t.Error("no vector closed for being idle: the test tested nothing")
	}
	t.Logf("%d vectors closed for being idle", len(s.reclaimed))
}
