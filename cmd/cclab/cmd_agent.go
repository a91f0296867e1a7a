package main

import (
	"context"
	"fmt"
	"github.com/cclab/cclab/rpc"
	"io"

	"github.com/cclab/cclab/rpc/agent"
)

func init() {
	register(&command{name: "agent serve", summary: "serve a trained policy to live flows over gRPC (cclab send --agent)", run: runAgentServe})
}

func runAgentServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agent serve", stderr)
	pol := fs.String("policy", "marlin", "policy file, or marlin / dc-bbr for the shipped MARLIN / data-centre policy")
	kind := fs.String("kind", "", "policy kind: marlin, dc-bbr or generic (default: from the policy's training environment)")
	listen := fs.String("listen", "127.0.0.1:50061", "address: loopback host:port, or unix:PATH")
	remote := fs.Bool("allow-remote", false, "allow a non-loopback listen address")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("usage: cclab agent serve --policy FILE --listen ADDR")
	}
	s, err := agent.LoadPolicy(*pol, *kind)
	if err != nil {
		return err
	}
	lis, err := rpc.Listen(*listen, *remote)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "cclab agent: serving %s policy %s on %s\n", s.Kind, *pol, lis.Addr())
	return agent.Serve(ctx, lis, s)
}
