package clock

import (
	"syscall"
	"time"
)

// prSetTimerslack is prctl's PR_SET_TIMERSLACK: the kernel may delay a
// thread's sleeps by its timer slack, 50 µs by default.
const prSetTimerslack = 29

// preciseThread lowers the calling thread's timer slack to 1 µs; Loop has
// locked its goroutine to that thread. A failure only costs precision.
func preciseThread() {
	_, _, _ = syscall.Syscall(syscall.SYS_PRCTL, prSetTimerslack, 1000, 0)
}

// sleepPrecise blocks the thread for d with nanosleep, which honours the
// timer slack, unlike the runtime's millisecond-granular poller timeout.
func sleepPrecise(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
