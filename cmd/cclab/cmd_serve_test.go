package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// syncBuffer is a bytes.Buffer safe to read while Main writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeUnixSocket runs `cclab serve --listen unix:PATH`: it prints the
// address as unix:PATH, serves health checks on it, and removes the socket
// when it stops.
func TestServeUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gym.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	code := make(chan int)
	go func() { code <- Main(ctx, []string{"serve", "--listen", "unix:" + path, "--grace", "1s"}, &out, &errb) }()
	want := "cclab serve: listening on unix:" + path
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("stdout %q, want %q (stderr %q)", out.String(), want, errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	conn, err := grpc.NewClient("unix:"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	if hr, err := healthpb.NewHealthClient(conn).Check(cctx, &healthpb.HealthCheckRequest{Service: "cclab.gym.v1.Gym"}); err != nil || hr.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health over the socket: %v %v", hr, err)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("serve exit %d: %s", c, errb.String())
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("socket %s left behind after stop (%v)", path, err)
	}
}
