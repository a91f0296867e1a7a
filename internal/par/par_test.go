package par

import (
	"context"
	"sync/atomic"
	"testing"
)

func TestDoEveryJobOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 4}, {1, 4}, {10, 1}, {100, 3}, {5, 0}} {
		hits := make([]int32, tc.n)
		var maxW atomic.Int32
		last := 0
		err := Do(context.Background(), tc.n, tc.workers, func(done, total int) {
			if done != last+1 || total != tc.n {
				t.Errorf("progress %d/%d after %d", done, total, last)
			}
			last = done
		}, func(w, i int) {
			atomic.AddInt32(&hits[i], 1)
			if int32(w) > maxW.Load() {
				maxW.Store(int32(w))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hits {
			if h != 1 {
				t.Errorf("n=%d workers=%d: job %d ran %d times", tc.n, tc.workers, i, h)
			}
		}
		if last != tc.n || int(maxW.Load()) >= Workers(tc.n, tc.workers) {
			t.Errorf("n=%d workers=%d: %d jobs reported, worker index up to %d", tc.n, tc.workers, last, maxW.Load())
		}
	}
}

func TestDoStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	err := Do(ctx, 1000, 2, nil, func(w, i int) {
		if ran.Add(1) == 10 {
			cancel()
		}
	})
	if err == nil || ran.Load() > 12 {
		t.Errorf("after cancel: error %v, %d jobs ran", err, ran.Load())
	}
}

func TestChunksCoverOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 3}, {1, 4}, {10, 1}, {10, 3}, {7, 7}, {5, 9}} {
		hits := make([]int32, tc.n)
		var chunks atomic.Int32
		Chunks(tc.n, tc.workers, func(lo, hi int) {
			chunks.Add(1)
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&hits[i], 1)
			}
		})
		for i, h := range hits {
			if h != 1 {
				t.Errorf("n=%d workers=%d: index %d covered %d times", tc.n, tc.workers, i, h)
			}
		}
		if c := int(chunks.Load()); c > max(tc.workers, 1) {
			t.Errorf("n=%d workers=%d: %d chunks", tc.n, tc.workers, c)
		}
	}
}
