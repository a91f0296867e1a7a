package network

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
)

func build(t *testing.T, yml string) *Network {
	t.Helper()
	s, err := scenario.Parse([]byte(yml), "test.yaml")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	n, err := Build(s)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return n
}

func conserve(t *testing.T, n *Network) {
	t.Helper()
	if live, held := n.Pool.Live(), n.InFlight(); live != held {
		t.Errorf("packet conservation: %d packets alive, network holds %d", live, held)
	}
}

// TestMarlinBackgroundOfferedLoad runs the shipped MARLIN background pattern
// on a link too fast to drop anything and checks that each UDP part sends
// the load it is configured for, within 5% over a long run.
func TestMarlinBackgroundOfferedLoad(t *testing.T) {
	data, err := os.ReadFile("../../scenarios/satcom-uhf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, file, err := scenario.Decode(data, "satcom-uhf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Bottleneck.Schedule = nil
	s.Flows = nil
	for _, kv := range [][2]string{{"bottleneck.rate", "100Mbps"}, {"duration", "800s"}, {"background.0.sequence.1.cc", "newreno"}, {"background.0.sequence.3.cc", "newreno"}} {
		if err := s.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Validate(); err != nil {
		t.Fatal(scenario.Locate(err, file, "satcom-uhf.yaml"))
	}
	n, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	n.Run()
	secs := n.Now().Seconds()
	if len(n.Sources) != 4 {
		t.Fatalf("%d UDP sources, want 4 (two elephants, two mice)", len(n.Sources))
	}
	for _, src := range n.Sources {
		got := float64(src.SentBytes) * 8 / secs
		want := float64(src.Offered)
		if math.Abs(got-want)/want > 0.05 {
			t.Errorf("%s sent %.0f bit/s, configured %.0f bit/s (off by %.1f%%)", src.Name, got, want, 100*math.Abs(got-want)/want)
		}
		if src.Drops != 0 {
			t.Errorf("%s: %d drops on an uncongested link", src.Name, src.Drops)
		}
	}
	// Each elephant part: 800 kbit/s for 2 s of every 8 s.
	if got := float64(n.Sources[0].Offered); got != 200e3 {
		t.Errorf("udp elephant offered %.0f bit/s, want 200000", got)
	}
	conserve(t, n)
}

// TestSequenceWindows checks that sequence parts are active only in their
// windows: the UDP elephant sends in [0,2) and [4,6) of every 8 s.
func TestSequenceWindows(t *testing.T) {
	n := build(t, `
name: w
duration: 24s
sample: 100ms
bottleneck: {rate: 100Mbps, delay: 1ms}
background:
  - name: seq
    type: sequence
    period: 8s
    sequence:
      - {name: a, type: cbr, rate: 1Mbps, start: 0s, stop: 2s}
      - {name: b, type: cbr, rate: 1Mbps, start: 4s, stop: 6s}
`)
	n.Run()
	s := n.Series
	for k, tt := range s.T {
		if k == 0 {
			continue
		}
		// The sample at t covers (t-100ms, t]; skip the edges of windows.
		ph := math.Mod(tt.Seconds()-0.05, 8)
		a, b := s.SourceMbps[0][k], s.SourceMbps[1][k]
		inA, inB := ph > 0.05 && ph < 1.95, ph > 4.05 && ph < 5.95
		outA, outB := ph > 2.1 && ph < 7.95, ph < 3.9 || ph > 6.1
		if inA && math.Abs(a-1) > 0.15 || outA && a > 0 {
			t.Fatalf("t=%v: source a at %.2f Mbit/s (phase %.2f)", tt, a, ph)
		}
		if inB && math.Abs(b-1) > 0.15 || outB && b > 0 {
			t.Fatalf("t=%v: source b at %.2f Mbit/s (phase %.2f)", tt, b, ph)
		}
	}
}

// TestScheduleChangesLink checks a SATCOM-to-UHF switch: rate, delay and
// loss change at 10 s, and the background is scaled and stopped.
func TestScheduleChangesLink(t *testing.T) {
	n := build(t, `
name: s
duration: 20s
bottleneck:
  rate: 1Mbps
  delay: 500ms
  schedule:
    - {at: 10s, rate: 256kbps, delay: 125ms, loss: {p: 0.03}, scale_background: 0.5, stop_background: [x]}
flows:
  - {name: f, cc: newreno}
background:
  - {name: x, type: cbr, rate: 100kbps}
  - {name: y, type: cbr, rate: 100kbps}
`)
	n.Sched.RunUntil(clock.Time(9999 * time.Millisecond))
	if n.Bottleneck.Rate() != units.Mbps || n.Bottleneck.Delay() != 500*time.Millisecond || n.Bottleneck.LossRate() != 0 {
		t.Fatalf("before the switch: %v %v %v", n.Bottleneck.Rate(), n.Bottleneck.Delay(), n.Bottleneck.LossRate())
	}
	xBefore, yBefore := n.Sources[0].SentBytes, n.Sources[1].SentBytes
	n.Run()
	if n.Bottleneck.Rate() != 256*units.Kbps || n.Bottleneck.Delay() != 125*time.Millisecond || n.Bottleneck.LossRate() != 0.03 {
		t.Fatalf("after the switch: %v %v %v", n.Bottleneck.Rate(), n.Bottleneck.Delay(), n.Bottleneck.LossRate())
	}
	if n.Sources[0].SentBytes-xBefore > 1500 {
		t.Errorf("stopped source sent %d bytes after the switch", n.Sources[0].SentBytes-xBefore)
	}
	// y halves: about 50 kbit/s over the last 10 s.
	if got := float64(n.Sources[1].SentBytes-yBefore) * 8 / 10; math.Abs(got-50e3) > 3e3 {
		t.Errorf("scaled source sent %.0f bit/s after the switch, want 50000", got)
	}
	if len(n.Segments) != 2 || n.Segments[1].BaseRTT != 250*time.Millisecond+(256*units.Kbps).TxTime(1500) {
		t.Errorf("segments %+v", n.Segments)
	}
	conserve(t, n)
}

// TestTraceModes checks both trace modes on a step trace: the exact mode
// delivers at most the trace's opportunities, the average mode follows the
// windowed rate, and a saturating flow gets nearly all of either.
func TestTraceModes(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	// 3 s at 1 packet/ms (12 Mbit/s), then 3 s at 2 packets/ms.
	for ms := 1; ms <= 6000; ms++ {
		k := 1
		if ms > 3000 {
			k = 2
		}
		for range k {
			b.WriteString(itoa(ms))
			b.WriteByte('\n')
		}
	}
	path := dir + "/step.trace"
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"exact", "average"} {
		t.Run(mode, func(t *testing.T) {
			n := build(t, `
name: tr
duration: 12s
bottleneck: {trace: `+path+`, trace_mode: `+mode+`, delay: 10ms, queue: {limit: 200}}
flows:
  - {name: f, cc: fixed, transport: {delayed_ack: false}}
`)
			n.Run()
			capacity := n.Bottleneck.Capacity(n.Now())
			// 12 s = two loops of 3 s at 1500 B/ms and 3 s at 3000 B/ms.
			if want := units.Bytes(2 * (3000*1500 + 3000*3000)); math.Abs(float64(capacity-want)) > 3000*1500*0.002 {
				t.Errorf("capacity %d bytes, want %d", capacity, want)
			}
			util := float64(n.Bottleneck.TxBytes) / float64(capacity)
			if util > 1.0001 || util < 0.97 {
				t.Errorf("utilisation %.4f, want in [0.97, 1]", util)
			}
			conserve(t, n)
		})
	}
}

func TestConservationAllDisciplines(t *testing.T) {
	for _, q := range []string{"{discipline: droptail, limit: 20}", "{discipline: droptail, limit: 30KB}", "{discipline: red, limit: 100}", "{discipline: codel, limit: 200}"} {
		n := build(t, `
name: q
duration: 5s
bottleneck: {rate: 20Mbps, delay: 10ms, queue: `+q+`, loss: {p: 0.01}}
flows:
  - {name: f, cc: newreno, count: 8}
  - {name: g, cc: fixed, count: 2, extra_delay: 30ms}
background:
  - {name: u, type: poisson, rate: 5Mbps}
`)
		n.Run()
		conserve(t, n)
		if n.Bottleneck.Drops == 0 {
			t.Errorf("%s: no drops under overload", q)
		}
	}
}

// TestNamedSizesFromAFile: a built-in flow-size distribution is found by
// name even when the scenario comes from a file in another directory.
func TestNamedSizesFromAFile(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/dc.yaml"
	yml := `
name: dc
duration: 2s
bottleneck: {rate: 100Mbps, delay: 1ms}
background:
  - {name: web, type: arrivals, cc: newreno, sizes: websearch, interval: 10ms}
`
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Build(s)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	n.Run()
	if len(n.Flows) < 50 {
		t.Errorf("%d background flows arrived in 2 s at a 10 ms mean gap, want about 200", len(n.Flows))
	}
}

// TestSACKOff: transport.sack false reaches the transport, and a lossy
// transfer still completes in order, recovering NewReno-style.
func TestSACKOff(t *testing.T) {
	s, err := parseScenario(`
name: nosack
duration: 60s
bottleneck: {rate: 10Mbps, delay: 25ms, queue: {limit: 100}, loss: {model: bernoulli, p: 0.01}}
transport: {sack: false}
flows:
  - {name: t, cc: newreno, bytes: 2MB}
`)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	f := n.Flows[0]
	if !f.Sender.Config().NoSACK {
		t.Fatal("sack: false did not reach the transport")
	}
	n.Run()
	if !f.Done() || f.Receiver.DeliveredBytes != 2_000_000 {
		t.Fatalf("delivered %d of 2MB, done %v", f.Receiver.DeliveredBytes, f.Done())
	}
	if st := f.Sender.Stats(); st.FastRecoveries == 0 {
		t.Fatalf("no fast recovery at 1%% loss: %+v", st)
	}
}

// TestLinuxRecoveryKeys: the transport keys for Linux's behaviours reach
// the transport (default on, off when set false), and a bad rto rule is
// refused with its field named.
func TestLinuxRecoveryKeys(t *testing.T) {
	const base = `
name: keys
duration: 1s
bottleneck: {rate: 10Mbps, delay: 10ms}
flows:
  - {name: on, cc: cubic}
  - {name: off, cc: cubic, transport: {quick_ack: false, tlp: false, rack: false, frto: false, rto: rfc6298}}
`
	s, err := parseScenario(base)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	on, off := n.Flows[0].Sender.Config(), n.Flows[1].Sender.Config()
	if on.NoQuickAck || on.NoTLP || on.NoRACK || on.NoFRTO || on.RFC6298RTO {
		t.Errorf("defaults not Linux's: %+v", on)
	}
	if !off.NoQuickAck || !off.NoTLP || !off.NoRACK || !off.NoFRTO || !off.RFC6298RTO {
		t.Errorf("settings did not reach the transport: %+v", off)
	}
	if _, err := parseScenario(base + "transport: {rto: bsd}\n"); err == nil || !strings.Contains(err.Error(), "transport.rto") {
		t.Errorf("rto: bsd gave %v, want an error naming transport.rto", err)
	}
	// A flow's setting overrides the scenario's either way.
	s, err = parseScenario(`
name: keys
duration: 1s
bottleneck: {rate: 10Mbps, delay: 10ms}
transport: {rto: rfc6298, lost_retransmissions: rack}
flows:
  - {name: inherits, cc: cubic}
  - {name: linux, cc: cubic, transport: {rto: linux, lost_retransmissions: gap}}
`)
	if err != nil {
		t.Fatal(err)
	}
	if n, err = Build(s); err != nil {
		t.Fatal(err)
	}
	inh, lx := n.Flows[0].Sender.Config(), n.Flows[1].Sender.Config()
	if !inh.RFC6298RTO || !inh.RACKRetransmissions {
		t.Errorf("the scenario's rto and lost_retransmissions did not reach a flow without its own: %+v", inh)
	}
	if lx.RFC6298RTO || lx.RACKRetransmissions {
		t.Errorf("a flow's rto: linux and lost_retransmissions: gap did not undo the scenario's: %+v", lx)
	}
}

// TestNS3WireTiming: with ns-3's wire settings (a 2-byte PPP header on
// every packet, ACKs serialised on the way back, the handshake's own final
// ACK) a clean path's smallest RTT is ns-3's: both propagation delays plus
// one 1502-byte data and one 54-byte ACK transmission (51.2448 ms on 10
// Mbit/s and 2 x 25 ms); by default ACKs take no transmission time.
func TestNS3WireTiming(t *testing.T) {
	const base = `
name: wire
duration: 2s
bottleneck: {rate: 10Mbps, delay: 25ms, queue: {limit: 100}%s}
transport: {quick_ack: false%s}
flows:
  - {name: t, cc: vegas_ns3}
`
	for _, c := range []struct {
		link, tr string
		want     time.Duration
	}{
		{"", "", 50*time.Millisecond + (10 * units.Mbps).TxTime(1500)},
		{", serialize_acks: true", ", header: 54B, handshake_ack: true, ack_first: true",
			50*time.Millisecond + (10 * units.Mbps).TxTime(1502) + (10 * units.Mbps).TxTime(54)},
	} {
		n := build(t, fmt.Sprintf(base, c.link, c.tr))
		n.Run()
		f := n.Flows[0]
		if got := f.RTT.Min(); got != c.want {
			t.Errorf("%q %q: min RTT %v, want %v", c.link, c.tr, got, c.want)
		}
		if f.Receiver.Duplicates != 0 || f.Receiver.DeliveredBytes == 0 {
			t.Errorf("%q %q: %d duplicates, %d bytes delivered", c.link, c.tr, f.Receiver.Duplicates, f.Receiver.DeliveredBytes)
		}
		conserve(t, n)
	}
}

// TestSerializeAcksWithoutRate: a link without a rate, a trace in exact
// mode or an averaged window without capacity, adds no time to ACKs (a
// zero rate would otherwise take for ever to serialise them): exact mode
// runs as without serialize_acks, and in average mode over a trace with
// outages no ACK is held past the outage.
func TestSerializeAcksWithoutRate(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	// 1 s at 1 packet/ms, then 0.5 s without capacity, repeated.
	for ms := 1; ms <= 1000; ms++ {
		b.WriteString(itoa(ms))
		b.WriteByte('\n')
	}
	b.WriteString("1500\n")
	path := dir + "/outage.trace"
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(mode string, on bool) *Flow {
		n := build(t, fmt.Sprintf(`
name: tr
duration: 6s
bottleneck: {trace: %s, trace_mode: %s, delay: 10ms, queue: {limit: 200}, serialize_acks: %v}
flows:
  - {name: f, cc: cubic}
`, path, mode, on))
		n.Run()
		conserve(t, n)
		return n.Flows[0]
	}
	off, on := run("exact", false), run("exact", true)
	if off.Receiver.DeliveredBytes != on.Receiver.DeliveredBytes || off.RTT.Max() != on.RTT.Max() {
		t.Errorf("exact mode: serialize_acks changed the run: %d bytes, max RTT %v; without: %d, %v",
			on.Receiver.DeliveredBytes, on.RTT.Max(), off.Receiver.DeliveredBytes, off.RTT.Max())
	}
	avg := run("average", true)
	if avg.Receiver.DeliveredBytes == 0 || avg.RTT.Max() > time.Second {
		t.Errorf("average mode with outages: %d bytes delivered, max RTT %v; want data through and no RTT above 1 s", avg.Receiver.DeliveredBytes, avg.RTT.Max())
	}
}

// TestLinuxProfileReachesTheTransport: a scenario with profile: linux
// builds senders with Linux's rule for lost retransmissions and receivers
// with Linux's receive window, and CUBIC with Linux's arithmetic, where the
// scenario leaves them unset; a flow's own setting still wins.
func TestLinuxProfileReachesTheTransport(t *testing.T) {
	s, err := parseScenario(`
name: p
profile: linux
duration: 1s
bottleneck: {rate: 10Mbps, delay: 10ms}
flows:
  - {name: a, cc: cubic}
  - {name: b, cc: cubic, transport: {lost_retransmissions: gap, receive_window: none}}
`)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	a, b := n.Flows[0].Sender.Config(), n.Flows[1].Sender.Config()
	if !a.RACKRetransmissions || !a.LinuxReceiveWindow {
		t.Errorf("profile linux did not reach flow a's transport: %+v", a)
	}
	if b.RACKRetransmissions || b.LinuxReceiveWindow {
		t.Errorf("flow b's own settings lost to the profile: %+v", b)
	}
	if got := n.Flows[0].CC.Params["linux"]; got != 1 {
		t.Errorf("flow a's CUBIC: linux = %v, want 1", got)
	}
	if s.Flows[0].CC.Params != nil {
		t.Errorf("Build changed the caller's scenario: %v", s.Flows[0].CC.Params)
	}
}
