package scenario_test

import (
	"strings"
	"testing"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment/scenario"
)

// TestLinuxProfile: profile linux fills in Linux's choices where the
// scenario leaves them unset (the scenario-wide transport, its pacing
// PRR and loss probe timing among them, CUBIC's and BBR's linux parameter on measured and
// background flows), keeps what it sets, leaves controllers without the
// parameter (Vegas) and the original scenario alone, and the default
// profile changes nothing.
func TestLinuxProfile(t *testing.T) {
	const body = `
name: p
bottleneck: {rate: 10Mbps, delay: 10ms}
transport: {receive_window: none}
flows:
  - {name: a, cc: cubic, transport: {prr: rfc6937}}
  - {name: b, cc: {name: bbr, linux: 0}}
  - {name: c, cc: vegas}
  - {name: d, cc: newreno}
background:
  - {name: web, type: tcp, cc: bbr}
`
	s, err := scenario.Parse([]byte("profile: linux\n"+body), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := s.WithProfile()
	if p == s {
		t.Fatal("profile linux returned the scenario itself, not a copy")
	}
	if p.Transport.LostRetransmissions != "rack" || p.Transport.ReceiveWindow != "none" || p.Transport.Pacing != "linux" || p.Transport.RecoveryStart != "linux" {
		t.Errorf("transport: lost_retransmissions %q (want rack), receive_window %q (want the scenario's none), pacing %q, recovery_start %q (want linux)", p.Transport.LostRetransmissions, p.Transport.ReceiveWindow, p.Transport.Pacing, p.Transport.RecoveryStart)
	}
	if p.Transport.PRR != "linux" || p.Transport.TLPTimer != "linux" {
		t.Errorf("transport.prr %q, tlp_timer %q, want linux", p.Transport.PRR, p.Transport.TLPTimer)
	}
	if got := p.Flows[0].Transport.PRR; got != "rfc6937" {
		t.Errorf("flow a's own prr: %q, want the scenario's rfc6937", got)
	}
	if got := p.Flows[0].CC.Params["linux"]; got != 1 {
		t.Errorf("cubic: linux = %v, want 1", got)
	}
	if got := p.Flows[1].CC.Params["linux"]; got != 0 {
		t.Errorf("bbr with linux: 0 set: got %v, want the scenario's 0", got)
	}
	if _, ok := p.Flows[2].CC.Params["linux"]; ok {
		t.Errorf("vegas got a linux parameter: %v", p.Flows[2].CC.Params)
	}
	if got := p.Flows[3].CC.Params["linux"]; got != 1 {
		t.Errorf("newreno: linux = %v, want 1", got)
	}
	if got := p.Background[0].CC.Params["linux"]; got != 1 {
		t.Errorf("background bbr: linux = %v, want 1", got)
	}
	if s.Transport.LostRetransmissions != "" || s.Flows[0].CC.Params != nil {
		t.Errorf("the original scenario was changed: %+v, %v", s.Transport, s.Flows[0].CC.Params)
	}
	d, err := scenario.Parse([]byte(body), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d.WithProfile() != d {
		t.Error("the default profile made a copy")
	}
	if _, err := scenario.Parse([]byte("profile: kernel\n"+body), "p.yaml"); err == nil || !strings.Contains(err.Error(), "profile") || !strings.Contains(err.Error(), "default, linux or linux-host") {
		t.Errorf("profile: kernel gave %v, want an error naming profile and what is accepted", err)
	}
}

// TestLinuxHostProfile: profile linux-host is profile linux plus Linux's
// RTT sample, its 250 Hz timer wheel and its SACK compression where the
// scenario leaves them unset, keeping what it sets; profile linux sets
// none of them.
func TestLinuxHostProfile(t *testing.T) {
	const body = `
name: p
bottleneck: {rate: 10Mbps, delay: 10ms}
flows:
  - {name: a, cc: cubic}
`
	for _, c := range []struct {
		head, srtt string
		hz         int
		compress   bool
	}{
		{"profile: linux-host\n", "oldest", 250, true},
		{"profile: linux-host\ntransport: {srtt_sample: newest, kernel_hz: 1000, sack_compression: false}\n", "newest", 1000, false},
		{"profile: linux-host\ntransport: {kernel_hz: 0}\n", "oldest", 0, true},
		{"profile: linux\n", "", 0, false},
	} {
		s, err := scenario.Parse([]byte(c.head+body), "p.yaml")
		if err != nil {
			t.Fatal(err)
		}
		p := s.WithProfile()
		hz := 0
		if p.Transport.KernelHZ != nil {
			hz = *p.Transport.KernelHZ
		}
		compress := p.Transport.SACKCompression != nil && *p.Transport.SACKCompression
		if p.Transport.SRTTSample != c.srtt || hz != c.hz || compress != c.compress {
			t.Errorf("%q: srtt_sample %q, kernel_hz %d, sack_compression %v; want %q, %d, %v", c.head, p.Transport.SRTTSample, hz, compress, c.srtt, c.hz, c.compress)
		}
		if p.Transport.LostRetransmissions != "rack" || p.Transport.ReceiveWindow != "linux" || p.Flows[0].CC.Params["linux"] != 1 {
			t.Errorf("%q: not profile linux's choices: %+v, %v", c.head, p.Transport, p.Flows[0].CC.Params)
		}
	}
}
