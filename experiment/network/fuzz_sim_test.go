package network

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cclab/cclab/core/clock"
	_ "github.com/cclab/cclab/traces" // the shipped cellular traces, by name
)

// choices reads a fuzzer's bytes as a stream of choices; past the end
// every choice is the first option.
type choices struct {
	b []byte
	i int
}

func (c *choices) pick(n int) int {
	if c.i >= len(c.b) {
		return 0
	}
	c.i++
	return int(c.b[c.i-1]) % n
}

func (c *choices) of(opts ...string) string { return opts[c.pick(len(opts))] }

// fuzzScenario writes a valid scenario from c: a profile; a bottleneck of
// any rate (or a shipped cellular trace), delay, queue discipline and loss
// model, maybe a schedule, serialised ACKs and noise on the ACKs; the
// transport's options; one to three flow groups of any controller (with
// parameters), protocol, size, start, stop, extra delay, last-hop loss and
// coding; maybe background traffic of any type. The duration keeps the run to about 20,000 packets
// at the bottleneck's fastest rate, so that each input runs in
// milliseconds.
func fuzzScenario(c *choices) string {
	var b strings.Builder
	rates := []float64{64e3, 1e6, 10e6, 100e6, 1e9, 10e9}
	ri, si := c.pick(len(rates)), -1
	if c.pick(3) == 0 {
		si = c.pick(len(rates)) // a schedule entry's rate
	}
	fastest := rates[ri]
	if si >= 0 {
		fastest = max(fastest, rates[si])
	}
	dur := min(float64(c.pick(20)+1)*0.5, 20000*12000/fastest)
	fmt.Fprintf(&b, "name: fuzz\nseed: %d\nduration: %.6fs\nprofile: %s\n", c.pick(1000), dur, c.of("default", "linux", "linux-host"))
	b.WriteString("bottleneck:\n")
	if si < 0 && c.pick(4) == 0 {
		// A shipped cellular trace (a few to tens of Mbit/s).
		fmt.Fprintf(&b, "  trace: %s\n  trace_mode: %s\n", c.of("TMobile-LTE-short.down", "Verizon-LTE-short.down"), c.of("exact", "average"))
	} else {
		fmt.Fprintf(&b, "  rate: %gbps\n", rates[ri])
	}
	fmt.Fprintf(&b, "  delay: %s\n", c.of("0s", "100us", "5ms", "20ms", "300ms"))
	if c.pick(5) == 0 {
		b.WriteString("  serialize_acks: true\n")
	}
	switch c.pick(4) {
	case 0:
		fmt.Fprintf(&b, "  queue: {discipline: droptail, limit: %d}\n", []int{1, 2, 10, 100, 1000}[c.pick(5)])
	case 1:
		fmt.Fprintf(&b, "  queue: {discipline: droptail, limit: %s}\n", c.of("1500B", "3KB", "64KB", "1MB"))
	case 2:
		fmt.Fprintf(&b, "  queue: {discipline: red, limit: %d}\n", []int{20, 100, 500}[c.pick(3)])
	case 3:
		fmt.Fprintf(&b, "  queue: {discipline: codel, limit: %d}\n", []int{20, 100, 500}[c.pick(3)])
	}
	switch c.pick(3) {
	case 1:
		fmt.Fprintf(&b, "  loss: {model: bernoulli, p: %s}\n", c.of("0.001", "0.01", "0.1", "0.5"))
	case 2:
		fmt.Fprintf(&b, "  loss: {model: gilbert-elliott, p: %s, r: %s, loss_bad: %s}\n", c.of("0.01", "0.1"), c.of("0.1", "0.5"), c.of("0.5", "1"))
	}
	if si >= 0 {
		fmt.Fprintf(&b, "  schedule: [{at: %.6fs, rate: %gbps, delay: %s}]\n", dur*float64(c.pick(4))/4, rates[si], c.of("1ms", "50ms"))
	}
	if c.pick(4) == 0 {
		fmt.Fprintf(&b, "  ack_jitter: %s\n", c.of("10us", "1ms"))
	}
	if c.pick(4) == 0 {
		fmt.Fprintf(&b, "  ack_read_delay: %s\n  ack_read_share: %s\n", c.of("80us", "5ms"), c.of("0", "0.3", "1"))
	}
	sack := c.pick(3) != 0
	fmt.Fprintf(&b, "transport: {sack: %v, delayed_ack: %v", sack, c.pick(2) == 0)
	if sack {
		fmt.Fprintf(&b, ", rack: %v, tlp: %v, frto: %v, prr: %s, lost_retransmissions: %s",
			c.pick(3) != 0, c.pick(2) == 0, c.pick(2) == 0, c.of("rfc6937", "linux"), c.of("gap", "rack"))
	}
	fmt.Fprintf(&b, ", receive_window: %s, rto: %s, kernel_hz: %s", c.of("none", "linux"), c.of("linux", "rfc6298"), c.of("0", "250", "1000"))
	fmt.Fprintf(&b, ", quick_ack: %v, srtt_sample: %s, rack_timer: %s, sack_compression: %v, handshake_ack: %v",
		c.pick(2) == 0, c.of("newest", "oldest"), c.of("earliest", "linux"), c.pick(3) == 0, c.pick(2) == 0)
	if c.pick(3) == 0 {
		fmt.Fprintf(&b, ", mss: %s, header: %s, min_rto: %s, initial_rto: %s, dupthresh: %d, delack_timeout: %s",
			c.of("100B", "536B", "1448B", "8948B"), c.of("1B", "52B"), c.of("1ms", "200ms"), c.of("10ms", "1s", "3s"), c.pick(5)+1, c.of("1ms", "40ms", "200ms"))
	}
	if c.pick(3) == 0 {
		fmt.Fprintf(&b, ", recv_window: %s, pending_queue: %s", c.of("3KB", "64KB", "4MB"), c.of("9KB", "100KB"))
	}
	b.WriteString("}\n")
	b.WriteString("flows:\n")
	for g := range c.pick(3) + 1 {
		fmt.Fprintf(&b, "  - {name: f%d, cc: %s, count: %d", g,
			c.of("newreno", "cubic", "vegas", "bbr", "fixed", "{name: bbr, linux: 1}", "{name: cubic, beta: 0.5}", "{name: vegas, alpha: 1, beta: 2}"), []int{1, 2, 5, 20}[c.pick(4)])
		if c.pick(6) == 0 {
			fmt.Fprintf(&b, ", protocol: mockets, transport: {sack_timeout: %s, packet_timers: %v}", c.of("5ms", "20ms"), c.pick(2) == 0)
		}
		if c.pick(2) == 0 {
			fmt.Fprintf(&b, ", bytes: %s", c.of("1B", "1448B", "100KB", "1MB"))
		}
		start := 0.0
		if c.pick(2) == 0 {
			start = dur * float64(c.pick(3)) / 4
			fmt.Fprintf(&b, ", start: %.6fs, start_spread: %.6fs", start, dur*float64(c.pick(3))/4)
		}
		if c.pick(4) == 0 {
			fmt.Fprintf(&b, ", stop: %.6fs", start+dur*float64(c.pick(4)+1)/4)
		}
		if c.pick(3) == 0 {
			fmt.Fprintf(&b, ", extra_delay: %s", c.of("1ms", "30ms"))
		}
		if c.pick(4) == 0 {
			fmt.Fprintf(&b, ", loss: {model: bernoulli, p: %s}, loss_hops: %d", c.of("0.01", "0.2"), c.pick(4)+1)
		}
		if c.pick(5) == 0 {
			fmt.Fprintf(&b, ", coding: {redundancy: %s}", c.of("1.1", "1.5"))
		}
		b.WriteString("}\n")
	}
	switch c.pick(6) {
	case 1:
		fmt.Fprintf(&b, "background:\n  - {name: bg, type: %s, rate: %gbps}\n", c.of("cbr", "poisson"), rates[ri]*float64(c.pick(4)+1)/4)
	case 2:
		fmt.Fprintf(&b, "background:\n  - {name: bg, type: onoff, rate: %gbps, on: %s, off: %s}\n", rates[ri]/2, c.of("10ms", "300ms"), c.of("10ms", "1s"))
	case 3:
		fmt.Fprintf(&b, "background:\n  - {name: bg, type: tcp, cc: %s, bytes: %s}\n", c.of("newreno", "cubic", "bbr"), c.of("10KB", "1MB"))
	case 4:
		fmt.Fprintf(&b, "background:\n  - {name: bg, type: arrivals, cc: %s, %s, interval: %s}\n", c.of("newreno", "cubic"), c.of("sizes: websearch", "sizes: datamining", "size: 20KB"), c.of("20ms", "200ms"))
	}
	return b.String()
}

