package network

import "github.com/cclab/cclab/core/units"

// ArrivalsOffered returns the offered load of each arrivals entry, by its
// name: mean flow size over mean inter-arrival time, summed over its
// replicas. A tcp entry has none (it sends what its controller allows)
// and is absent.
func (n *Network) ArrivalsOffered() map[string]units.Bandwidth {
	out := map[string]units.Bandwidth{}
	for _, sp := range n.spawners {
		if sp.b.Type != "arrivals" || sp.gap <= 0 {
			continue
		}
		mean := float64(sp.b.Size.V)
		if sp.sizes != nil {
			mean = sp.sizes.Mean()
		}
		out[sp.group] += units.Bandwidth(mean * 8 / sp.gap.Seconds())
	}
	return out
}
