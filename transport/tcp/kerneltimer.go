package tcp

import (
	"time"

	"github.com/cclab/cclab/core/clock"
)

// kernelTimer arms a timer as Linux's timer wheel would (kernel/time/
// timer.c): the timeout becomes whole jiffies of the kernel's tick,
// rounded up (usecs_to_jiffies), counted from the current jiffy, and the
// wheel files it at the next multiple of its level's granularity past
// that (calc_wheel_index: one jiffy for timeouts under 63 jiffies, 8 under
// 504, 64 under 4032, and so on by eights), so it never fires early and
// fires up to a granule late. Timeouts of flows armed within one jiffy or
// granule of each other then expire in the same tick: at HZ=250 a
// backed-off RTO of 0.5-2 s is rounded to 32 ms, one of 2-16 s to 256 ms,
// and flows that lost their first windows together retransmit together
// (Sender.UseKernelTimers, Receiver.UseKernelTimers).
type kernelTimer struct {
	clock.Timer
	clk   clock.Clock
	tick  time.Duration
	phase time.Duration
}

// Reset arms the timer for the wheel's expiry of a timeout ending at at.
func (k *kernelTimer) Reset(at clock.Time) {
	k.Timer.Reset(wheelExpiry(k.clk.Now(), at, k.tick, k.phase))
}

// wheelExpiry is when Linux's timer wheel fires a timer armed at now for
// a timeout ending at at, with a tick of tick, on a wheel whose jiffy
// counter read phase/tick jiffies at time zero; a time not after now, or
// Never, stays.
func wheelExpiry(now, at clock.Time, tick, phase time.Duration) clock.Time {
	if at <= now || at == clock.Never {
		return at
	}
	t := int64(tick)
	now += clock.Time(phase)
	at += clock.Time(phase)
	jiffies := int64(now) / t
	timeout := (int64(at-now) + t - 1) / t
	expires := jiffies + timeout
	// LVL_START(n) = 63 << 3(n-1); each level's granule is 8 times the
	// last's (LVL_CLK_SHIFT 3).
	shift := uint(0)
	for start := int64(63); timeout >= start && shift < 3*8; start <<= 3 {
		shift += 3
	}
	return clock.Time(((expires>>shift)+1)<<shift*t) - clock.Time(phase)
}

// UseKernelTimers puts the sender's timers that Linux keeps on its timer
// wheel, the retransmission timer and the loss probe's and RACK's
// reordering timeouts (which Linux holds in the same timer), on a wheel
// of hz ticks a second whose jiffy counter read phase/tick at clk's time
// zero, clk giving the time they are armed at; pacing, on a
// high-resolution timer in Linux, stays exact. A host's jiffies at an
// experiment's start are arbitrary, and where a run's start falls in a
// granule moves synchronised timeouts (docs/fidelity.md, "The wheel's
// phase"), so a simulation draws phase per run; every endpoint of one
// host shares it. Call it after InitSender and before Start; hz <= 0
// leaves every timer exact. It is a setting of the host's kernel rather
// than of the connection, so it is not in Config (and the Sender keeps its
// size).
func (s *Sender) UseKernelTimers(hz int, phase time.Duration, clk clock.Clock) {
	kernelTimers(hz, phase, clk, &s.rtoT, &s.rackT, &s.tlp.timer)
}

// UseKernelTimers puts the receiver's delayed-ACK timer on a wheel of hz
// ticks a second (Sender.UseKernelTimers).
func (r *Receiver) UseKernelTimers(hz int, phase time.Duration, clk clock.Clock) {
	kernelTimers(hz, phase, clk, &r.delackT)
}

// kernelTimers wraps each non-nil timer to fire as the wheel would.
func kernelTimers(hz int, phase time.Duration, clk clock.Clock, timers ...*clock.Timer) {
	if hz <= 0 {
		return
	}
	tick := time.Second / time.Duration(hz)
	for _, t := range timers {
		if *t != nil {
			*t = &kernelTimer{Timer: *t, clk: clk, tick: tick, phase: phase}
		}
	}
}
