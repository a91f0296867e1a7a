package racebuild

import (
	"runtime/debug"
	"testing"
)

// TestEnabledMatchesBuild: the constant agrees with the -race setting the
// toolchain records in the binary's build information.
func TestEnabledMatchesBuild(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information in this binary")
	}
	race := false
	for _, s := range info.Settings {
		if s.Key == "-race" {
			race = s.Value == "true"
		}
	}
	if race != Enabled {
		t.Fatalf("Enabled = %v, but the binary was built with -race=%v", Enabled, race)
	}
}