// FuzzSimulate runs scenarios generated from the fuzzer's bytes (each
// byte a choice: link, queue, loss, schedule, ACK noise, transport
// options, controllers, sizes, starts, coding, background): building a
// valid scenario never fails and running it never panics, packets are
// conserved, every TCP flow's receiver has delivered in order exactly the
// bytes between the sender's acknowledged and sent ones, a finished
// transfer delivered all of it, and the same input runs the same twice.
// `go test -fuzz FuzzSimulate ./experiment/network` searches further.
func FuzzSimulate(f *testing.F) {
	for _, seed := range []string{
		"", "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a", "\x05\x13\x04\x03\x02\x01\x00\x01\x02\x00\x01\x01\x00\x01\x01\x01\x00\x02\x03\x01\x00\x01\x00\x00\x01",
		"\x03\x07\x02\x01\x00\x02\x01\x01\x00\x00\x00\x00\x00\x02\x01\x00\x01\x01\x02\x03\x03\x01\x01\x00\x01\x02\x03\x00\x04\x00\x00\x01",
		strings.Repeat("\xff", 64), strings.Repeat("\x01\x00", 40), strings.Repeat("\x02\x03\x05", 30),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		yml := fuzzScenario(&choices{b: data})
		run := func() (string, *Network) {
			n := build(t, yml)
			n.Run()
			var b strings.Builder
			for _, fl := range n.Flows {
				fmt.Fprintf(&b, "%+v %d\n", fl.Sender.Stats(), fl.Receiver.DeliveredBytes)
			}
			fmt.Fprintf(&b, "%d %d %d\n", n.Sched.Events(), n.Bottleneck.Drops, n.Pool.Allocated())
			return b.String(), n
		}
		first, n := run()
		if t.Failed() {
			t.Logf("scenario:\n%s", yml)
			return
		}
		conserve(t, n)
		for i, fl := range n.Flows {
			if fl.Coding != nil {
				continue // TCP/NC's ACKs count degrees of freedom, not bytes in order
			}
			st := fl.Sender.State()
			got := fl.Receiver.DeliveredBytes
			if int64(got) < st.SndUna || int64(got) > st.SndNxt {
				t.Errorf("flow %d: receiver delivered %d bytes in order, sender acknowledged %d and sent up to %d", i, got, st.SndUna, st.SndNxt)
			}
			if fl.Done() && got != fl.Bytes {
				t.Errorf("flow %d: complete with %d of %d bytes delivered", i, got, fl.Bytes)
			}
			if fl.Sender.Done() && fl.Stop == clock.Never && (st.SndUna != int64(fl.Bytes) || st.SndNxt != st.SndUna || got != fl.Bytes) {
				t.Errorf("flow %d: acknowledged in full with %d acknowledged, %d sent, %d delivered of %d", i, st.SndUna, st.SndNxt, got, fl.Bytes)
			}
		}
		if second, _ := run(); second != first {
			t.Errorf("two runs differ:\n%s\n%s", first, second)
		}
		if t.Failed() {
			t.Logf("scenario:\n%s", yml)
		}
	})
}
