package gym

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cclab/cclab/rpc/gym/gympb"
)

// TestNoLanesOnWindows: where no lane can be mapped, OpenSharedLane must
// answer Unimplemented (the code on which the Python client falls back to
// StepStream) and say why, and stepping over the stream must still work.
func TestNoLanesOnWindows(t *testing.T) {
	s := NewServer(Config{})
	h := mustMake(t, s, "cclab/Marlin-v0", 2, nil).Handle
	_, err := s.OpenSharedLane(context.Background(), &gympb.OpenLaneRequest{Handle: h})
	if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "StepStream") {
		t.Fatalf("OpenSharedLane on Windows: %v, want Unimplemented naming StepStream", err)
	}
	if _, err := s.Reset(context.Background(), &gympb.ResetRequest{Handle: h}); err != nil {
		t.Fatal(err)
	}
}

// benchLane: BenchmarkMarlinService's lane runs need a lane.
func benchLane(_ context.Context, b *testing.B, _ gympb.GymClient, _ int) {
	b.Skip(errNoLanes)
}
