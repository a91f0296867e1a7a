package netgen

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/rpc/netgen/netgenpb"
	"github.com/cclab/cclab/transport/udp"
	"github.com/cclab/cclab/transport/udp/udptest"
)

func client(t *testing.T, links map[string]Link) netgenpb.NetGenClient {
	t.Helper()
	path := filepath.Join(t.TempDir(), "netgen.sock")
	g := grpc.NewServer()
	netgenpb.RegisterNetGenServer(g, NewServer(links))
	lis, err := listenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return netgenpb.NewNetGenClient(conn)
}

// TestRelayRateChange: a driver cuts the relay's rate mid-transfer over
// the RPC; the transfer's goodput afterwards stays under the new rate.
func TestRelayRateChange(t *testing.T) {
	l, err := udp.Listen("127.0.0.1:0", udp.ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := udptest.Path{Rate: 40e6, Delay: 2 * time.Millisecond, QueueBytes: 100_000}
	relay, err := udptest.New(l.Addr().String(), start, udptest.Path{Delay: 2 * time.Millisecond}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	c := client(t, map[string]Link{"bottleneck": NewRelayLink(relay, true, start)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	measure := func(d time.Duration) float64 {
		done := make(chan struct{})
		go func() { _, _ = live.Receive(ctx, l); close(done) }()
		res, err := live.Send(ctx, live.SendOptions{Addr: relay.Addr(), CC: "cubic", Duration: d})
		<-done
		if err != nil {
			t.Fatal(err)
		}
		return res.Flow.GoodputMbps
	}
	before := measure(time.Second)
	st, err := c.SetLink(ctx, &netgenpb.SetLinkRequest{Link: "bottleneck", RateBps: proto.Float64(4e6)})
	if err != nil || st.RateBps != 4e6 || st.DelayUs != 2000 {
		t.Fatalf("set: %v %v", st, err)
	}
	after := measure(1500 * time.Millisecond)
	// The relay counts IP and UDP headers: payload goodput stays below
	// 4 Mbit/s x 1432/1500.
	if after > 4*1432.0/1500*1.02 || after >= before {
		t.Errorf("goodput %.2f Mbit/s before, %.2f after cutting the rate to 4 Mbit/s", before, after)
	}
	t.Logf("goodput %.2f -> %.2f Mbit/s", before, after)
}

func TestBadRequests(t *testing.T) {
	c := client(t, map[string]Link{"l": NewRelayLink(nil, true, udptest.Path{})})
	ctx := context.Background()
	for _, req := range []*netgenpb.SetLinkRequest{
		{Link: "l", Loss: proto.Float64(1.5)},
		{Link: "l", RateBps: proto.Float64(-1)},
		{Link: "l", DelayUs: proto.Int64(-5)},
		{Link: "l", QueueBytes: proto.Int64(0)},
	} {
		if _, err := c.SetLink(ctx, req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%v: got %v, want InvalidArgument", req, err)
		}
	}
	if _, err := c.GetLink(ctx, &netgenpb.GetLinkRequest{Link: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown link: %v", err)
	}
}

// TestEmuRateChange drives the emulator's bottleneck over the RPC while a
// kernel CUBIC flow runs: 20 Mbit/s for 2 s, then 2 Mbit/s for 3 s.
func TestEmuRateChange(t *testing.T) {
	if err := netns.Check(); err != nil {
		t.Skipf("emulator unavailable: %v", err)
	}
	s, _, err := scenario.Decode([]byte(`
name: netgen
seed: 1
duration: 5s
bottleneck: {rate: 20Mbps, delay: 10ms, queue: {discipline: droptail, limit: 100}}
flows: [{name: bulk, cc: cubic}]
`), "netgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	set := make(chan error, 1)
	res, _, err := emu.Run(context.Background(), s, emu.Options{OnStart: func(ctl *emu.Control) {
		c := client(t, map[string]Link{"bottleneck": EmuLink{C: ctl}})
		go func() {
			time.Sleep(2 * time.Second)
			_, err := c.SetLink(context.Background(), &netgenpb.SetLinkRequest{Link: "bottleneck", RateBps: proto.Float64(2e6)})
			set <- err
		}()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-set; err != nil {
		t.Fatal(err)
	}
	// About 20 Mbit/s for 2 s and 2 Mbit/s for 3 s: 5.75 MB (plus the
	// RPC's latency at 20 Mbit/s); without the change 12.5 MB.
	got := res.Flows[0].BytesDelivered
	if got > 6_000_000 || got < 3_000_000 {
		t.Errorf("delivered %d bytes; the link allowed about 5.75 MB", got)
	}
	t.Logf("delivered %d bytes", got)
}

func listenUnix(path string) (net.Listener, error) { return net.Listen("unix", path) }
