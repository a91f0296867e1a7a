package cctest_test

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/cc/cctest"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/internal/fuzzbytes"
)

// FuzzControllers drives every registered controller, with parameters
// drawn from their ranges, through an arbitrary sequence of sends, ACKs,
// losses, timeouts, retransmissions, ECN echoes, RTT changes from 1 ns
// (loopback) to 10 s and pauses, as a live socket, a learning agent or the simulator
// may: no controller panics, and its window stays positive and bounded
// and its pacing rate non-negative after every event.
func FuzzControllers(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 2, 0, 7, 1, 7, 2, 3, 0, 3, 1, 5, 2, 9, 1, 4, 3, 1, 2})
	f.Add([]byte{9, 9, 0, 7, 5, 0, 1, 7, 6, 1, 3, 7, 4, 1, 7, 2, 6, 7, 0, 7, 1, 7})
	f.Add([]byte{4, 4, 4, 0, 7, 5, 4, 1, 7, 2, 7, 6, 3, 7, 5, 3, 1, 7, 0, 7, 1, 7, 8, 8, 0, 7, 1, 7})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := fuzzbytes.New(b)
		names := cc.Names()
		name := names[c.Pick(len(names))]
		spec, err := cc.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		params := map[string]float64{}
		for _, p := range spec.Params {
			switch c.Pick(4) {
			case 1:
				params[p.Name] = p.Min
			case 2:
				params[p.Name] = p.Max
			case 3:
				v := (p.Min + p.Max) / 2
				if p.Integer {
					v = float64(int64(v))
				}
				params[p.Name] = v
			}
		}
		const mss = units.Bytes(1448)
		alg, err := cc.New(name, mss, params)
		if err != nil {
			return // a combination the controller refuses, with a message
		}
		d := cctest.NewDriver(t, alg, mss)
		check := func(op string) {
			if w := alg.CongestionWindow(); w <= 0 || w > 1<<40 {
				t.Fatalf("%s %v after %s: window %d", name, params, op, w)
			}
			if r := alg.PacingRate(); r < 0 {
				t.Fatalf("%s %v after %s: pacing rate %d", name, params, op, r)
			}
		}
		check("start")
		rtts := []time.Duration{time.Nanosecond, 10 * time.Microsecond, time.Millisecond, 100 * time.Millisecond, 600 * time.Millisecond, 10 * time.Second}
		gaps := []time.Duration{0, time.Microsecond, time.Millisecond, 100 * time.Millisecond, 10 * time.Second}
		for c.More() {
			switch op := c.Pick(9); op {
			case 0:
				if d.Outstanding() < 4096 {
					d.Send(c.Pick(16) + 1)
				}
				check("send")
			case 1:
				if n := d.Outstanding(); n > 0 {
					d.AckN(min(c.Pick(8)+1, n))
				}
				check("ack")
			case 2:
				if n := d.Outstanding(); n > 0 {
					d.LoseN(min(c.Pick(4)+1, n))
				}
				check("loss")
			case 3:
				d.Timeout()
				check("timeout")
			case 4:
				d.Retransmit()
				check("retransmit")
			case 5:
				d.SetRTT(rtts[c.Pick(len(rtts))])
			case 6:
				d.Advance(gaps[c.Pick(len(gaps))])
			case 7:
				d.AppLimited = !d.AppLimited
			case 8:
				d.Echo()
				check("echo")
			}
		}
	})
}
