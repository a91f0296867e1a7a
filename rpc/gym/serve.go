package gym

import (
	"context"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/cclab/cclab/rpc/gym/gympb"
)

// ServiceName is the gRPC service name, also the health-check service.
const ServiceName = "cclab.gym.v1.Gym"

// maxMessage bounds requests (inline scenarios) and responses
// (observations of large vectors).
const maxMessage = 64 << 20

// NewGRPCServer returns a gRPC server offering the Gym service and the
// standard health service, and the health server to flip on shutdown.
func NewGRPCServer(cfg Config) (*grpc.Server, *health.Server) {
	g, h, _ := newGRPCServer(cfg)
	return g, h
}

func newGRPCServer(cfg Config) (*grpc.Server, *health.Server, *Server) {
	g := grpc.NewServer(grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage))
	s := NewServer(cfg)
	gympb.RegisterGymServer(g, s)
	h := health.NewServer()
	h.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	h.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(g, h)
	return g, h, s
}

// Serve serves lis until ctx is done, then reports NOT_SERVING, lets the
// calls in flight finish for up to grace and stops, closing every
// shared-memory lane (their files removed).
func Serve(ctx context.Context, lis net.Listener, cfg Config, grace time.Duration) error {
	g, h, s := newGRPCServer(cfg)
	defer s.CloseLanes()
	errc := make(chan error, 1)
	go func() { errc <- g.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	h.Shutdown()
	done := make(chan struct{})
	go func() { g.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		g.Stop()
	}
	<-errc
	return nil
}
