package clock

import (
	"testing"
	"time"
)

// TestRealTimers checks the real clock's timers against the Timer contract
// the transports rely on: callbacks run on the Run goroutine in deadline
// order, a Reset replaces the earlier deadline, a stopped timer never fires.
func TestRealTimers(t *testing.T) {
	r := NewReal()
	stop := make(chan struct{})
	var order []string // touched only by callbacks: no lock needed if they run on Run's goroutine
	fire := func(name string, last bool) func(Time) {
		return func(now Time) {
			order = append(order, name)
			if last {
				close(stop)
			}
		}
	}
	now := r.Now()
	late := r.NewTimer(fire("late", true))
	early := r.NewTimer(fire("early", false))
	moved := r.NewTimer(fire("moved", false))
	stopped := r.NewTimer(fire("stopped", false))
	late.Reset(now.Add(60 * time.Millisecond))
	early.Reset(now.Add(5 * time.Millisecond))
	moved.Reset(now.Add(1 * time.Millisecond))
	moved.Reset(now.Add(30 * time.Millisecond)) // replaces the 1 ms deadline
	stopped.Reset(now.Add(2 * time.Millisecond))
	stopped.Stop()
	if stopped.Armed() || stopped.Deadline() != Never {
		t.Errorf("stopped timer: armed %v, deadline %v", stopped.Armed(), stopped.Deadline())
	}
	if !moved.Armed() || moved.Deadline() != now.Add(30*time.Millisecond) {
		t.Errorf("moved timer: armed %v, deadline %v", moved.Armed(), moved.Deadline())
	}
	done := make(chan struct{})
	go func() { r.Run(stop); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("timers did not fire")
	}
	want := []string{"early", "moved", "late"}
	if len(order) != len(want) {
		t.Fatalf("fired %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("fired %v, want %v", order, want)
		}
	}
	if late.Armed() {
		t.Errorf("a fired timer is still armed")
	}
	if elapsed := r.Now().Sub(now); elapsed < 60*time.Millisecond {
		t.Errorf("the 60 ms timer fired after %v", elapsed)
	}
}

func TestTimeArithmetic(t *testing.T) {
	a := FromSeconds(1.5)
	b := a.Add(250 * time.Millisecond)
	if b.Sub(a) != 250*time.Millisecond || !a.Before(b) || !b.After(a) || b.Seconds() != 1.75 {
		t.Errorf("arithmetic: a=%v b=%v", a, b)
	}
	if FormatSeconds(b) != "1.750" || b.String() != "1.75s" {
		t.Errorf("formatting: %q %q", FormatSeconds(b), b.String())
	}
}

// TestLoopInputAndPrecision: Loop hands input values and timer callbacks
// to one goroutine, and a chain of sub-millisecond timers (a pacer's) is
// not rounded up to the runtime's millisecond poll granularity.
func TestLoopInputAndPrecision(t *testing.T) {
	r := NewReal()
	stop := make(chan struct{})
	in := make(chan int)
	var got []int
	const gap = 200 * time.Microsecond
	const n = 100
	fired := 0
	var times [n]Time
	var tm Timer
	tm = r.NewTimer(func(now Time) {
		times[fired] = now
		fired++
		if fired < n {
			tm.Reset(now.Add(gap))
			return
		}
		if len(got) == 3 {
			close(stop)
		}
	})
	tm.Reset(r.Now())
	go func() {
		for i := range 3 {
			in <- i
		}
	}()
	done := make(chan struct{})
	go func() {
		Loop(r, stop, in, func(v int) {
			got = append(got, v)
			if len(got) == 3 && fired == n {
				close(stop)
			}
		})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("loop did not finish")
	}
	if len(got) != 3 || got[0] != 0 || got[2] != 2 {
		t.Errorf("input %v", got)
	}
	// A timer never fires early, and the clock is finer than a
	// millisecond: timers rounded to 1 ms would make every gap at least
	// 1 ms, while a sub-millisecond clock fires most gaps near 200 µs. A
	// loaded machine delays some firings, so only the shortest gap is
	// judged, not the total (which scheduling delays stretch at will).
	minGap := time.Hour
	for i := 1; i < n; i++ {
		d := times[i].Sub(times[i-1])
		if d < gap {
			t.Errorf("timer %d fired %v after the previous one, before its %v", i, d, gap)
		}
		minGap = min(minGap, d)
	}
	if minGap >= time.Millisecond {
		t.Errorf("the shortest of %d gaps of %v took %v: the clock looks rounded to milliseconds", n-1, gap, minGap)
	}
}
