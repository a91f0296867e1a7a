package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/cclab/cclab/core/clock"
)

type recorder struct {
	got []int
	at  []clock.Time
}

func (r *recorder) Handle(now clock.Time, arg any) {
	r.got = append(r.got, arg.(int))
	r.at = append(r.at, now)
}

func TestSameInstantFIFO(t *testing.T) {
	s := New()
	r := &recorder{}
	for i := range 100 {
		s.At(clock.Time(i%3), r, i)
	}
	s.Run()
	// Events at one instant run in scheduling order.
	var want []int
	for k := range 3 {
		for i := range 100 {
			if i%3 == k {
				want = append(want, i)
			}
		}
	}
	if !slices.Equal(r.got, want) {
		t.Fatalf("order = %v, want %v", r.got, want)
	}
}

// TestAtSeqKeepsReservedPlace: calls scheduled late with sequence numbers
// reserved early (AtSeq) run in the order At would have given them at the
// reservation, among same-instant events scheduled in between, whether
// they are scheduled before the run or from an event of the same instant.
func TestAtSeqKeepsReservedPlace(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	type res struct {
		at  clock.Time
		seq uint64
		id  int
	}
	a, b := New(), New()
	ra, rb := &recorder{}, &recorder{}
	var reserved []res
	for i := range 200 {
		at := clock.Time(rnd.IntN(5))
		a.At(at, ra, i)
		if i%3 == 0 {
			reserved = append(reserved, res{at, b.Seq(), i})
		} else {
			b.At(at, rb, i)
		}
	}
	// b schedules its reserved calls one at a time, each from the one
	// before, in (time, sequence) order, as a network schedules its flows'
	// starts.
	slices.SortFunc(reserved, func(x, y res) int {
		if x.at != y.at {
			return int(x.at - y.at)
		}
		return int(x.seq) - int(y.seq)
	})
	var chain HandlerFunc
	chain = func(now clock.Time, arg any) {
		k := arg.(int)
		rb.Handle(now, reserved[k].id)
		if k+1 < len(reserved) {
			b.AtSeq(reserved[k+1].at, reserved[k+1].seq, chain, k+1)
		}
	}
	b.AtSeq(reserved[0].at, reserved[0].seq, chain, 0)
	a.Run()
	b.Run()
	if !slices.Equal(ra.got, rb.got) || !slices.Equal(ra.at, rb.at) {
		t.Fatalf("AtSeq order %v\n     At order %v", rb.got, ra.got)
	}
}

// TestAgainstReference runs random schedules, timer resets and stops against
// a brute-force model (sort by time then sequence). For seeds from 10 on
// two of the timers are hot (HotTimer), ordered among the one-shot calls
// and the other timers alike.
func TestAgainstReference(t *testing.T) {
	type ev struct {
		at  clock.Time
		seq int
		id  int
	}
	// Scales put the deadlines in one wheel bucket, across buckets, and
	// beyond the wheel's span.
	for i := range uint64(60) {
		seed, scale := i/3, []clock.Time{1, 100_003, 77_000_000}[i%3]
		rnd := rand.New(rand.NewPCG(seed, 1))
		s := New()
		r := &recorder{}
		var ref []ev
		seq := 0
		const nTimers = 5
		timers := make([]*Timer, nTimers)
		timerRef := make([]int, nTimers) // index into ref, -1 if disarmed
		for i := range timers {
			id := 1000 + i
			f := func(now clock.Time) { r.Handle(now, id) }
			if seed >= 10 && i < 2 {
				timers[i] = s.HotTimer(f)
			} else {
				timers[i] = s.Timer(f)
			}
			timerRef[i] = -1
		}
		for i := range 300 {
			seq++
			switch k := rnd.IntN(10); {
			case k < 6:
				at := clock.Time(rnd.IntN(50)) * scale
				s.At(at, r, i)
				ref = append(ref, ev{at, seq, i})
			case k < 9:
				j := rnd.IntN(nTimers)
				at := clock.Time(rnd.IntN(50)) * scale
				timers[j].Reset(at)
				if timerRef[j] >= 0 {
					ref[timerRef[j]].id = -1 // replaced
				}
				ref = append(ref, ev{at, seq, 1000 + j})
				timerRef[j] = len(ref) - 1
			default:
				j := rnd.IntN(nTimers)
				timers[j].Stop()
				if timerRef[j] >= 0 {
					ref[timerRef[j]].id = -1
					timerRef[j] = -1
				}
			}
		}
		s.Run()
		slices.SortStableFunc(ref, func(a, b ev) int {
			if a.at != b.at {
				return int(a.at - b.at)
			}
			return a.seq - b.seq
		})
		var want []int
		for _, e := range ref {
			if e.id >= 0 {
				want = append(want, e.id)
			}
		}
		if !slices.Equal(r.got, want) {
			t.Fatalf("seed %d: order\n got %v\nwant %v", seed, r.got, want)
		}
		if !slices.IsSorted(r.at) {
			t.Fatalf("seed %d: time went backwards: %v", seed, r.at)
		}
	}
}

