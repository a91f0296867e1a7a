package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// TestRACKRetransmissionsSentTogether: two holes at the end of a transfer
// are retransmitted in the same instant (RFC 6937's PRR lets both go on one
// ACK), and the first retransmission is lost again while the second is
// delivered. Linux orders segments sent in one instant by sequence
// (tcp_skb_sent_after), so the second's delivery dates the first, and
// RACK's time rule repairs it on the reordering timer about an RTT later;
// with nothing sent after the pair no other delivery could, and before
// this rule the retransmission timeout repaired it.
func TestRACKRetransmissionsSentTogether(t *testing.T) {
	const mss = 1448
	cfg := Config{Bytes: 60 * mss, NoDelayedAck: true, RACKRetransmissions: true}
	h := newHarness(t, cfg, reducer{cwnd: 100 * mss, ssth: 50 * mss}, 10*units.Mbps, 10*time.Millisecond)
	seen := map[int64]int{}
	var together bool
	var first clock.Time
	h.fwd.drop = func(p *packet.Packet) bool {
		if p.Kind != packet.Data {
			return false
		}
		k := p.Seq / mss
		seen[k]++
		switch {
		case (k == 50 || k == 51) && seen[k] == 1:
			return true // the originals
		case k == 50 && seen[k] == 2:
			first = h.s.Now()
			return true // the first retransmission
		case k == 51 && seen[k] == 2:
			together = h.s.Now() == first
		}
		return false
	}
	h.run(t, 10*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	if !together {
		t.Fatal("the two retransmissions did not leave in one instant")
	}
	if st := h.snd.Stats(); st.RTOs != 0 || seen[50] != 3 || st.Retransmissions != 3 {
		t.Errorf("%d RTOs, segment 50 sent %d times, %d retransmissions; want 0, 3, 3", st.RTOs, seen[50], st.Retransmissions)
	}
}
