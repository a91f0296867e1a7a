//go:build !linux

package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
)

// The emulator runs real kernel TCP in network namespaces joined by veth
// pairs and TUN devices, which only Linux has; elsewhere cclab keeps its
// commands so that they say why they cannot run.
func init() {
	register(&command{name: "compare", summary: compareSummary + " (Linux only)", args: "SCENARIO", run: needsLinux("compare")})
	register(&command{name: "emu", summary: emuSummary + " (Linux only)", args: "SCENARIO", run: needsLinux("emu")})
}

func needsLinux(name string) func(context.Context, []string, io.Writer, io.Writer) error {
	return func(context.Context, []string, io.Writer, io.Writer) error {
		return fmt.Errorf("cclab %s needs Linux (network namespaces, veth pairs and TUN devices for real kernel TCP); this cclab was built for %s: run the simulator with cclab run, or use a Linux machine", name, runtime.GOOS)
	}
}