func TestRunUntil(t *testing.T) {
	s := New()
	r := &recorder{}
	s.At(5, r, 1)
	s.At(10, r, 2)
	s.RunUntil(7)
	if got, want := s.Now(), clock.Time(7); got != want {
		t.Errorf("Now after RunUntil(7) = %v, want %v", got, want)
	}
	if len(r.got) != 1 {
		t.Errorf("ran %d events by t=7, want 1", len(r.got))
	}
	s.RunUntil(100)
	if len(r.got) != 2 || s.Events() != 2 {
		t.Errorf("ran %d events (counter %d), want 2", len(r.got), s.Events())
	}
}

func TestTimerRearmFromCallback(t *testing.T) {
	s := New()
	n := 0
	var tm *Timer
	tm = s.Timer(func(now clock.Time) {
		n++
		if n < 10 {
			tm.Reset(now + 10)
		}
	})
	tm.Reset(0)
	s.Run()
	if n != 10 || s.Now() != 90 {
		t.Errorf("fired %d times ending at %v, want 10 at 90", n, s.Now())
	}
	if tm.Armed() || tm.Deadline() != clock.Never {
		t.Errorf("timer still armed after last firing")
	}
}

// TestTimersAgainstReference drives timers from their own callbacks and
// from one-shot events while time advances in RunUntil slices, as the
// network does (re-armed RTO and delayed-ACK timers, stopped and re-armed
// again), and checks every firing against a model that knows each timer's
// deadline and arming order.
func TestTimersAgainstReference(t *testing.T) {
	timersAgainstReference(t, 40, 10, []clock.Time{0, 1, 1000, 40_000_000, 200_000_000, 3_000_000_000}, false)
}

// TestInitTimerAgainstReference is TestTimersAgainstReference with every
// other timer initialised in place (InitTimer, in one shared array, as a
// simulation keeps a flow's timers in one allocation) and the others from
// Timer: both kinds fire, re-arm and stop as the model says, interleaved.
func TestInitTimerAgainstReference(t *testing.T) {
	timersAgainstReference(t, 40, 10, []clock.Time{0, 1, 1000, 40_000_000, 200_000_000, 3_000_000_000}, true)
	timersAgainstReference(t, 300, 2, []clock.Time{0, 1, 1 << wheelShift, wheelSpan - 1, wheelSpan, 40_000_000}, true)
}

// TestHotTimersAgainstReference is TestTimersAgainstReference with hot
// timers (HotTimer, kept out of the heap) among ordinary ones: 3 of 10, as
// a dumbbell's link and two delay lines among flows' timers; all of 8, so
// that the heap is often empty; and 12 of 40, more than the scheduler keeps
// hot. They fire, re-arm and stop in the model's (time, arming order),
// across wheel buckets and RunUntil slices.
func TestHotTimersAgainstReference(t *testing.T) {
	delays := []clock.Time{0, 1, 1000, 1 << wheelShift, 4_000_000, 40_000_000}
	timersAgainstReference(t, 10, 10, delays, false, 3)
	timersAgainstReference(t, maxHot, 10, delays, false, maxHot)
	timersAgainstReference(t, 40, 5, append(delays, 200_000_000, 3_000_000_000), true, maxHot+4)
}

