package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

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

// TestAgainstReference runs random schedules, timer resets and stops against
// a brute-force model (sort by time then sequence).
func TestAgainstReference(t *testing.T) {
	type ev struct {
		at  clock.Time
		seq int
		id  int
	}
	for seed := range uint64(20) {
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
			timers[i] = s.Timer(func(now clock.Time) { r.Handle(now, id) })
			timerRef[i] = -1
		}
		for i := range 300 {
			seq++
			switch k := rnd.IntN(10); {
			case k < 6:
				at := clock.Time(rnd.IntN(50))
				s.At(at, r, i)
				ref = append(ref, ev{at, seq, i})
			case k < 9:
				j := rnd.IntN(nTimers)
				at := clock.Time(rnd.IntN(50))
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
