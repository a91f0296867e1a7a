// Package rpc holds what cclab's gRPC services share: where they listen and
// how they stop. The services themselves are in its subfolders: gym (the
// Gymnasium environment service), agent (host-agent RPC) and netgen (the
// network generator).
package rpc

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"

	"google.golang.org/grpc"
)

// Listen opens a service's listening socket: "unix:PATH" for a Unix
// socket, otherwise a TCP "host:port" that must be a loopback address
// unless allowRemote, so that a service is reachable from another machine
// only when asked.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if _, err := os.Stat(path); err == nil {
			return nil, fmt.Errorf("%s exists: remove it or choose another socket path", path)
		}
		return net.Listen("unix", path)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w (want host:port or unix:PATH)", addr, err)
	}
	if !allowRemote {
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("listen address %q is not loopback: pass --allow-remote to serve other machines", addr)
		}
	}
	return net.Listen("tcp", addr)
}

// Serve runs g on lis until ctx is done, then stops it (calls in flight are
// cancelled: these services' clients tolerate a missing answer).
func Serve(ctx context.Context, g *grpc.Server, lis net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- g.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	g.Stop()
	<-errc
	return nil
}
