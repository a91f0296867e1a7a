package network

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/internal/fuzzbytes"
	_ "github.com/cclab/cclab/traces" // the shipped cellular traces, by name
)

// fuzzCase is a generated scenario and what its physics bounds.
type fuzzCase struct {
	yml string
	// least is the least one-way delay the bottleneck has during the run
	// (its own, or a schedule's).
	least time.Duration
	// capacity is the bits the bottleneck can send in the run at its
	// rates (0 for a trace).
	capacity float64
	// coded is set when a flow group uses TCP/NC, whose decoder costs
	// O(window^2) per packet: such a run gets a tenth of the event budget.
	coded bool
}

// fuzzScenario writes a valid scenario from c: a profile; a bottleneck of
// any rate (or a shipped cellular trace), delay, queue discipline and loss
// model, maybe a schedule, serialised ACKs and noise on the ACKs; the
// transport's options; one to three flow groups of any controller (with
// parameters), protocol, size, start, stop, extra delay, last-hop loss and
// coding; maybe background traffic of any type; maybe a flow group whose
// controller's parameters are at their bounds. The duration keeps the run to about 20,000 packets
// at the bottleneck's fastest rate, so that each input runs in
// milliseconds.
func fuzzScenario(c *fuzzbytes.Choices) fuzzCase {
	var fc fuzzCase
	var b strings.Builder
	rates := []float64{64e3, 1e6, 10e6, 100e6, 1e9, 10e9}
	ri, si := c.Pick(len(rates)), -1
	if c.Pick(3) == 0 {
		si = c.Pick(len(rates)) // a schedule entry's rate
	}
	fastest := rates[ri]
	if si >= 0 {
		fastest = max(fastest, rates[si])
	}
	dur := min(float64(c.Pick(20)+1)*0.5, 20000*12000/fastest)
	fmt.Fprintf(&b, "name: fuzz\nseed: %d\nduration: %.6fs\nprofile: %s\n", c.Pick(1000), dur, c.Of("default", "linux", "linux-host"))
	b.WriteString("bottleneck:\n")
	if si < 0 && c.Pick(4) == 0 {
		// A shipped cellular trace (a few to tens of Mbit/s).
		fmt.Fprintf(&b, "  trace: %s\n  trace_mode: %s\n", c.Of("TMobile-LTE-short.down", "Verizon-LTE-short.down"), c.Of("exact", "average"))
	} else {
		fmt.Fprintf(&b, "  rate: %gbps\n", rates[ri])
		fc.capacity = rates[ri] * dur
	}
	delay := c.Of("0s", "100us", "5ms", "20ms", "300ms")
	fmt.Fprintf(&b, "  delay: %s\n", delay)
	fc.least, _ = time.ParseDuration(delay)
	if c.Pick(5) == 0 {
		b.WriteString("  serialize_acks: true\n")
	}
	switch c.Pick(4) {
	case 0:
		fmt.Fprintf(&b, "  queue: {discipline: droptail, limit: %d}\n", []int{1, 2, 10, 100, 1000}[c.Pick(5)])
	case 1:
		fmt.Fprintf(&b, "  queue: {discipline: droptail, limit: %s}\n", c.Of("1500B", "3KB", "64KB", "1MB"))
	case 2:
		fmt.Fprintf(&b, "  queue: {discipline: red, limit: %d}\n", []int{20, 100, 500}[c.Pick(3)])
	case 3:
		fmt.Fprintf(&b, "  queue: {discipline: codel, limit: %d}\n", []int{20, 100, 500}[c.Pick(3)])
	}
	switch c.Pick(3) {
	case 1:
		fmt.Fprintf(&b, "  loss: {model: bernoulli, p: %s}\n", c.Of("0.001", "0.01", "0.1", "0.5"))
	case 2:
		fmt.Fprintf(&b, "  loss: {model: gilbert-elliott, p: %s, r: %s, loss_bad: %s}\n", c.Of("0.01", "0.1"), c.Of("0.1", "0.5"), c.Of("0.5", "1"))
	}
	if si >= 0 {
		later := c.Of("1ms", "50ms")
		at := dur * float64(c.Pick(4)) / 4
		fmt.Fprintf(&b, "  schedule: [{at: %.6fs, rate: %gbps, delay: %s}]\n", at, rates[si], later)
		d, _ := time.ParseDuration(later)
		fc.least = min(fc.least, d)
		fc.capacity = rates[ri]*at + rates[si]*(dur-at)
	}
	if c.Pick(4) == 0 {
		fmt.Fprintf(&b, "  ack_jitter: %s\n", c.Of("10us", "1ms"))
	}
	if c.Pick(4) == 0 {
		fmt.Fprintf(&b, "  ack_read_delay: %s\n  ack_read_share: %s\n", c.Of("80us", "5ms"), c.Of("0", "0.3", "1"))
	}
	sack := c.Pick(3) != 0
	fmt.Fprintf(&b, "transport: {sack: %v, delayed_ack: %v", sack, c.Pick(2) == 0)
	if sack {
		fmt.Fprintf(&b, ", rack: %v, tlp: %v, tlp_timer: %s, frto: %v, prr: %s, lost_retransmissions: %s",
			c.Pick(3) != 0, c.Pick(2) == 0, c.Of("rto_first", "linux"), c.Pick(2) == 0, c.Of("rfc6937", "linux"), c.Of("gap", "rack"))
	}
	fmt.Fprintf(&b, ", receive_window: %s, rto: %s, kernel_hz: %s", c.Of("none", "linux"), c.Of("linux", "rfc6298"), c.Of("0", "250", "1000"))
	fmt.Fprintf(&b, ", quick_ack: %v, srtt_sample: %s, rack_timer: %s, sack_compression: %v, handshake_ack: %v, cwnd_limited: %s",
		c.Pick(2) == 0, c.Of("newest", "oldest"), c.Of("earliest", "linux"), c.Pick(3) == 0, c.Pick(2) == 0, c.Of("last_send", "linux"))
	if c.Pick(3) == 0 {
		fmt.Fprintf(&b, ", mss: %s, header: %s, min_rto: %s, initial_rto: %s, dupthresh: %d, delack_timeout: %s",
			c.Of("100B", "536B", "1448B", "8948B"), c.Of("1B", "52B"), c.Of("1ms", "200ms"), c.Of("10ms", "1s", "3s"), c.Pick(5)+1, c.Of("1ms", "40ms", "200ms"))
	}
	if c.Pick(3) == 0 {
		fmt.Fprintf(&b, ", recv_window: %s, pending_queue: %s", c.Of("3KB", "64KB", "4MB"), c.Of("9KB", "100KB"))
	} else if c.Pick(3) == 0 {
		b.WriteString(", send_buffer: linux")
	}
	b.WriteString("}\n")
	b.WriteString("flows:\n")
	for g := range c.Pick(3) + 1 {
		fmt.Fprintf(&b, "  - {name: f%d, cc: %s, count: %d", g,
			c.Of("newreno", "cubic", "vegas", "bbr", "fixed", "{name: bbr, linux: 1}", "{name: cubic, beta: 0.5}", "{name: vegas, alpha: 1, beta: 2}"), []int{1, 2, 5, 20}[c.Pick(4)])
		if c.Pick(6) == 0 {
			fmt.Fprintf(&b, ", protocol: mockets, transport: {sack_timeout: %s, packet_timers: %v}", c.Of("5ms", "20ms"), c.Pick(2) == 0)
		}
		if c.Pick(2) == 0 {
			fmt.Fprintf(&b, ", bytes: %s", c.Of("1B", "1448B", "100KB", "1MB"))
		}
		start := 0.0
		if c.Pick(2) == 0 {
			start = dur * float64(c.Pick(3)) / 4
			fmt.Fprintf(&b, ", start: %.6fs, start_spread: %.6fs", start, dur*float64(c.Pick(3))/4)
		}
		if c.Pick(4) == 0 {
			fmt.Fprintf(&b, ", stop: %.6fs", start+dur*float64(c.Pick(4)+1)/4)
		}
		if c.Pick(3) == 0 {
			fmt.Fprintf(&b, ", extra_delay: %s", c.Of("1ms", "30ms"))
		}
		if c.Pick(4) == 0 {
			fmt.Fprintf(&b, ", loss: {model: bernoulli, p: %s}, loss_hops: %d", c.Of("0.01", "0.2"), c.Pick(4)+1)
		}
		if c.Pick(5) == 0 {
			fmt.Fprintf(&b, ", coding: {redundancy: %s}", c.Of("1.1", "1.5"))
			fc.coded = true
		}
		b.WriteString("}\n")
	}
	var bg strings.Builder // after the flows, chosen first (the order of choices is the seeds' meaning)
	switch c.Pick(6) {
	case 1:
		fmt.Fprintf(&bg, "background:\n  - {name: bg, type: %s, rate: %gbps}\n", c.Of("cbr", "poisson"), rates[ri]*float64(c.Pick(4)+1)/4)
	case 2:
		fmt.Fprintf(&bg, "background:\n  - {name: bg, type: onoff, rate: %gbps, on: %s, off: %s}\n", rates[ri]/2, c.Of("10ms", "300ms"), c.Of("10ms", "1s"))
	case 3:
		fmt.Fprintf(&bg, "background:\n  - {name: bg, type: tcp, cc: %s, bytes: %s}\n", c.Of("newreno", "cubic", "bbr"), c.Of("10KB", "1MB"))
	case 4:
		fmt.Fprintf(&bg, "background:\n  - {name: bg, type: arrivals, cc: %s, %s, interval: %s}\n", c.Of("newreno", "cubic"), c.Of("sizes: websearch", "sizes: datamining", "size: 20KB"), c.Of("20ms", "200ms"))
	}
	// A flow group whose controller's parameters sit at their bounds, as
	// FuzzControllers drives them without the network.
	if c.Pick(3) == 0 {
		names := cc.Names()
		name := names[c.Pick(len(names))]
		spec, _ := cc.Lookup(name)
		// A send buffer, as a real socket has: a window of a million
		// segments (iw's bound) would otherwise throw a million packets at
		// a full queue on every ACK, faithfully and slowly.
		fmt.Fprintf(&b, "  - {name: fz, count: %d, transport: {pending_queue: 1MB}, cc: {name: %s", c.Pick(3)+1, name)
		for _, p := range spec.Params {
			switch c.Pick(4) {
			case 1:
				fmt.Fprintf(&b, ", %s: %v", p.Name, p.Min)
			case 2:
				fmt.Fprintf(&b, ", %s: %v", p.Name, p.Max)
			}
		}
		b.WriteString("}}\n")
	}
	b.WriteString(bg.String())
	fc.yml = b.String()
	// Linux's pacing, chosen last so that the choices above keep their
	// meaning for the inputs below (past the end a choice is 0: off).
	if c.Pick(2) == 1 {
		fc.yml = strings.Replace(fc.yml, "transport: {sack:", "transport: {pacing: linux, sack:", 1)
	}
	// Linux's rule for starting recovery, likewise after the rest.
	if c.Pick(2) == 1 {
		fc.yml = strings.Replace(fc.yml, "transport: {", "transport: {recovery_start: linux, ", 1)
	}
	return fc
}

