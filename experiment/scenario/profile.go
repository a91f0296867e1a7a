package scenario

// ProfileLinux is the profile that selects every Linux 6.18 behaviour the
// simulator offers as an option (docs/fidelity.md, "Linux's behaviours
// that are options").
const ProfileLinux = "linux"

// linuxControllers are the controllers with a "linux" parameter (Linux's
// arithmetic and filters: cc/cubic, cc/bbr).
var linuxControllers = map[string]bool{"cubic": true, "bbr": true}

// WithProfile returns the scenario its profile describes. With profile
// linux it is a copy in which what the scenario leaves unset takes Linux's
// choice: transport.lost_retransmissions rack, transport.receive_window
// linux, and the linux parameter 1 for CUBIC and BBR, measured and
// background flows alike. What the scenario sets (scenario-wide or per
// flow) is kept, so a flow can still opt out. Any other profile returns s
// itself. The simulator applies it when it builds a network; the
// emulator's kernel flows are Linux's own and take no parameters.
func (s *Scenario) WithProfile() *Scenario {
	if s.Profile != ProfileLinux {
		return s
	}
	c := s.Clone()
	if c.Transport.LostRetransmissions == "" {
		c.Transport.LostRetransmissions = "rack"
	}
	if c.Transport.ReceiveWindow == "" {
		c.Transport.ReceiveWindow = "linux"
	}
	for i := range c.Flows {
		linuxParam(&c.Flows[i].CC)
	}
	for i := range c.Background {
		linuxParam(&c.Background[i].CC)
	}
	return c
}

func linuxParam(cc *CC) {
	if !linuxControllers[cc.Name] {
		return
	}
	if _, set := cc.Params["linux"]; set {
		return
	}
	if cc.Params == nil {
		cc.Params = map[string]float64{}
	}
	cc.Params["linux"] = 1
}
