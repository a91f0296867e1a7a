package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
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

// TestServeFlagRanges checks that an out-of-range flag of serve gets a
// message naming that flag (not the others) and the values it accepts,
// one message per wrong flag, and exit code 2.
func TestServeFlagRanges(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--workers", "-3"}, []string{"--workers is -3, want 0 (all cores) or more"}},
		{[]string{"--grace", "-1s"}, []string{"--grace is -1s, want 0s or more"}},
		{[]string{"--envs", "0"}, []string{"--envs is 0, want 1 or more"}},
		{[]string{"--idle-timeout", "-1m"}, []string{"--idle-timeout is -1m0s, want 0 (never close idle vectors) or more"}},
		{[]string{"--envs", "-1", "--grace", "-2s"}, []string{"--envs is -1, want 1 or more", "--grace is -2s, want 0s or more"}},
	} {
		var out, errb syncBuffer
		// An accepted command would serve: listen on a socket nobody
		// dials, so that a wrongly accepted flag fails the test quickly.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		args := append([]string{"serve", "--listen", "unix:" + filepath.Join(t.TempDir(), "s")}, tc.args...)
		code := Main(ctx, args, &out, &errb)
		cancel()
		msg := errb.String()
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tc.args, code, msg)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: stderr %q, want %q", tc.args, msg, w)
			}
		}
		for _, f := range []string{"--envs", "--workers", "--grace", "--idle-timeout"} {
			if !slices.Contains(tc.args, f) && strings.Contains(msg, f) {
				t.Errorf("%v: stderr %q names %s, which is fine", tc.args, msg, f)
			}
		}
	}
}
