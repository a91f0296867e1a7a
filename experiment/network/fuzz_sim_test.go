package network

import (
	"fmt"
	"strings"
	"testing"
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

// fuzzScenario writes a valid scenario from c: a bottleneck of any rate,
// delay, queue discipline and loss model, maybe a schedule and noise on
// the ACKs; one to three flow groups of any controller, size, start,
// extra delay, last-hop loss, coding and transport options; maybe
// background traffic. The duration keeps the run to about 20,000 packets
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
	fmt.Fprintf(&b, "name: fuzz\nseed: %d\nduration: %.6fs\n", c.pick(1000), dur)
	fmt.Fprintf(&b, "bottleneck:\n  rate: %gbps\n  delay: %s\n", rates[ri], c.of("0s", "100us", "5ms", "20ms", "300ms"))
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
	fmt.Fprintf(&b, ", receive_window: %s, rto: %s, kernel_hz: %s}\n", c.of("none", "linux"), c.of("linux", "rfc6298"), c.of("0", "250", "1000"))
	b.WriteString("flows:\n")
	for g := range c.pick(3) + 1 {
		fmt.Fprintf(&b, "  - {name: f%d, cc: %s, count: %d", g, c.of("newreno", "cubic", "vegas", "bbr", "fixed"), []int{1, 2, 5, 20}[c.pick(4)])
		if c.pick(2) == 0 {
			fmt.Fprintf(&b, ", bytes: %s", c.of("1B", "1448B", "100KB", "1MB"))
		}
		if c.pick(2) == 0 {
			fmt.Fprintf(&b, ", start: %.6fs, start_spread: %.6fs", dur*float64(c.pick(3))/4, dur*float64(c.pick(3))/4)
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
	if c.pick(3) == 0 {
		fmt.Fprintf(&b, "background:\n  - {name: bg, type: %s, rate: %gbps}\n", c.of("cbr", "poisson"), rates[ri]*float64(c.pick(4)+1)/4)
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
			if fl.Sender.Done() && (st.SndUna != st.SndNxt || int64(got) != st.SndNxt) {
				t.Errorf("flow %d: done with %d acknowledged, %d sent, %d delivered", i, st.SndUna, st.SndNxt, got)
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
