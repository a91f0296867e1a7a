package deepcc

import (
	"math"
	"testing"
	"time"
)

func TestFeaturesHandComputed(t *testing.T) {
	raw := stepRaw{
		dt:        50 * time.Millisecond,
		delivered: 50_000, // 8 Mbit/s over 50 ms
		sent:      62_500, // 10 Mbit/s
		segsSent:  40, segsLost: 2,
		rttMean: 60 * time.Millisecond, rttLatest: 75 * time.Millisecond,
		minRTT: 50 * time.Millisecond,
		cwnd:   125_000, inflight: 100_000,
	}
	d, s := raw.rates()
	if d != 8e6 || s != 10e6 {
		t.Fatalf("rates = %g, %g bit/s, want 8e6, 10e6", d, s)
	}
	in := featureInput{bw: 10e6, prevBw: 5e6, prevDelivery: 4e6, qdelay: 10 * time.Millisecond,
		prevAction: 0.25, bdp: 62_500, delivery: d, sending: s}
	got := make([]float32, NumFeatures)
	features(raw, in, got)
	want := map[int]float64{
		FeatDelivery:      0.8,                                  // 8 / 10 Mbit/s
		FeatSending:       1,                                    // 10 / 10
		FeatRTTRatio:      0.2,                                  // 60/50 - 1
		FeatLatestRTT:     0.5,                                  // 75/50 - 1
		FeatLoss:          0.05,                                 // 2 of 40
		FeatCwnd:          1,                                    // log2(125000/62500)
		FeatInflight:      1.6,                                  // 100000/62500
		FeatBwTrend:       1,                                    // log2(10/5)
		FeatDeliveryTrend: math.Log2((8e6 + 1e5) / (4e6 + 1e5)), // eps = 1% of bw
		FeatMinRTT:        0.5,                                  // 50 ms / 100 ms
		FeatQDelay:        0.1,                                  // 10 ms / 100 ms
		FeatBandwidth:     math.Log2(10),                        // 10 Mbit/s
		FeatAction:        0.25,
	}
	if len(want) != NumFeatures {
		t.Fatalf("test covers %d features, want all %d", len(want), NumFeatures)
	}
	for i, w := range want {
		if math.Abs(float64(got[i])-w) > 1e-5 {
			t.Errorf("feature %s = %g, want %g", FeatureNames[i], got[i], w)
		}
	}
}

func TestFeaturesClampExtremes(t *testing.T) {
	raw := stepRaw{dt: time.Millisecond, segsSent: 0, segsLost: 5, rttMean: 10 * time.Second, minRTT: 10 * time.Millisecond, cwnd: 1 << 30}
	in := featureInput{bw: 1e6, prevBw: 1, prevDelivery: 0, qdelay: time.Hour, prevAction: -7, bdp: 1, delivery: 1e12, sending: 1e12}
	got := make([]float32, NumFeatures)
	features(raw, in, got)
	for i, v := range got {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || math.Abs(float64(v)) > 20 {
			t.Errorf("feature %s = %g, want finite and within +-20", FeatureNames[i], v)
		}
	}
	if got[FeatLoss] != 1 || got[FeatAction] != -1 || got[FeatQDelay] != MaxDelayTerm {
		t.Errorf("loss %g, action %g, qdelay %g; want 1, -1, %g", got[FeatLoss], got[FeatAction], got[FeatQDelay], MaxDelayTerm)
	}
}

func TestMaxFilter(t *testing.T) {
	f := newMaxFilter(3)
	if f.max() != 0 {
		t.Errorf("empty filter max = %g, want 0", f.max())
	}
	for i, tc := range []struct{ add, want float64 }{{5, 5}, {2, 5}, {3, 5}, {1, 3}, {4, 4}, {0, 4}, {0, 4}, {0, 0}} {
		f.add(tc.add)
		if got := f.max(); got != tc.want {
			t.Errorf("after adding #%d (%g): max = %g, want %g (window of 3)", i, tc.add, got, tc.want)
		}
	}
	f.reset()
	if f.max() != 0 {
		t.Errorf("after reset max = %g, want 0", f.max())
	}
}

func TestSelfLimited(t *testing.T) {
	base := stepRaw{minRTT: 40 * time.Millisecond, rttMean: 42 * time.Millisecond}
	queued := base
	queued.rttMean = 60 * time.Millisecond
	for _, tc := range []struct {
		name          string
		gain, del, bw float64
		raw           stepRaw
		want          bool
	}{
		{"gain below 1, no queue", 0.5, 4e6, 8e6, base, true},
		{"gain at 1", 1, 4e6, 8e6, base, false},
		{"queue: the link limits", 0.5, 4e6, 8e6, queued, false},
		{"faster than the estimate", 0.5, 9e6, 8e6, base, false},
		{"no RTT sample (outage)", 0.5, 0, 8e6, stepRaw{minRTT: 40 * time.Millisecond}, false},
	} {
		if got := selfLimited(tc.gain, tc.del, tc.bw, tc.raw); got != tc.want {
			t.Errorf("%s: selfLimited = %v, want %v", tc.name, got, tc.want)
		}
	}
}
