package emu

import (
	"fmt"
	"time"

	"github.com/cclab/cclab/experiment/scenario"
)

// Unapplied lists the fields a validated scenario sets that the emulator's
// kernel path does not apply, each as "path: why" (a flow's as
// flows[i].transport.min_rto), in the scenario's order. The emulator runs
// such a scenario anyway (`cclab emu` and `cclab compare` print the list
// as warnings before the run): its kernel TCP behaves as Linux does
// whatever the field says, so where the simulator's side follows the field
// the two sides differ by construction.
//
// Supported refuses what real endpoints cannot run at all; this lists what
// they run differently. What the emulator does apply is not listed:
// transport.sack (false: net.ipv4.tcp_sack=0 in both namespaces),
// transport.ecn, transport.nagle, flows' loss, loss_hops and extra_delay,
// the bottleneck and its schedule, the background.
//
// A value that describes what Linux itself does is not listed either,
// since the kernel does it: the transport choices whose value is "linux"
// (transport.prr, pacing, rack_timer and the others),
// lost_retransmissions rack, srtt_sample oldest, send_buffer linux,
// sack_compression true, a positive kernel_hz and kernel_phase (models of
// the kernel's own timer wheel), delayed_ack true, handshake_ack true,
// and the kernel's defaults (mss 1448, header 52B, min_rto 200ms,
// initial_rto 1s, max_rto 120s, dupthresh 3). For the same reason
// `profile: linux` and `profile: linux-host` are never listed: they fill
// the fields the scenario leaves unset with exactly those Linux values, on
// the simulator's side only (scenario.WithProfile), to bring the
// simulator to the kernel, which behaves so already.
//
// Transport fields are checked only where kernel TCP runs: the scenario's
// transport when a measured flow uses the kernel stack or the background
// opens TCP connections, a flow's own transport when the flow does. A
// `stack: cclab` flow runs cclab's own transport, which takes them.
func Unapplied(s *scenario.Scenario) []string {
	var out []string
	add := func(path, why string) { out = append(out, path+": "+why) }

	b := &s.Bottleneck
	if b.SerializeAcks {
		add("bottleneck.serialize_acks", "simulator-only (the emulator's reverse path adds propagation delay only; ACKs are not serialised)")
	}
	if b.AckJitter.V > 0 {
		add("bottleneck.ack_jitter", "simulator-only (the emulator's kernel hosts have their own timing noise)")
	}
	if b.AckReadDelay.V > 0 {
		add("bottleneck.ack_read_delay", "simulator-only (the emulator's receivers are Linux's own, which acknowledge when they do)")
	}
	if b.AckReadShare != nil {
		add("bottleneck.ack_read_share", "simulator-only (the emulator's receivers are Linux's own, which acknowledge when they do)")
	}

	kernelFlow := false
	for i := range s.Flows {
		if isKernelStack(s.Flows[i].Stack) {
			kernelFlow = true
		}
	}
	bgTCP := false
	backgroundTCP(s.Background, "background", func(string, *scenario.Background) { bgTCP = true })
	if kernelFlow || bgTCP {
		transportUnapplied(&s.Transport, "transport", add)
	}
	sackOn := s.Transport.SACK == nil || *s.Transport.SACK
	for i := range s.Flows {
		f := &s.Flows[i]
		if !isKernelStack(f.Stack) || f.Transport == nil {
			continue
		}
		p := fmt.Sprintf("flows[%d].transport", i)
		if f.Transport.SACK != nil && *f.Transport.SACK != sackOn {
			add(p+".sack", fmt.Sprintf("not applied (net.ipv4.tcp_sack is per namespace, shared by every kernel flow: the scenario's transport.sack, %v, applies)", sackOn))
		}
		transportUnapplied(f.Transport, p, add)
	}
	return out
}

func isKernelStack(stack string) bool { return stack == "" || stack == "kernel" }

// The kernel's own values of the transport's settings (Linux 6.18 with
// the emulator's 1500-byte TUN devices and TCP timestamps).
const (
	kernelMSS        = 1448
	kernelHeader     = 52
	kernelSynOptions = 8
	kernelMinRTO     = 200 * time.Millisecond
	kernelInitialRTO = time.Second
	kernelMaxRTO     = 120 * time.Second
	kernelTimeoutMin = 2 * time.Millisecond
	kernelDupThresh  = 3
)

