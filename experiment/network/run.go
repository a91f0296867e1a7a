package network

import (
	"context"
	"fmt"
)

// checkEvery is how many events run between two looks at the context:
// at millions of events per second of wall time, a cancellation acts
// within milliseconds.
const checkEvery = 1 << 12

// RunContext is Run, returning early with an error wrapping ctx.Err() when
// ctx is cancelled.
func (n *Network) RunContext(ctx context.Context) error {
	if ctx.Done() == nil {
		n.Run()
		return nil
	}
	if n.Sched.RunUntilOr(n.end, checkEvery, func() bool { return ctx.Err() != nil }) {
		return fmt.Errorf("interrupted at simulated %v: %w", n.Now(), ctx.Err())
	}
	return nil
}
