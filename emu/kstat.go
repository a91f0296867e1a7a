package emu

import (
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"

	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/experiment"
)

// KernelCounters are the kernels' own TCP counters over a run: the
// TcpExt and Tcp lines of /proc/net/netstat and /proc/net/snmp in each of
// the emulation's namespaces, which hold its sockets and nothing else, so
// the counts are the run's (loss probes, timeouts, recoveries that Linux
// counts and tcp_info does not break down). Only counters that changed are
// kept, keyed "TcpExt.TCPLossProbes", "Tcp.RetransSegs" and so on.
type KernelCounters struct {
	// Sender is the senders' namespace (data out, ACKs in).
	Sender map[string]int64 `json:"sender"`
	// Receiver is the receivers' namespace.
	Receiver map[string]int64 `json:"receiver"`
}

// parseMIB parses the /proc/net/netstat and /proc/net/snmp format: pairs
// of lines "Group: Name1 Name2 ..." and "Group: 1 2 ...". Only the groups
// in keep are returned, as "Group.Name". name is the file, for errors.
func parseMIB(name string, data []byte, keep map[string]bool) (map[string]int64, error) {
	out := map[string]int64{}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines)%2 != 0 {
		return nil, fmt.Errorf("%s: %d lines, want header and value lines in pairs", name, len(lines))
	}
	for i := 0; i < len(lines); i += 2 {
		hg, hrest, ok1 := strings.Cut(lines[i], ":")
		vg, vrest, ok2 := strings.Cut(lines[i+1], ":")
		if !ok1 || !ok2 || hg != vg {
			return nil, fmt.Errorf("%s:%d: want \"Group: names\" then \"Group: values\" for the same group, got %q and %q", name, i+1, trim(lines[i]), trim(lines[i+1]))
		}
		names, values := strings.Fields(hrest), strings.Fields(vrest)
		if len(names) != len(values) {
			return nil, fmt.Errorf("%s:%d: group %s has %d names and %d values", name, i+1, hg, len(names), len(values))
		}
		if !keep[hg] {
			continue
		}
		for k, n := range names {
			v, err := strconv.ParseInt(values[k], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s.%s: %q is not an integer", name, i+2, hg, n, trim(values[k]))
			}
			out[hg+"."+n] = v
		}
	}
	return out, nil
}