// transportUnapplied lists a transport section's fields (at path p) that
// kernel TCP does not apply.
func transportUnapplied(t *scenario.Transport, p string, add func(path, why string)) {
	if t.MSS.IsSet() && t.MSS.V != kernelMSS {
		add(p+".mss", fmt.Sprintf("not applied (the kernel's MSS follows the TUN devices' 1500-byte MTU: %d bytes with timestamps)", kernelMSS))
	}
	if t.Header.IsSet() && t.Header.V != kernelHeader {
		add(p+".header", fmt.Sprintf("simulator-only (the kernel's packets carry their real headers: %d bytes with timestamps)", kernelHeader))
	}
	if t.SynOptions.IsSet() && t.SynOptions.V != kernelSynOptions {
		add(p+".syn_options", "simulator-only (the kernel's SYNs carry its own options)")
	}
	if t.DelAckTimeout.IsSet() {
		add(p+".delack_timeout", "not applied (the kernel's delayed-ACK timeout is its own, adapted to the RTT)")
	}
	if t.MinRTO.IsSet() && t.MinRTO.V != kernelMinRTO {
		add(p+".min_rto", fmt.Sprintf("not applied (the kernel's minimum RTO is its own %v)", kernelMinRTO))
	}
	if t.InitialRTO.IsSet() && t.InitialRTO.V != kernelInitialRTO {
		add(p+".initial_rto", fmt.Sprintf("not applied (the kernel's initial RTO is %v)", kernelInitialRTO))
	}
	if t.MaxRTO.IsSet() && t.MaxRTO.V != kernelMaxRTO {
		add(p+".max_rto", fmt.Sprintf("not applied (the kernel's maximum RTO is %v)", kernelMaxRTO))
	}
	if t.TimeoutMin.IsSet() && t.TimeoutMin.V != kernelTimeoutMin {
		add(p+".timeout_min", "not applied (a model of the kernel's TCP_TIMEOUT_MIN; the kernel uses its own)")
	}
	if t.KernelHZ != nil && *t.KernelHZ == 0 {
		add(p+".kernel_hz", "simulator-only (0: exact timer deadlines; the kernel's timers run on its own timer wheel)")
	}
	if t.DupThresh != 0 && t.DupThresh != kernelDupThresh {
		add(p+".dupthresh", "not applied (the kernel's reordering threshold is net.ipv4.tcp_reordering, 3, and adapts)")
	}
	if t.SACKTimeout.IsSet() {
		add(p+".sack_timeout", "simulator-only (Mockets' timer-driven acknowledgements; the kernel acknowledges as TCP does)")
	}
	if t.RecvWindow.IsSet() {
		add(p+".recv_window", "simulator-only (the kernel autotunes its receive window)")
	}
	if t.PendingQueue.IsSet() {
		add(p+".pending_queue", "simulator-only (the kernel autotunes its send buffer)")
	}
	if t.SendBuffer == "none" {
		add(p+".send_buffer", "simulator-only (none: no bound; the kernel autotunes its send buffer, which send_buffer: linux models)")
	}
	if t.RTO == "rfc6298" {
		add(p+".rto", "simulator-only (the kernel's RTO is SRTT + max(4 RTTVAR, min RTO): linux)")
	}
	// Booleans whose set value (on: true) the kernel does not follow.
	for _, b := range []struct {
		name string
		v    *bool
		on   bool
		why  string
	}{
		{"delayed_ack", t.DelayedAck, false, "not applied (the kernel's receivers delay ACKs as Linux does)"},
		{"sack_compression", t.SACKCompression, false, "not applied (the kernel's receivers compress SACKs, net.ipv4.tcp_comp_sack_*)"},
		{"quick_ack", t.QuickAck, false, "not applied (the kernel's receivers use Linux's quick-ACK mode)"},
		{"ack_first", t.AckFirst, true, "simulator-only (ns-3's receiver; the kernel's quick-ACK mode acknowledges a connection's start)"},
		{"handshake_ack", t.HandshakeAck, false, "simulator-only (the kernel's client sends the handshake's final ACK)"},
		{"tlp", t.TLP, false, "not applied (the kernel sends tail loss probes)"},
		{"frto", t.FRTO, false, "not applied (the kernel's F-RTO, net.ipv4.tcp_frto, is on)"},
		{"rack", t.RACK, false, "not applied (the kernel's RACK loss detection is on)"},
		{"packet_timers", t.PacketTimers, true, "simulator-only (Mockets' per-packet timers; the kernel keeps one retransmission timer)"},
	} {
		if b.v != nil && *b.v == b.on {
			add(p+"."+b.name, b.why)
		}
	}
	for _, c := range []struct{ name, v, linux string }{
		{"lost_retransmissions", t.LostRetransmissions, "rack"},
		{"srtt_sample", t.SRTTSample, "oldest"},
		{"prr", t.PRR, "linux"},
		{"rack_timer", t.RACKTimer, "linux"},
		{"pacing", t.Pacing, "linux"},
		{"recovery_start", t.RecoveryStart, "linux"},
		{"window_growth", t.WindowGrowth, "linux"},
		{"cwnd_limited", t.CwndLimited, "linux"},
		{"tlp_timer", t.TLPTimer, "linux"},
		{"receive_window", t.ReceiveWindow, "linux"},
	} {
		if c.v != "" && c.v != c.linux {
			add(p+"."+c.name, fmt.Sprintf("simulator-only (%s; the kernel behaves as %s: %s)", c.v, c.name, c.linux))
		}
	}
}
