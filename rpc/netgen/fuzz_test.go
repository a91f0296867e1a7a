package netgen

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/rpc/netgen/netgenpb"
)

// recordLink keeps the last change it was handed and refuses nothing, so
// that what reaches it is what the server let through.
type recordLink struct {
	got   Change
	calls int
}

func (l *recordLink) Get() (Settings, error) { return Settings{}, nil }

func (l *recordLink) Set(c Change) (Settings, error) {
	l.got = c
	l.calls++
	return Settings{}, nil
}

// FuzzSetLink decodes arbitrary bytes as a SetLinkRequest and hands it to
// the server: it never panics, refuses with INVALID_ARGUMENT naming the
// field, and what it passes on to the link is exactly what was asked, in
// range: no rate or delay turned negative or wrapped round by a conversion
// (an infinite rate_bps once became a negative rate; a delay_us past
// 9.2e15 one of a few nanoseconds).
func FuzzSetLink(f *testing.F) {
	for _, r := range []*netgenpb.SetLinkRequest{
		{Link: "l", RateBps: proto.Float64(2e6)},
		{Link: "l", RateBps: proto.Float64(math.Inf(1))},
		{Link: "l", RateBps: proto.Float64(1e30)},
		{Link: "l", RateBps: proto.Float64(0.5)},
		{Link: "l", DelayUs: proto.Int64(18446744073709552)},
		{Link: "l", DelayUs: proto.Int64(math.MaxInt64)},
		{Link: "l", DelayUs: proto.Int64(-1)},
		{Link: "l", Loss: proto.Float64(math.NaN())},
		{Link: "l", QueueBytes: proto.Int64(math.MinInt64)},
		{Link: "l", RateBps: proto.Float64(1e15), DelayUs: proto.Int64(math.MaxInt64 / 1000), Loss: proto.Float64(0.999), QueueBytes: proto.Int64(math.MaxInt64)},
		{Link: "other"},
	} {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var req netgenpb.SetLinkRequest
		if proto.Unmarshal(b, &req) != nil {
			return
		}
		l := &recordLink{}
		srv := NewServer(map[string]Link{"l": l})
		_, err := srv.SetLink(context.Background(), &req)
		if req.Link != "l" {
			if status.Code(err) != codes.NotFound {
				t.Fatalf("link %q: got %v, want NotFound", req.Link, err)
			}
			return
		}
		if err != nil {
			msg := status.Convert(err).Message()
			named := false
			for _, f := range []string{"rate_bps", "delay_us", "loss", "queue_bytes"} {
				named = named || strings.HasPrefix(msg, f+" ")
			}
			if status.Code(err) != codes.InvalidArgument || !named {
				t.Fatalf("%v: got %v, want InvalidArgument naming the field", &req, err)
			}
			if l.calls != 0 {
				t.Fatalf("%v: refused, but the link was changed", &req)
			}
			return
		}
		c := l.got
		if (c.Rate != nil) != (req.RateBps != nil) || (c.Delay != nil) != (req.DelayUs != nil) ||
			(c.Loss != nil) != (req.Loss != nil) || (c.QueueBytes != nil) != (req.QueueBytes != nil) {
			t.Fatalf("%v: passed on %+v, not the fields asked for", &req, c)
		}
		if c.Rate != nil {
			if want := units.Bandwidth(*req.RateBps); *c.Rate != want || *c.Rate < 1 || *c.Rate > units.MaxBandwidth {
				t.Fatalf("rate_bps %v passed on as %v", *req.RateBps, *c.Rate)
			}
		}
		if c.Delay != nil && (*c.Delay < 0 || *c.Delay/time.Microsecond != time.Duration(*req.DelayUs) || *c.Delay%time.Microsecond != 0) {
			t.Fatalf("delay_us %d passed on as %v", *req.DelayUs, *c.Delay)
		}
		if c.Loss != nil && !(*c.Loss >= 0 && *c.Loss < 1) {
			t.Fatalf("loss %v passed on", *c.Loss)
		}
		if c.QueueBytes != nil && (*c.QueueBytes <= 0 || int64(*c.QueueBytes) != *req.QueueBytes) {
			t.Fatalf("queue_bytes %d passed on as %d", *req.QueueBytes, *c.QueueBytes)
		}
	})
}