// TestInitTimerFields: a timer initialised in place starts exactly as one
// from Timer (disarmed, unqueued, the next id), whatever the memory held.
func TestInitTimerFields(t *testing.T) {
	s := New()
	a := s.Timer(func(clock.Time) {})
	b := Timer{at: 5, wat: 7, seq: 9, wslot: 3, id: 42}
	s.InitTimer(&b, func(clock.Time) {})
	c := s.Timer(func(clock.Time) {})
	if b.s != s || b.id != a.id+1 || c.id != b.id+1 || b.wslot != a.wslot || b.at != clock.Never || b.wat != a.wat || b.seq != a.seq || b.Armed() {
		t.Fatalf("in place %+v, from Timer %+v", b, *a)
	}
	if s.timers[b.id] != &b || s.pos[b.id] != -1 {
		t.Fatal("the scheduler does not know the timer initialised in place")
	}
}

// TestCrowdedWheelAgainstReference: many timers crowding into the same
// wheel buckets (several chunks each, removals from the middle of a chunk
// chain, re-filing exactly a wheel span later) still fire in the model's
// order.
func TestCrowdedWheelAgainstReference(t *testing.T) {
	timersAgainstReference(t, 300, 2, []clock.Time{0, 1, 1 << wheelShift, 3 << wheelShift, wheelSpan - 1, wheelSpan, wheelSpan + 1<<wheelShift, 40_000_000}, false)
}

// timersAgainstReference: with hot > 0 the first hot timers come from
// HotTimer (beyond maxHot they are ordinary timers).
func timersAgainstReference(t *testing.T, nTimers int, seeds uint64, delays []clock.Time, inPlace bool, hot ...int) {
	for seed := range seeds {
		rnd := rand.New(rand.NewPCG(seed, 7))
		s := New()
		type arm struct {
			at  clock.Time
			seq int
		}
		armed := make([]arm, nTimers)
		seq := 0
		var got, want []int
		timers := make([]*Timer, nTimers)
		rearm := func(j int, now clock.Time) {
			switch k := rnd.IntN(8); {
			case k == 0:
				timers[j].Stop()
				armed[j] = arm{clock.Never, 0}
			default:
				d := delays[rnd.IntN(len(delays))]
				at := now + clock.Time(rnd.Int64N(int64(d)+1))
				timers[j].Reset(at)
				seq++
				armed[j] = arm{at, seq}
			}
		}
		block := make([]Timer, nTimers)
		for j := range timers {
			f := func(now clock.Time) {
				got = append(got, j)
				// The model's next firing: the earliest (deadline, arming order).
				best := -1
				for i, a := range armed {
					if a.at != clock.Never && (best < 0 || a.at < armed[best].at || a.at == armed[best].at && a.seq < armed[best].seq) {
						best = i
					}
				}
				want = append(want, best)
				if armed[best].at != now {
					t.Fatalf("seed %d: timer %d fired at %v, model says %d at %v", seed, j, now, best, armed[best].at)
				}
				armed[j] = arm{clock.Never, 0}
				// Re-arm itself and disturb two others.
				rearm(j, now)
				rearm(rnd.IntN(nTimers), now)
				rearm(rnd.IntN(nTimers), now)
			}
			if len(hot) > 0 && j < hot[0] {
				timers[j] = s.HotTimer(f)
			} else if inPlace && j%2 == 0 {
				s.InitTimer(&block[j], f)
				timers[j] = &block[j]
			} else {
				timers[j] = s.Timer(f)
			}
			armed[j] = arm{clock.Never, 0}
		}
		for j := range timers {
			rearm(j, 0)
		}
		for end := clock.Time(0); end < 1_000_000_000; end += 7_000_000 {
			s.RunUntil(end)
			if s.Now() != end {
				t.Fatalf("seed %d: RunUntil(%v) left the clock at %v", seed, end, s.Now())
			}
		}
		if i := firstDiff(got, want); len(got) < 1000 || i >= 0 {
			t.Logf("first diff at %d: got %v want %v", i, got[max(i-3, 0):min(i+3, len(got))], want[max(i-3, 0):min(i+3, len(got))])
			t.Fatalf("seed %d: %d firings, order differs from the model", seed, len(got))
		}
	}
}

type nop struct{}

func (nop) Handle(clock.Time, any) {}

