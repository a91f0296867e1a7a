package deepcc

import (
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
)

// TestLinkScenarioCarriesProfile: a link's profile reaches its runs'
// scenarios (deepcc eval --profile), and an unknown one is refused by the
// scenario's validation, naming the field.
func TestLinkScenarioCarriesProfile(t *testing.T) {
	l := Link{Name: "fixed", Rate: 12 * units.Mbps, Delay: 20 * time.Millisecond, Queue: 100, Capacity: 12 * units.Mbps, Profile: scenario.ProfileLinux}
	s, err := l.Scenario(1, time.Second, scenario.CC{Name: "cubic"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Profile != scenario.ProfileLinux {
		t.Errorf("profile %q, want linux", s.Profile)
	}
	if p := s.WithProfile(); p.Flows[0].CC.Params["linux"] != 1 || p.Transport.LostRetransmissions != "rack" {
		t.Errorf("the linux profile did not apply: %+v %+v", p.Flows[0].CC, p.Transport)
	}
	l.Profile = "kernel"
	if _, err := l.Scenario(1, time.Second, scenario.CC{Name: "cubic"}); err == nil {
		t.Error("an unknown profile was accepted")
	}
}
