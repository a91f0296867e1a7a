package main

import (
	"context"
	"fmt"
	"io"
	"os"
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
	stdinEOF := fs.Bool("exit-on-stdin-eof", false, "stop when standard input closes (clients that start the server hold it open, so the server dies with them)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("serve takes no arguments, got %q", pos)
	}
	if *envs < 1 || *workers < 0 || *grace < 0 {
		return usagef("--envs must be positive, --workers and --grace not negative")
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
	err = gym.Serve(ctx, lis, gym.Config{MaxEnvs: *envs, Workers: *workers}, *grace)
	fmt.Fprintln(stderr, "cclab serve: stopped")
	return err
}
