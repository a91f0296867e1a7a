package scenario

import (
	"fmt"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/netsim/traffic"
)

// Source is one background traffic source of a scenario: an entry, a
// part of a sequence, or one of Count copies of either.
type Source struct {
	// Name is the entry's (or part's) name, with "-k" (k from 1) when it
	// has Count > 1 copies. Results, captures and random streams
	// ("background/" + Name) key on it, in the simulator and the
	// emulator alike, so that their outputs line up.
	Name string
	// Group is the background entry's name (the sequence's, for a part).
	Group string
	// Spec is the entry or the sequence part that describes the source.
	Spec Background
	// Window is when the source is active.
	Window traffic.Window
}

// BackgroundSources calls add for every background source of the
// scenario, in the file's order, and stops at the first error, which it
// prefixes with the entry's name. The simulator and the emulator
// instantiate background traffic through it, so both read the same
// sources, names and windows from a scenario.
func (s *Scenario) BackgroundSources(add func(Source) error) error {
	for i := range s.Background {
		b := &s.Background[i]
		err := b.Sources(func(spec Background, w traffic.Window) error {
			for k := range spec.Count {
				name := spec.Name
				if spec.Count > 1 {
					name = fmt.Sprintf("%s-%d", spec.Name, k+1)
				}
				if err := add(Source{Name: name, Group: b.Name, Spec: spec, Window: w}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("background %s: %w", b.Name, err)
		}
	}
	return nil
}

// Sources calls add for each source of background entry b with the window
// in which it is active: every part of a sequence, repeating with the
// sequence's period, or b itself. It stops at the first error.
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
