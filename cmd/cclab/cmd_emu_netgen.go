//go:build linux

package main

import (
	"context"
	"fmt"
	"github.com/cclab/cclab/rpc"
	"io"

	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/rpc/netgen"
)

// emuNetgen returns an emu.Options.OnStart that serves the network
// generator (rpc/netgen) for the run's bottleneck on addr (loopback or
// unix:PATH), and a function that stops it; both are no-ops when addr is
// empty.
func emuNetgen(ctx context.Context, addr string, stderr io.Writer) (func(*emu.Control), func(), error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	lis, err := rpc.Listen(addr, false)
	if err != nil {
		return nil, nil, fmt.Errorf("--netgen: %w", err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	started := false
	start := func(c *emu.Control) {
		started = true
		fmt.Fprintf(stderr, "cclab emu: network generator on %s (link \"bottleneck\")\n", lis.Addr())
		go func() {
			defer close(done)
			_ = netgen.Serve(sctx, lis, map[string]netgen.Link{"bottleneck": netgen.EmuLink{C: c}})
		}()
	}
	stop := func() {
		cancel()
		if started {
			<-done
		} else {
			lis.Close()
		}
	}
	return start, stop, nil
}
