package emu

import (
	"fmt"
	"strings"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/experiment/scenario"
)

// kernelECN returns the net.ipv4.tcp_ecn the sending namespace needs:
// true (1, request ECN on every connection) when the kernel-TCP flows are
// ECN-capable, false (leave Linux's default) when none is. tcp_ecn is per
// network namespace and every kernel-TCP sender of an emulation shares
// the sending one, so the measured flows (each by its own transport.ecn,
// else the scenario's) and the background TCP sources (the scenario's
// transport.ecn) must agree; the error names the flows on each side.
// Flows of another stack, and controllers that turn ECN on themselves,
// do not count.
func kernelECN(s *scenario.Scenario) (bool, error) {
	var on, off []string
	for i := range s.Flows {
		f := &s.Flows[i]
		if (f.Stack != "" && f.Stack != "kernel") || cc.NeedsECN(f.CC.Name) {
			continue
		}
		name := fmt.Sprintf("flows[%d] (%s)", i, f.Name)
		if s.FlowECN(f) {
			on = append(on, name)
		} else {
			off = append(off, name)
		}
	}
	scenarioWide := s.Transport.ECN != nil && *s.Transport.ECN
	backgroundTCP(s.Background, "background", func(p string, b *scenario.Background) {
		if cc.NeedsECN(b.CC.Name) {
			return
		}
		name := fmt.Sprintf("%s (%s, transport.ecn of the scenario)", p, b.Name)
		if scenarioWide {
			on = append(on, name)
		} else {
			off = append(off, name)
		}
	})
	if len(on) > 0 && len(off) > 0 {
		return false, fmt.Errorf("transport.ecn: the emulator's kernel-TCP senders share one network namespace and so one net.ipv4.tcp_ecn, but ECN is on for %s and off for %s; give every kernel-TCP flow and background TCP source the same transport.ecn (a flow's own transport.ecn overrides the scenario's)",
			strings.Join(on, ", "), strings.Join(off, ", "))
	}
	return len(on) > 0, nil
}
