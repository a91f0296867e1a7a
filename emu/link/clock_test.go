package link_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cclab/cclab/core/clock"
	nlink "github.com/cclab/cclab/netsim/link"
)

// TestClockOrigin: setup between New and Run is not part of the run (Run
// moves the clock's origin to its own start), and goroutines reading the
// clock meanwhile, as the emulator's endpoints do, always see one origin
// or the other, never a torn one (go test -race checks the access; CI
// runs this test under it). Pipes stand in for the TUN devices, so it
// needs no root.
func TestClockOrigin(t *testing.T) {
	var fds [2][2]int
	for i := range fds {
		if err := unix.Pipe2(fds[i][:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fds[i][0])
		defer unix.Close(fds[i][1])
	}
	f := newForwarder(t, fds[0][0], fds[1][0], nlink.Config{Rate: 1e6})
	f.NoRealtime = true
	created := f.Start()
	const setup = 30 * time.Millisecond
	time.Sleep(setup)
	if now := f.Now(); now < clock.Time(setup) {
		t.Fatalf("before Run, Now = %v after %v of setup: the origin is not the forwarder's creation", now, setup)
	}

	stop := make(chan struct{})
	done := make(chan clock.Time)
	go func() {
		var last clock.Time
		for {
			select {
			case <-stop:
				done <- last
				return
			default:
			}
			last = f.Now()
			_ = f.Start()
		}
	}()
	runStart := time.Now()
	if err := f.Run(clock.Time(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	ran := time.Since(runStart)
	close(stop)
	<-done

	if moved := f.Start().Sub(created); moved < setup {
		t.Errorf("Run moved the origin by %v, want at least the %v of setup", moved, setup)
	}
	// The run lasted until 20 ms on the moved clock, so Now is about the
	// run's own length, not setup plus run.
	if now := f.Now(); now < clock.Time(20*time.Millisecond) || now > clock.Time(ran+5*time.Millisecond) {
		t.Errorf("after a run of %v, Now = %v: want 20 ms to the run's length", ran, now)
	}
}
