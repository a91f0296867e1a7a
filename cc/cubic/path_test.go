package cubic

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc/cctest"
	"github.com/cclab/cclab/core/units"
)

// Over a drop-tail bottleneck with a one-BDP buffer CUBIC keeps the link
// busy (beta = 0.7 leaves 1.4 BDP after a loss at 2 BDP), its window between
// losses stays on the cubic curve of the epoch, and at a short RTT it spends
// most of its time in the Reno-friendly region.
func TestPathSteadyState(t *testing.T) {
	tests := []struct {
		name         string
		base         time.Duration
		wantFriendly bool // most congestion-avoidance ACKs in the Reno-friendly region
	}{
		{"long RTT", 50 * time.Millisecond, false},
		{"short RTT", 2 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const rate = 20 * units.Mbps
			cu := newCubic(t, nil)
			bdp := rate.BytesIn(tt.base)
			queue := max(bdp, 20*mss)
			var caAcks, friendly, offCurve int
			worst := 0.0
			p := cctest.NewPath(t, cu, cctest.PathConfig{Rate: rate, BaseRTT: tt.base, QueueLimit: queue, MSS: mss}, func(o *cctest.Observation) {
				s := cu.Snapshot()
				if !s.InEpoch || o.Ack.InRecovery || s.WMax == 0 || o.Now.Duration() < 2*time.Second {
					return
				}
				caAcks++
				tEpoch := o.Now.Sub(s.EpochStart)
				cv := Curve{C: 0.4, WMax: s.CurveWMax, K: s.K}
				if cv.Window(tEpoch) < s.WEst {
					friendly++
					return
				}
				// In the cubic regions cwnd lies between W_cubic(t) and
				// W_cubic(t+SRTT) (it aims one RTT ahead), up to a segment
				// of quantisation and the lag of a round of ACKs.
				w := segs(o.Cwnd)
				lo, hi := cv.Window(tEpoch)-2, cv.Window(tEpoch+o.Ack.SRTT)+1
				if w < lo || w > hi {
					offCurve++
					worst = max(worst, w-hi, lo-w)
				}
			})
			p.Run(60 * time.Second)
			st := p.Stats()
			goodput := units.BandwidthFromDelta(st.Delivered, 60*time.Second)
			t.Logf("goodput %v, %d congestion events, %d timeouts, %d CA ACKs (%d Reno-friendly), %d off the curve (worst %.2f segments)",
				goodput, st.CongestionEvents, st.Timeouts, caAcks, friendly, offCurve, worst)
			if goodput < rate*95/100 {
				t.Errorf("goodput %v, want at least 95%% of %v", goodput, rate)
			}
			if st.CongestionEvents < 3 || st.Timeouts != 0 {
				t.Errorf("%d congestion events, %d timeouts; want a sawtooth (at least 3) and no timeouts", st.CongestionEvents, st.Timeouts)
			}
			if offCurve != 0 {
				t.Errorf("%d of %d cubic-region ACKs had cwnd off [W_cubic(t)-2, W_cubic(t+SRTT)+1] (worst by %.2f segments)", offCurve, caAcks-friendly, worst)
			}
			if got := 2*friendly > caAcks; got != tt.wantFriendly {
				t.Errorf("Reno-friendly for %d of %d CA ACKs; want majority = %v", friendly, caAcks, tt.wantFriendly)
			}
		})
	}
}
