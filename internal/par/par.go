// Package par runs independent jobs (the simulations of an evaluation or a
// study) on several goroutines. Callers write each job's result into a slot
// indexed by the job, so results do not depend on scheduling; parallelism
// goes across simulations, never inside one.
package par

import (
	"context"
	"sync"
)

// Workers returns how many goroutines Do uses for n jobs: at most workers,
// at most n, at least 1.
func Workers(n, workers int) int { return max(1, min(workers, n)) }

// Do calls f(w, i) for every job i in [0, n) on Workers(n, workers)
// goroutines; w identifies the goroutine, so callers can keep per-worker
// state (a policy's inference buffers). progress, if set, is called after
// each job with the number of jobs done, never concurrently. Once ctx is
// cancelled no new job starts and Do returns ctx's error.
func Do(ctx context.Context, n, workers int, progress func(done, total int), f func(w, i int)) error {
	var (
		mu         sync.Mutex
		next, done int
		wg         sync.WaitGroup
	)
	for w := range Workers(n, workers) {
		wg.Go(func() {
			for {
				mu.Lock()
				if next >= n || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				f(w, i)
				mu.Lock()
				done++
				if progress != nil {
					progress(done, n)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// Chunks calls f(lo, hi) on contiguous chunks covering [0, n), one
// goroutine per chunk and at most workers chunks, and returns when all are
// done: the fork-join of a vectorised step, where each index is cheap and
// handing them out one by one (as Do does) would cost more than the work.
// With workers <= 1 it calls f(0, n) on the caller's goroutine.
func Chunks(n, workers int, f func(lo, hi int)) {
	if workers <= 1 || n <= 1 {
		f(0, n)
		return
	}
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		wg.Go(func() { f(lo, min(lo+per, n)) })
	}
	wg.Wait()
}
