package datacenter

import (
	"context"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/transport/udp"
	"github.com/cclab/cclab/transport/udp/udptest"

	_ "github.com/cclab/cclab/cc/bbr"
)

// TestLiveTunerTransfer: the shipped policy tunes a BBR flow over real
// UDP sockets through a lossy, duplicating, reordering 20 Mbit/s relay;
// the transfer completes with every byte delivered once and in order
// (the receiver checks each byte against the sender's pattern), and the
// tuner decided every interval and changed BBR's windows.
func TestLiveTunerTransfer(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time transfer")
	}
	p, err := LoadPolicy(ShippedPolicyPath)
	if err != nil {
		t.Fatal(err)
	}
	const rate = 20 * units.Mbps
	tu, err := NewLiveTuner(p, rate, DefaultParams)
	if err != nil {
		t.Fatal(err)
	}
	l, err := udp.Listen("127.0.0.1:0", udp.ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r, err := udptest.New(l.Addr().String(),
		udptest.Path{Delay: time.Millisecond, Rate: float64(rate), QueueBytes: 60_000, Loss: 0.01, Duplicate: 0.01, Reorder: 0.01},
		udptest.Path{Delay: time.Millisecond, Duplicate: 0.01}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type recvResult struct {
		res *live.Result
		err error
	}
	recv := make(chan recvResult, 1)
	go func() { res, err := live.Receive(ctx, l); recv <- recvResult{res, err} }()
	const size = 3_000_000
	alg, err := live.NewController("bbr", nil, udp.DefaultMSS, 1)
	if err != nil {
		t.Fatal(err)
	}
	snd, err := live.Send(ctx, live.SendOptions{Addr: r.Addr(), Alg: alg, CCLabel: "dc-bbr", Bytes: size, Attach: tu.Attach})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	rr := <-recv
	if rr.err != nil {
		t.Fatalf("receive: %v", rr.err)
	}
	if !snd.Complete || !rr.res.Complete || rr.res.Flow.BytesDelivered != size || rr.res.CorruptBytes != 0 {
		t.Fatalf("transfer: sender complete %v, receiver %+v", snd.Complete, rr.res)
	}
	fwd, _ := r.Stats()
	if fwd.Lost == 0 || fwd.Duplicated == 0 {
		t.Errorf("the relay lost %d and duplicated %d datagrams: the path was not impaired", fwd.Lost, fwd.Duplicated)
	}
	// One decision per interval on the real clock; a late step (a loaded
	// machine) is not made up, so allow for some.
	wantSteps := int(0.7 * snd.WallSeconds / tu.Interval().Seconds())
	if tu.Err != nil || tu.Steps < max(wantSteps, 3) || tu.Changes < 1 || tu.Params() == tu.Initial() {
		t.Fatalf("tuner: err %v, %d steps in %.2f s, %d changes, windows %v (started %v)", tu.Err, tu.Steps, snd.WallSeconds, tu.Changes, tu.Params(), tu.Initial())
	}
	sum := tu.Summary()
	if u := sum["dc_util_mean"]; !(u > 0 && u <= 1) {
		t.Errorf("mean utilisation term %v, want in (0, 1]", u)
	}
	t.Logf("%.2f s, %.1f Mbit/s, %d steps, %d changes, windows %v; %v", snd.WallSeconds, snd.Flow.GoodputMbps, tu.Steps, tu.Changes, tu.Params(), sum)
}
