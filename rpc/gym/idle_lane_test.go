//go:build unix

package gym

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/cclab/cclab/rpc/gym/gympb"
)

// TestIdleReclaimLane: steps over a shared-memory lane (no RPC each) keep
// a vector in use; once they stop for longer than the timeout, a Make
// needing room closes the vector and its lane, as Close would.
func TestIdleReclaimLane(t *testing.T) {
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "gym.sock"))
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{}
	g, _, s := newGRPCServer(Config{MaxEnvs: 2, Workers: 1, IdleTimeout: 10 * time.Minute})
	s.now = clk.now // before serving: no call has read it yet
	done := make(chan struct{})
	go func() { g.Serve(lis); close(done) }()
	t.Cleanup(func() { s.CloseLanes(); g.Stop(); <-done })
	c := dialUnix(t, lis.Addr().String())
	ctx := context.Background()
	make1 := func() (uint64, error) {
		mk, err := c.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Scenario-v0", NumEnvs: 1, Options: dumbbell})
		if err != nil {
			return 0, err
		}
		if _, err := c.Reset(ctx, &gympb.ResetRequest{Handle: mk.Handle}); err != nil {
			t.Fatal(err)
		}
		return mk.Handle, nil
	}
	a, err := make1()
	if err != nil {
		t.Fatal(err)
	}
	b, err := make1()
	if err != nil {
		t.Fatal(err)
	}
	lc := openLane(t, c, a, 1)
	clk.advance(11 * time.Minute)
	if code, msg := lc.step(t, pack(0), true); code != codes.OK {
		t.Fatalf("lane step: %v %s", code, msg)
	}
	// a was stepped over its lane just now, b not for 11 minutes.
	d, err := make1()
	if err != nil {
		t.Fatalf("Make beside a vector idle past the timeout: %v", err)
	}
	if _, err := c.Step(ctx, &gympb.StepRequest{Handle: b, Actions: pack(0), Autoreset: true}); !isReclaimed(err) {
		t.Fatalf("step of the idle vector: %v, want NotFound saying it was closed for being idle", err)
	}
	if code, msg := lc.step(t, pack(0), true); code != codes.OK {
		t.Fatalf("the lane's vector, stepped only over the lane, was closed: %v %s", code, msg)
	}
	// Now the lane goes quiet (its client still attached) for too long.
	clk.advance(10*time.Minute + time.Second)
	if _, err := c.Step(ctx, &gympb.StepRequest{Handle: d, Actions: pack(0), Autoreset: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := make1(); err != nil {
		t.Fatalf("Make beside a lane idle past the timeout: %v", err)
	}
	var bell [1]byte
	lc.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := lc.conn.Read(bell[:]); err == nil {
		t.Error("the lane of a vector closed for being idle is still open")
	}
	if _, err := c.Reset(ctx, &gympb.ResetRequest{Handle: a}); !isReclaimed(err) {
		t.Fatalf("reset of the lane's closed vector: %v, want NotFound saying it was closed for being idle", err)
	}
	s.mu.Lock()
	lanes := len(s.lanes)
	s.mu.Unlock()
	if lanes != 0 {
		t.Errorf("%d lanes left open, want 0", lanes)
	}
	checkLive(t, s)
}