// trim shortens s for an error message.
func trim(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// tcpGroups are the MIB groups KernelCounters keeps.
var tcpGroups = map[string]bool{"TcpExt": true, "Tcp": true}

// readNetFile reads ns's /proc/thread-self/net/<name> and hands it, named
// for errors, to parse. /proc/thread-self follows the reading thread,
// which NS.Do has moved into the namespace (/proc/self would follow the
// process's first thread).
func readNetFile(ns *netns.NS, name string, parse func(file string, b []byte) error) error {
	return ns.Do(func() error {
		f := "/proc/thread-self/net/" + name
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		return parse(ns.Name+":"+f, b)
	})
}

// readTCPCounters reads ns's TCP counters.
func readTCPCounters(ns *netns.NS) (map[string]int64, error) {
	out := map[string]int64{}
	for _, name := range []string{"netstat", "snmp"} {
		err := readNetFile(ns, name, func(file string, b []byte) error {
			m, err := parseMIB(file, b, tcpGroups)
			maps.Copy(out, m)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readPairCounters reads the TCP counters of both of pair's namespaces.
func readPairCounters(pair *netns.Pair) (*KernelCounters, error) {
	snd, err := readTCPCounters(pair.Snd)
	if err != nil {
		return nil, err
	}
	rcv, err := readTCPCounters(pair.Rcv)
	if err != nil {
		return nil, err
	}
	return &KernelCounters{Sender: snd, Receiver: rcv}, nil
}

// BackgroundOpensTCP reports whether a run's background opened TCP
// connections (bg's Flows). Those are kernel flows in the measured flows'
// namespaces, whose loss probes, recoveries, timeouts, lost
// retransmissions and compressed ACKs the namespace counters add to the
// measured flows', so the counters cannot stand for the measured flows
// of such a run: callers pass nil counters to the Run* totals instead,
// which then count only the flows that count their own.
func BackgroundOpensTCP(bg []experiment.BackgroundResult) bool {
	for _, b := range bg {
		if b.Flows > 0 {
			return true
		}
	}
	return false
}

// Recoveries returns the senders' tail loss probes and fast recoveries
// (TcpExt TCPLossProbes; TCPSackRecovery, plus TCPRenoRecovery without
// SACK, as tcp_enter_recovery counts them): kernel TCP's counts of what
// cclab's TCP reports per flow (FlowResult.LossProbes, FastRecoveries),
// for every TCP flow in the senders' namespace. A counter that did not
// change over the run is absent: 0.
func (c *KernelCounters) Recoveries() (probes, recoveries int64) {
	return c.Sender["TcpExt.TCPLossProbes"], c.Sender["TcpExt.TCPSackRecovery"] + c.Sender["TcpExt.TCPRenoRecovery"]
}

// RunRecoveries totals the loss probes and fast recoveries of a run's
// measured flows, the one rule bench/emu seeds -all and cclab compare
// share: each flow that counts its own (cclab's TCP, simulated or on
// UDP) adds them, and the kernel's namespace counters kc, when the run
// has them, stand for the flows that do not (kernel TCP; cclab's UDP flows
// never touch them). The counters also count any background TCP
// connection: callers leave them out for such runs (BackgroundOpensTCP).
// ok is false when some flow counts neither way: a simulated run whose
// flows do not all count, or an emulated one without counters.
func RunRecoveries(flows []experiment.FlowResult, kc *KernelCounters) (probes, recoveries int64, ok bool) {
	probes, ok1 := runTotal(flows, kc, func(f *experiment.FlowResult) *int64 { return f.LossProbes },
		func(c *KernelCounters) int64 { p, _ := c.Recoveries(); return p })
	recoveries, ok2 := runTotal(flows, kc, func(f *experiment.FlowResult) *int64 { return f.FastRecoveries },
		func(c *KernelCounters) int64 { _, v := c.Recoveries(); return v })
	return probes, recoveries, ok1 && ok2
}

// Timeouts returns the senders' first timeouts in fast recovery
// (TcpExt TCPSackRecoveryFail, plus TCPRenoRecoveryFail without SACK) and
// in the loss state (TCPLossFailures), as tcp_retransmit_timer counts
// them: kernel TCP's counts of what cclab's TCP reports per flow
// (FlowResult.RTOsInRecovery, RTOsInLoss), for every TCP flow in the
// senders' namespace. A counter that did not change is absent: 0.
func (c *KernelCounters) Timeouts() (inRecovery, inLoss int64) {
	return c.Sender["TcpExt.TCPSackRecoveryFail"] + c.Sender["TcpExt.TCPRenoRecoveryFail"], c.Sender["TcpExt.TCPLossFailures"]
}

// RunTimeouts totals the measured flows' first timeouts in fast recovery
// and in the loss state by RunRecoveries' rule.
func RunTimeouts(flows []experiment.FlowResult, kc *KernelCounters) (inRecovery, inLoss int64, ok bool) {
	inRecovery, ok1 := runTotal(flows, kc, func(f *experiment.FlowResult) *int64 { return f.RTOsInRecovery },
		func(c *KernelCounters) int64 { r, _ := c.Timeouts(); return r })
	inLoss, ok2 := runTotal(flows, kc, func(f *experiment.FlowResult) *int64 { return f.RTOsInLoss },
		func(c *KernelCounters) int64 { _, l := c.Timeouts(); return l })
	return inRecovery, inLoss, ok1 && ok2
}

// LostRetransmits returns the senders' retransmissions found lost in
// turn (TcpExt TCPLostRetransmit, tcp_mark_skb_lost): kernel TCP's count
// of what cclab's TCP reports per flow (FlowResult.LostRetransmits).
func (c *KernelCounters) LostRetransmits() int64 {
	return c.Sender["TcpExt.TCPLostRetransmit"]
}

// RunLostRetransmits totals the measured flows' lost retransmissions by
// RunRecoveries' rule.
func RunLostRetransmits(flows []experiment.FlowResult, kc *KernelCounters) (n int64, ok bool) {
	return runTotal(flows, kc, func(f *experiment.FlowResult) *int64 { return f.LostRetransmits }, (*KernelCounters).LostRetransmits)
}

// AcksCompressed returns the receivers' ACKs saved by SACK compression
// (TcpExt TCPAckCompressed), every TCP flow in the receivers' namespace.
func (c *KernelCounters) AcksCompressed() int64 {
	return c.Receiver["TcpExt.TCPAckCompressed"]
}

// RunAcksCompressed totals the ACKs a run's measured flows' receivers
// saved by SACK compression: each flow that compresses adds its own
// (FlowResult.AcksCompressed), and the kernel's receiver counters kc,
// when the run has them, add kernel TCP's. A flow that reports none
// saved none: cclab's receivers compress only with
// transport.sack_compression, and its UDP flows never touch the
// kernel's counters.
func RunAcksCompressed(flows []experiment.FlowResult, kc *KernelCounters) int64 {
	var n int64
	for i := range flows {
		if c := flows[i].AcksCompressed; c != nil {
			n += *c
		}
	}
	if kc != nil {
		n += kc.AcksCompressed()
	}
	return n
}

// runTotal adds a per-flow count over flows: own gives a flow's (nil if it
// does not count it), and kernel the namespace counters' total, which
// stands for every flow that does not; ok is false when some flow does
// not count it and there are no counters.
func runTotal(flows []experiment.FlowResult, kc *KernelCounters, own func(*experiment.FlowResult) *int64, kernel func(*KernelCounters) int64) (n int64, ok bool) {
	uncounted := false
	for i := range flows {
		x := own(&flows[i])
		if x == nil {
			uncounted = true
			continue
		}
		n += *x
	}
	if uncounted {
		if kc == nil {
			return 0, false
		}
		n += kernel(kc)
	}
	return n, true
}

// since returns the counters that changed from before to c.
func (c *KernelCounters) since(before *KernelCounters) *KernelCounters {
	return &KernelCounters{Sender: counterDelta(before.Sender, c.Sender), Receiver: counterDelta(before.Receiver, c.Receiver)}
}

// counterDelta returns after - before for the counters that changed.
// Tcp.CurrEstab is a gauge, not a count, and is left out.
func counterDelta(before, after map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range after {
		if k == "Tcp.CurrEstab" {
			continue
		}
		if x := v - before[k]; x != 0 {
			d[k] = x
		}
	}
	return d
}

// parseTxDrops returns the transmit drops of device dev in name's
// contents, the /proc/net/dev format: two header lines, then one line per
// device, "dev: " and eight receive then eight transmit counters, the
// transmit drops the twelfth.
func parseTxDrops(name string, data []byte, dev string) (int64, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i, l := range lines {
		d, rest, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(d) != dev || i < 2 {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 16 {
			return 0, fmt.Errorf("%s:%d: device %s has %d counters, want 16 (8 receive, 8 transmit)", name, i+1, dev, len(f))
		}
		v, err := strconv.ParseInt(f[11], 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("%s:%d: %s's transmit drops: %q is not a count", name, i+1, dev, trim(f[11]))
		}
		return v, nil
	}
	return 0, fmt.Errorf("%s: no line for device %s", name, dev)
}

// readDeviceDrops returns the transmit drops of the TUN devices of both of
// pair's namespaces together (Accounting.DeviceDrops).
func readDeviceDrops(pair *netns.Pair) (int64, error) {
	var sum int64
	for _, ns := range []*netns.NS{pair.Snd, pair.Rcv} {
		err := readNetFile(ns, "dev", func(file string, b []byte) error {
			n, err := parseTxDrops(file, b, netns.Device)
			sum += n
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return sum, nil
}