func BenchmarkScheduleStep(b *testing.B) {
	s := New()
	h := nop{}
	var arg any = &struct{}{}
	for i := range 1000 { // a working set like a 1000-flow run
		s.At(clock.Time(i), h, arg)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Step()
		s.After(1000, h, arg)
	}
}

func BenchmarkTimerReset(b *testing.B) {
	s := New()
	tm := s.Timer(func(clock.Time) {})
	for i := range 1000 {
		s.At(clock.Time(i), nop{}, nil)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		tm.Reset(clock.Time(i % 2000))
	}
}

func firstDiff(a, b []int) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// TestCrowdedBucket: 200 timers in one wheel bucket (four chunks); every
// third is re-armed earlier (taken out of the middle of the chain) and
// every seventh stopped. All the others fire once, in deadline order.
func TestCrowdedBucket(t *testing.T) {
	s := New()
	const n = 200
	var fired []int
	ts := make([]*Timer, n)
	for i := range ts {
		ts[i] = s.Timer(func(clock.Time) { fired = append(fired, i) })
	}
	base := clock.Time(5 << wheelShift)
	for i := range ts {
		ts[i].Reset(base + clock.Time(n-i))
	}
	for i := 0; i < n; i += 3 {
		ts[i].Reset(2<<wheelShift + clock.Time(i))
	}
	var want []int
	for i := 0; i < n; i += 3 {
		if i%7 != 1 {
			want = append(want, i)
		}
	}
	for i := n - 1; i >= 0; i-- {
		if i%3 != 0 && i%7 != 1 {
			want = append(want, i)
		}
	}
	for i := 1; i < n; i += 7 {
		ts[i].Stop()
	}
	s.Run()
	if i := firstDiff(fired, want); i >= 0 || len(fired) != len(want) {
		t.Fatalf("fired %d timers, want %d; first difference at %d", len(fired), len(want), i)
	}
}

// BenchmarkSelfRearm: a few timers that re-arm themselves from their
// callbacks (delay-line heads, a link, per-flow timers of one flow), the
// engine's work in a one-flow run.
func BenchmarkSelfRearm(b *testing.B) {
	s := New()
	periods := []clock.Time{1_200_000, 10_000_000, 10_000_000, 40_000_000, 200_000_000, 300_000}
	for _, p := range periods {
		var tm *Timer
		tm = s.Timer(func(now clock.Time) { tm.Reset(now + p) })
		tm.Reset(p)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Step()
	}
}

// chain is a one-shot handler that schedules the next link of its chain and
// creates a timer (as a flow's set-up does between its start events).
type chain struct {
	s      *Scheduler
	got    []int
	timers []*Timer
}

func (c *chain) Handle(now clock.Time, arg any) {
	i := *arg.(*int)
	c.got = append(c.got, i)
	c.timers = append(c.timers, c.s.Timer(func(clock.Time) {}))
	if i+4 < 400 {
		next := i + 4
		c.s.At(now+1, c, &next)
	}
}

// TestCallSlotsFollowPendingCalls checks that one-shot calls take slots only
// while pending, whatever the number of timers created in between, and that
// a reused slot delivers its own handler's argument.
func TestCallSlotsFollowPendingCalls(t *testing.T) {
	s := New()
	c := &chain{s: s}
	for i := range 4 {
		s.At(0, c, &i)
	}
	s.Run()
	if len(c.got) != 400 {
		t.Fatalf("ran %d calls, want 400", len(c.got))
	}
	for k, i := range c.got {
		// Four chains, one link each per nanosecond, in scheduling order.
		if want := k; i != want {
			t.Fatalf("call %d got argument %d, want %d", k, i, want)
		}
	}
	if len(s.calls) > 4 {
		t.Errorf("%d call slots for at most 4 pending calls (and %d timers)", len(s.calls), len(c.timers))
	}
	if len(s.pos) != len(c.timers)+1 || len(s.timers) != len(s.pos) {
		t.Errorf("per-id arrays %d and %d long for %d timers, want %d", len(s.pos), len(s.timers), len(c.timers), len(c.timers)+1)
	}
}

// TestTimerSize keeps a Timer in the 48-byte size class: a many-flow run
// holds five per flow.
func TestTimerSize(t *testing.T) {
	if n := unsafe.Sizeof(Timer{}); n > 48 {
		t.Errorf("Timer is %d bytes, want at most 48", n)
	}
}
