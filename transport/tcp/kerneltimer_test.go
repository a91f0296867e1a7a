package tcp

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
)

// TestWheelExpiry: timeouts on Linux's timer wheel at HZ=250 (4 ms
// jiffies), worked by hand from kernel/time/timer.c's calc_wheel_index:
// whole jiffies rounded up, then the next granule of the timeout's level
// past the expiry jiffy.
func TestWheelExpiry(t *testing.T) {
	const tick = 4 * time.Millisecond
	ms := func(v float64) clock.Time { return clock.Time(v * float64(time.Millisecond)) }
	for _, c := range []struct {
		name          string
		now, at, want clock.Time
	}{
		{"a 220 ms RTO: 55 jiffies, level 0, fires at jiffy 56", 0, ms(220), ms(224)},
		{"armed 1 ms later in the same jiffy: the same tick", ms(1), ms(221), ms(224)},
		{"62 jiffies, the last of level 0", 0, ms(248), ms(252)},
		{"63 jiffies, level 1: the next 8-jiffy granule", 0, ms(252), ms(256)},
		{"a backed-off 440 ms from jiffy 1: 110 jiffies, expiry 111, granule 112", ms(5), ms(445), ms(448)},
		{"880 ms from jiffy 2: expiry 222, granule 224", ms(10), ms(890), ms(896)},
		{"3.52 s: 880 jiffies, level 2, 64-jiffy granule 896", 0, ms(3520), ms(3584)},
		{"a deadline not after now stays", ms(50), ms(50), ms(50)},
		{"Never stays", ms(50), clock.Never, clock.Never},
	} {
		if got := wheelExpiry(c.now, c.at, tick, 0); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// With the jiffy counter at 1000.75 jiffies at time zero, the grid
	// moves by 0.75 jiffies: the 220 ms RTO armed at 0 (jiffy 1000) expires
	// at jiffy 1056, 224 ms - 0.75 jiffies from zero; a 2 s timeout armed
	// at jiffy 1000 has level 1's granule of 8 jiffies, so 1500 -> 1504.
	for _, c := range []struct {
		name          string
		now, at, want clock.Time
	}{
		{"a 220 ms RTO, phase 1000.75 jiffies", 0, ms(220), ms(224 - 3)},
		{"a 2 s timeout, phase 1000.75 jiffies: granule 1504", 0, ms(2000), ms(4*1504 - 4003)},
	} {
		if got := wheelExpiry(c.now, c.at, tick, 4003*time.Millisecond); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Never early, late by less than a granule plus a jiffy, and on the
	// jiffy grid that the phase moves, at any phase.
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		now := clock.Time(rnd.Int64N(int64(100 * time.Second)))
		d := time.Duration(rnd.Int64N(int64(60 * time.Second)))
		at := now.Add(d)
		var phase time.Duration
		if i%2 == 1 {
			phase = time.Duration(rnd.Int64N(1 << 24 * int64(tick)))
		}
		got := wheelExpiry(now, at, tick, phase)
		gran := tick
		for start := 63 * tick; d > start-tick && gran < 1<<21*tick; start *= 8 {
			gran *= 8
		}
		if got < at || got.Sub(at) > gran+tick {
			t.Fatalf("armed at %v for %v: fires at %v (%v late; granule %v)", now, at, got, got.Sub(at), gran)
		}
		if (int64(got)+int64(phase))%int64(tick) != 0 {
			t.Fatalf("armed at %v for %v, phase %v: fires at %v, off the jiffy grid", now, at, phase, got)
		}
	}
}

// TestKernelTimersQuantize: on the wheel the sender's retransmission timer
// is armed on the jiffy grid, the pacing timer is not wrapped, and the
// receiver's delayed-ACK timer is.
func TestKernelTimersQuantize(t *testing.T) {
	cfg := Config{Bytes: 20 * 1448}
	h := newHarness(t, cfg, reno(1448), 10*1000*1000, 10*time.Millisecond)
	h.snd.UseKernelTimers(250, 0, h.s)
	h.rcv.UseKernelTimers(250, 0, h.s)
	h.snd.Start(0)
	h.s.RunUntil(clock.Time(5 * time.Millisecond))
	if _, ok := h.snd.rtoT.(*kernelTimer); !ok {
		t.Fatalf("retransmission timer is %T, want the wheel's", h.snd.rtoT)
	}
	if _, ok := h.snd.pacerT.(*kernelTimer); ok {
		t.Error("the pacing timer is on the wheel; Linux paces with a high-resolution timer")
	}
	if _, ok := h.rcv.delackT.(*kernelTimer); !ok {
		t.Errorf("delayed-ACK timer is %T, want the wheel's", h.rcv.delackT)
	}
	if d := h.snd.rtoT.Deadline(); d != clock.Never && int64(d)%int64(4*time.Millisecond) != 0 {
		t.Errorf("retransmission timer armed at %v, off the 4 ms jiffy grid", d)
	}
}
