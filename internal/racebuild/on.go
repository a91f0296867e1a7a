//go:build race

package racebuild

// Enabled is true in a build with the race detector.
const Enabled = true
