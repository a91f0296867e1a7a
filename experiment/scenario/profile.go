package scenario

import "github.com/cclab/cclab/cc"

// ProfileLinux is the profile that selects the Linux 6.18 behaviours the
// simulator offers as options and that bring it closer to the kernel
// together (docs/fidelity.md, "Linux's behaviours that are options";
// transport.srtt_sample, transport.timeout_min, transport.rack_timer and
// transport.kernel_hz are options outside it).
const ProfileLinux = "linux"

// ProfileLinuxHost is ProfileLinux and three more of Linux's own rules:
// the RTO estimator's RTT sample from the oldest segment an ACK newly
// acknowledges (transport.srtt_sample oldest), TCP's timers on the
// kernel's timer wheel at 250 Hz (transport.kernel_hz 250; Debian's
// kernel, the project's reference host; the wheel's phase drawn per run,
// transport.kernel_phase) and the receiver's SACK
// compression (transport.sack_compression true). With many flows sharing
// a queue it is the profile closest to the kernel measured through the
// emulator (docs/fidelity.md, "A profile for the host"); ProfileLinux
// keeps the figures the papers' studies were checked with.
const ProfileLinuxHost = "linux-host"

// KnownProfile reports whether p names a profile: "" or "default",
// ProfileLinux or ProfileLinuxHost.
func KnownProfile(p string) bool {
	switch p {
	case "", "default", ProfileLinux, ProfileLinuxHost:
		return true
	}
	return false
}

// ProfileNames is what KnownProfile accepts, for error messages.
const ProfileNames = "default, linux or linux-host"

// linuxHostHZ is the timer wheel's rate in ProfileLinuxHost.
const linuxHostHZ = 250

// WithProfile returns the scenario its profile describes. With profile
// linux it is a copy in which what the scenario leaves unset takes Linux's
// choice: transport.lost_retransmissions rack, transport.receive_window
// linux, transport.pacing linux, transport.recovery_start linux,
// transport.prr linux (since 2026-12-07), transport.tlp_timer linux (since
// 2026-12-07, later), and the linux parameter 1 for
// CUBIC, BBR and NewReno, measured and background flows alike; profile
// linux-host adds transport.srtt_sample oldest, transport.kernel_hz 250
// and transport.sack_compression true. What the scenario sets
// (scenario-wide or per flow) is kept, so a flow can still opt out
// (kernel_hz: 0 for exact timers, sack_compression: false). Any other
// profile returns s itself. The simulator applies it when it
// builds a network; the emulator's kernel flows are Linux's own and take
// no parameters.
func (s *Scenario) WithProfile() *Scenario {
	if s.Profile != ProfileLinux && s.Profile != ProfileLinuxHost {
		return s
	}
	c := s.Clone()
	if c.Transport.LostRetransmissions == "" {
		c.Transport.LostRetransmissions = "rack"
	}
	if c.Transport.ReceiveWindow == "" {
		c.Transport.ReceiveWindow = "linux"
	}
	if c.Transport.Pacing == "" {
		c.Transport.Pacing = "linux"
	}
	if c.Transport.RecoveryStart == "" {
		c.Transport.RecoveryStart = "linux"
	}
	if c.Transport.PRR == "" {
		c.Transport.PRR = "linux"
	}
	if c.Transport.TLPTimer == "" {
		c.Transport.TLPTimer = "linux"
	}
	if s.Profile == ProfileLinuxHost {
		if c.Transport.SRTTSample == "" {
			c.Transport.SRTTSample = "oldest"
		}
		if c.Transport.KernelHZ == nil {
			hz := linuxHostHZ
			c.Transport.KernelHZ = &hz
		}
		if c.Transport.SACKCompression == nil {
			on := true
			c.Transport.SACKCompression = &on
		}
	}
	for i := range c.Flows {
		linuxParam(&c.Flows[i].CC)
	}
	for i := range c.Background {
		linuxParam(&c.Background[i].CC)
	}
	return c
}

// linuxParam sets the "linux" parameter to 1 for a controller that has one
// (in the registry: CUBIC's arithmetic, BBR's filters, NewReno's whole
// segments) and leaves it unset.
func linuxParam(c *CC) {
	spec, err := cc.Lookup(c.Name)
	if err != nil {
		return
	}
	if _, ok := spec.Param("linux"); !ok {
		return
	}
	if _, set := c.Params["linux"]; set {
		return
	}
	if c.Params == nil {
		c.Params = map[string]float64{}
	}
	c.Params["linux"] = 1
}