// maxEvents bounds a FuzzSimulate run (most take 1,000-60,000 events).
const maxEvents = 100_000

// FuzzSimulate runs scenarios generated from the fuzzer's bytes (each
// byte a choice: link, queue, loss, schedule, ACK noise, transport
// options, controllers, sizes, starts, coding, background): building a
// valid scenario never fails and running it never panics, packets are
// conserved, every TCP flow's receiver has delivered in order exactly the
// bytes between the sender's acknowledged and sent ones, a finished
// transfer delivered all of it, no RTT sample is below the propagation
// delay there and back, the bottleneck sends no more than its rates allow,
// and the same input runs the same twice.
// `go test -fuzz FuzzSimulate ./experiment/network` searches further.
func FuzzSimulate(f *testing.F) {
	// Inputs chosen for what their scenarios exercise together (the
	// bytes' meaning is fuzzScenario's order of choices; rewritten when
	// it changes): TCP/NC, RED and CoDel with BBR and CUBIC and stops;
	// a schedule with Mockets, no SACK and ACK jitter; no SACK with
	// CUBIC and Vegas; Gilbert-Elliott loss with coding; a cellular trace
	// with coding, no SACK, fixed windows and both kinds of ACK noise; 127
	// flows through CoDel; Mockets among Vegas, CUBIC and fixed windows;
	// 535 flows on a trace; and every discipline and loss model at once.
	for _, seed := range []string{"",
		"ac28ae7a03e9ffecaf8b09e9da112879a43e66999eb725bd02b301774043b84d4464121a0fa05c9c7f9f9e755f209b0908f77dff32b6b2312e6b6eaf318c5a25eeecd85fb12a847f8667e2926486dd7a",
		"d51b003fbf80a842096c514f4ad04b9d8a3ad430b87203e2971029c147fbf852cffc72a2eab1306e1d834ccc3796ed04315b4d3d7bbb6e73aa640a4f35fcbd62402cedc4a5b91543334a22410a35deb9",
		"a05fe9983d379608ed17dbde39eadf778e063b71a762ec99b1c8ebb9cffefd73f6ed2b5ce8a0559849ac1fdefaebc85974682ac989601e5bc9e05375a0e4995ddecbee6eb86779362d5bfb71e6dec5b7",
		"876da4df22ad52c984571d18c4a40870759143adb59781f6c8944c46c834d104d32865cb76056ba80525dabf639b027387e2b913fa4dec45cf4be82af1531cb91fb841f5b5638b62843053b201e10914",
		"123afa60aae4805b3237d5cc26f48905f095046ebc90e46cc20ed3bb05154c7b4c83fd73974bd2f69088658438f9974a6092519119a4250bd2f3128caf7c5a9a73438f183e66dce3d7f520525f97a78c",
		"b173d43e0e25d547870b572b8516f2e8bdf14f0a48338d14ae3091091bdd70af84aeab946c95dde80309a852082980e8ad6cc6d3e5e4a7e49596e21b7d786be9f6e01d99edf9ef059666f957312c27d8",
		"9380a4f79506e2eb92ddf0b3ddbc5d6c11d6cf96f08c47f2c54623b871600e23205a6c8c752bcce88ca2ad04d0a390daebc19de89cf683763c6090034d87f35f111a8e0d9842fb838f9689626648821f",
		"73ddc71484e06c5ad56db3ec9b43ab2bd539b483d0c30059148623202d3153708c3dbcb60d1986b5a2c44df95e1e459f8bff756280d17deb9374eed7c998f5e1faf23d5f6e2456694c244612c006de87",
		"c934fae3977be36e8fffef433c72995fa6144ecc290eabc12568f91d19d089f5ba94e50b07f64735221126d9742b8c46c41092c966bb01324e0a1d56452078aba5be41b79f8d98119b4bd949f138c3f1",
	} {
		b, err := hex.DecodeString(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fc := fuzzScenario(fuzzbytes.New(data))
		yml := fc.yml
		run := func() (string, *Network) {
			n := build(t, yml)
			// In slices, stopping after the slice that passes maxEvents
			// (the same slice every time; a tenth of it with TCP/NC,
			// whose decoding costs O(window^2) per packet: 20 coded
			// flows at 1 Gbit/s took 2-4 s for 100,000 events on a slow
			// host, past the fuzzer's patience): every check below holds
			// at any instant, not only at the end.
			budget := uint64(maxEvents)
			if fc.coded {
				budget /= 10
			}
			for i := int64(1); i <= 64 && n.Sched.Events() < budget; i++ {
				n.Sched.RunUntil(clock.Time(int64(n.End()) * i / 64))
			}
			return fingerprint(n), n
		}
		first, n := run()
		if t.Failed() {
			t.Logf("scenario:\n%s", yml)
			return
		}
		conserve(t, n)
		inOrder(t, n)
		for i, fl := range n.Flows {
			if fl.Coding != nil {
				continue // TCP/NC's ACKs count degrees of freedom, not bytes in order
			}
			st := fl.Sender.State()
			got := fl.Receiver.DeliveredBytes
			// No RTT sample beats the propagation delay there and back.
			if base := 2 * (fc.least + fl.ExtraDelay); fl.RTT.Count() > 0 && fl.RTT.Min() < base {
				t.Errorf("flow %d: RTT sample %v below the path's %v", i, fl.RTT.Min(), base)
			}
			if fl.Done() && got != fl.Bytes {
				t.Errorf("flow %d: complete with %d of %d bytes delivered", i, got, fl.Bytes)
			}
			if fl.Sender.Done() && fl.Stop == clock.Never && (st.SndUna != int64(fl.Bytes) || st.SndNxt != st.SndUna || got != fl.Bytes) {
				t.Errorf("flow %d: acknowledged in full with %d acknowledged, %d sent, %d delivered of %d", i, st.SndUna, st.SndNxt, got, fl.Bytes)
			}
		}
		// The bottleneck sends no faster than its rates (a packet may be
		// under way at a rate change and at the end).
		if sent := float64(n.Bottleneck.TxBytes) * 8; fc.capacity > 0 && sent > fc.capacity+2*9100*8 {
			t.Errorf("the bottleneck sent %.0f bits, at its rates it could send %.0f", sent, fc.capacity)
		}
		if second, _ := run(); second != first {
			t.Errorf("two runs differ:\n%s\n%s", first, second)
		}
		if t.Failed() {
			t.Logf("scenario:\n%s", yml)
		}
	})
}

// fingerprint is what two runs of one input must agree on: every flow's
// sender counters and in-order bytes, and the run's time, events, drops
// and packets allocated.
func fingerprint(n *Network) string {
	var b strings.Builder
	for _, fl := range n.Flows {
		fmt.Fprintf(&b, "%+v %d\n", fl.Sender.Stats(), fl.Receiver.DeliveredBytes)
	}
	fmt.Fprintf(&b, "%d %d %d %d\n", n.Sched.Now(), n.Sched.Events(), n.Bottleneck.Drops, n.Pool.Allocated())
	return b.String()
}

// inOrder checks that every TCP flow's receiver has delivered in order
// exactly the bytes between what its sender has acknowledged and sent
// (TCP/NC's ACKs count degrees of freedom, not bytes in order).
func inOrder(t *testing.T, n *Network) {
	t.Helper()
	for i, fl := range n.Flows {
		if fl.Coding != nil {
			continue
		}
		st := fl.Sender.State()
		if got := fl.Receiver.DeliveredBytes; int64(got) < st.SndUna || int64(got) > st.SndNxt {
			t.Errorf("flow %d: receiver delivered %d bytes in order, sender acknowledged %d and sent up to %d", i, got, st.SndUna, st.SndNxt)
		}
	}
}
