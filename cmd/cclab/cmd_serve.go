package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cclab/cclab/rpc"
	"github.com/cclab/cclab/rpc/gym"
)

func init() {
	register(&command{name: "serve", summary: "serve cclab's learning environments to Gymnasium clients over gRPC (python/ is the client)", run: runServe})
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	listen := fs.String("listen", "127.0.0.1:7411", "address to listen on: host:port (port 0 picks a free one; loopback unless you name another interface) or unix:PATH (a Unix-domain socket, removed on exit)")
	envs := fs.Int("envs", 256, "most environments alive at once, over all clients")
	workers := fs.Int("workers", 0, "goroutines stepping environments at once (default: all cores)")
	grace := fs.Duration("grace", 5*time.Second, "on SIGINT/SIGTERM, how long calls in flight may finish")
	idle := fs.Duration("idle-timeout", 10*time.Minute, "when a Make would exceed --envs, close vectors unused for longer than this (left by clients that died without closing them), oldest first, to make room; 0 never closes them")
	stdinEOF := fs.Bool("exit-on-stdin-eof", false, "stop when standard input closes (clients that start the server hold it open, so the server dies with them)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("serve takes no arguments, got %q", pos)
	}
	if err := checkServeFlags(*envs, *workers, *grace, *idle); err != nil {
		return err
	}
	// Any interface the user names is allowed: serving other machines is
	// what --listen is for (the default stays loopback).
	lis, err := rpc.Listen(*listen, true)
	if err != nil {
		return usagef("--listen: %v", err)
	}
	addr := lis.Addr().String()
	if lis.Addr().Network() == "unix" {
		addr = "unix:" + addr
	}
	// The first line of stdout is the address, for clients that start the
	// server with port 0 (python/cclab does).
	fmt.Fprintf(stdout, "cclab serve: listening on %s\n", addr)
	if f, ok := stdout.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}
	if *stdinEOF {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			cancel()
		}()
	}
	cfg := gym.Config{MaxEnvs: *envs, Workers: *workers, IdleTimeout: *idle, Logf: func(format string, args ...any) {
		fmt.Fprintf(stderr, "cclab serve: "+format+"\n", args...)
	}}
	err = gym.Serve(ctx, lis, cfg, *grace)
	fmt.Fprintln(stderr, "cclab serve: stopped")
	return err
}

// checkServeFlags reports every out-of-range numeric flag of serve, one
// message each, naming the flag and the values it accepts.
func checkServeFlags(envs, workers int, grace, idle time.Duration) error {
	var msgs []string
	if envs < 1 {
		msgs = append(msgs, fmt.Sprintf("--envs is %d, want 1 or more (the most environments alive at once)", envs))
	}
	if workers < 0 {
		msgs = append(msgs, fmt.Sprintf("--workers is %d, want 0 (all cores) or more", workers))
	}
	if grace < 0 {
		msgs = append(msgs, fmt.Sprintf("--grace is %v, want 0s or more", grace))
	}
	if idle < 0 {
		msgs = append(msgs, fmt.Sprintf("--idle-timeout is %v, want 0 (never close idle vectors) or more", idle))
	}
	if len(msgs) == 0 {
		return nil
	}
	return usagef("%s", strings.Join(msgs, "; "))
}
