package emu

import (
	"strings"
	"testing"

	"github.com/cclab/cclab/experiment"
)

const sampleMIB = `TcpExt: SyncookiesSent TCPLossProbes TCPTimeouts
TcpExt: 0 162 142
IpExt: InOctets OutOctets
IpExt: 3144376 138600388
Tcp: RtoAlgorithm MaxConn CurrEstab RetransSegs
Tcp: 1 -1 100 10235
`

// TestParseMIB: the kept groups' counters by "Group.Name", the others
// skipped, negative values read.
func TestParseMIB(t *testing.T) {
	got, err := parseMIB("x", []byte(sampleMIB), tcpGroups)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"TcpExt.SyncookiesSent": 0, "TcpExt.TCPLossProbes": 162, "TcpExt.TCPTimeouts": 142,
		"Tcp.RtoAlgorithm": 1, "Tcp.MaxConn": -1, "Tcp.CurrEstab": 100, "Tcp.RetransSegs": 10235}
	if len(got) != len(want) {
		t.Fatalf("%d counters %v, want %d", len(got), got, len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
}

// TestCounterDelta: only what changed, and not the established-connection
// gauge.
func TestCounterDelta(t *testing.T) {
	d := counterDelta(map[string]int64{"TcpExt.TCPTimeouts": 10, "Tcp.CurrEstab": 0, "Tcp.RetransSegs": 5},
		map[string]int64{"TcpExt.TCPTimeouts": 152, "Tcp.CurrEstab": 100, "Tcp.RetransSegs": 5, "TcpExt.TCPLossProbes": 3})
	if len(d) != 2 || d["TcpExt.TCPTimeouts"] != 142 || d["TcpExt.TCPLossProbes"] != 3 {
		t.Errorf("delta %v, want TCPTimeouts 142 and TCPLossProbes 3 only", d)
	}
}

// TestParseMIBNamesTheBadLine: malformed input is refused with the file,
// line and what is wrong.
func TestParseMIBNamesTheBadLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Tcp: A B\n", "x: 1 lines, want header and value lines in pairs"},
		{"Tcp: A B\nTcpExt: 1 2\n", "x:1: want \"Group: names\" then \"Group: values\" for the same group"},
		{"Tcp: A B\nTcp: 1\n", "x:1: group Tcp has 2 names and 1 values"},
		{"Tcp: A B\nTcp: 1 z\n", "x:2: Tcp.B: \"z\" is not an integer"},
		{"Tcp A\nTcp 1\n", "x:1: want \"Group: names\""},
	} {
		if _, err := parseMIB("x", []byte(c.in), tcpGroups); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

// FuzzParseMIB: any input gives counters or an error, never a panic, and
// every counter named is of a kept group.
func FuzzParseMIB(f *testing.F) {
	f.Add([]byte(sampleMIB))
	f.Add([]byte("Tcp: A\nTcp: 9223372036854775807\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseMIB("fuzz", data, tcpGroups)
		if err != nil {
			return
		}
		for k := range got {
			if !strings.HasPrefix(k, "Tcp.") && !strings.HasPrefix(k, "TcpExt.") {
				t.Fatalf("counter %q of a group not kept", k)
			}
		}
	})
}

// TestRunRecoveries: flows that count their own loss probes and
// recoveries add them, the kernel's counters stand for those that do not
// (its fast recoveries with SACK and without), and a run with a flow
// counted neither way has no total.
func TestRunRecoveries(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	cclab := func(p, v int64) experiment.FlowResult {
		return experiment.FlowResult{LossProbes: n(p), FastRecoveries: n(v)}
	}
	kernel := experiment.FlowResult{}
	kc := &KernelCounters{Sender: map[string]int64{"TcpExt.TCPLossProbes": 7, "TcpExt.TCPSackRecovery": 28, "TcpExt.TCPRenoRecovery": 2}}
	for _, c := range []struct {
		name  string
		flows []experiment.FlowResult
		kc    *KernelCounters
		p, v  int64
		ok    bool
	}{
		{"every flow counts", []experiment.FlowResult{cclab(1, 2), cclab(3, 4)}, nil, 4, 6, true},
		{"every flow counts, counters ignored", []experiment.FlowResult{cclab(1, 2)}, kc, 1, 2, true},
		{"kernel flows", []experiment.FlowResult{kernel, kernel}, kc, 7, 30, true},
		{"mixed", []experiment.FlowResult{cclab(1, 2), kernel}, kc, 8, 32, true},
		{"mixed without counters", []experiment.FlowResult{cclab(1, 2), kernel}, nil, 0, 0, false},
		{"kernel flows without counters", []experiment.FlowResult{kernel}, nil, 0, 0, false},
	} {
		p, v, ok := RunRecoveries(c.flows, c.kc)
		if p != c.p || v != c.v || ok != c.ok {
			t.Errorf("%s: %d probes, %d recoveries, ok %v; want %d, %d, %v", c.name, p, v, ok, c.p, c.v, c.ok)
		}
	}
}

// TestRunTimeouts: timeouts by state follow RunRecoveries' rule, and the
// kernel's first timeouts in recovery include those without SACK.
func TestRunTimeouts(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	cclab := experiment.FlowResult{RTOsInRecovery: n(2), RTOsInLoss: n(1)}
	kernel := experiment.FlowResult{}
	kc := &KernelCounters{Sender: map[string]int64{"TcpExt.TCPSackRecoveryFail": 5, "TcpExt.TCPRenoRecoveryFail": 1, "TcpExt.TCPLossFailures": 3, "TcpExt.TCPTimeouts": 20}}
	for _, c := range []struct {
		name  string
		flows []experiment.FlowResult
		kc    *KernelCounters
		r, l  int64
		ok    bool
	}{
		{"every flow counts", []experiment.FlowResult{cclab, cclab}, kc, 4, 2, true},
		{"kernel flows", []experiment.FlowResult{kernel}, kc, 6, 3, true},
		{"mixed", []experiment.FlowResult{cclab, kernel}, kc, 8, 4, true},
		{"kernel flows without counters", []experiment.FlowResult{kernel}, nil, 0, 0, false},
	} {
		r, l, ok := RunTimeouts(c.flows, c.kc)
		if r != c.r || l != c.l || ok != c.ok {
			t.Errorf("%s: %d in recovery, %d in the loss state, ok %v; want %d, %d, %v", c.name, r, l, ok, c.r, c.l, c.ok)
		}
	}
}

// TestBackgroundOpensTCP: a background that opened TCP connections shares
// the measured flows' namespace counters; none, or a UDP background (no
// connections), leaves them to the measured flows.
func TestBackgroundOpensTCP(t *testing.T) {
	for _, c := range []struct {
		bg   []experiment.BackgroundResult
		want bool
	}{
		{nil, false},
		{[]experiment.BackgroundResult{{Name: "udp-elephant"}, {Name: "mice"}}, false},
		{[]experiment.BackgroundResult{{Name: "udp-elephant"}, {Name: "tcp-elephant", Flows: 1}}, true},
	} {
		if got := BackgroundOpensTCP(c.bg); got != c.want {
			t.Errorf("background %+v: got %v, want %v", c.bg, got, c.want)
		}
	}
}

const sampleNetDev = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
cclab0: 1609652    1445    0    0    0     0          0         0 35019552   24302    0 1515    0     0       0          0
`

// TestParseTxDrops: the device's transmit drops, not another device's nor
// its receive drops; malformed lines named.
func TestParseTxDrops(t *testing.T) {
	if n, err := parseTxDrops("x", []byte(sampleNetDev), "cclab0"); err != nil || n != 1515 {
		t.Errorf("cclab0: %d, %v; want 1515", n, err)
	}
	if n, err := parseTxDrops("x", []byte(sampleNetDev), "lo"); err != nil || n != 0 {
		t.Errorf("lo: %d, %v; want 0", n, err)
	}
	for _, c := range []struct{ in, want string }{
		{sampleNetDev, "x: no line for device eth0"},
		{"h\nh\neth0: 1 2 3\n", "x:3: device eth0 has 3 counters, want 16"},
		{"h\nh\neth0: 0 0 0 0 0 0 0 0 0 0 0 -4 0 0 0 0\n", "x:3: eth0's transmit drops: \"-4\" is not a count"},
	} {
		if _, err := parseTxDrops("x", []byte(c.in), "eth0"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

// FuzzParseTxDrops: any input gives a count that is not negative or an
// error, never a panic.
func FuzzParseTxDrops(f *testing.F) {
	f.Add([]byte(sampleNetDev))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		if n, err := parseTxDrops("fuzz", data, "cclab0"); err == nil && n < 0 {
			t.Fatalf("negative drops %d", n)
		}
	})
}
