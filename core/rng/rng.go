// Package rng derives independent, reproducible random streams from one
// scenario seed. Each random component (a loss model, a traffic source, a
// trace offset) asks for its own stream by name, so adding a flow or a loss
// model does not change the draws of any other component.
package rng

import (
	"hash/fnv"
	"math/rand/v2"
)

// Source derives named streams from a seed.
type Source struct {
	seed uint64
}

// New returns a Source for the scenario seed.
func New(seed uint64) Source { return Source{seed: seed} }

// Seed returns the scenario seed.
func (s Source) Seed() uint64 { return s.seed }

// Stream returns a generator for the named component. The same seed and
// name always give the same sequence; different names give streams that are
// independent for practical purposes (PCG seeded from a 64-bit FNV-1a hash of
// the name, mixed with the seed by SplitMix64).
func (s Source) Stream(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	k := h.Sum64()
	return rand.New(rand.NewPCG(splitmix(s.seed^k), splitmix(k+0x9e3779b97f4a7c15)))
}

// splitmix is SplitMix64's finaliser, used to decorrelate nearby seeds
// (seed 1 and seed 2 must not give similar streams).
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
