package scenario

import (
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/netsim/traffic"
)

// Sources calls add for each source of background entry b with the window
// in which it is active: every part of a sequence, repeating with the
// sequence's period, or b itself. It stops at the first error. The
// simulator and the emulator instantiate background traffic through it, so
// both read the same windows from a scenario.
func (b *Background) Sources(add func(src Background, w traffic.Window) error) error {
	var stop clock.Time
	if b.Stop.IsSet() {
		stop = clock.Time(b.Stop.V)
	}
	if b.Type != "sequence" {
		return add(*b, traffic.Window{Start: clock.Time(b.Start.V), Stop: stop})
	}
	for _, part := range b.Sequence {
		w := traffic.Window{Start: clock.Time(b.Start.V), Period: b.Period.V, From: part.Start.V, To: part.Stop.V, Stop: stop}
		if err := add(part, w); err != nil {
			return err
		}
	}
	return nil
}
