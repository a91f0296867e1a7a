package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/experiment/live"
)

// TestSendDCBBR: `cclab send --cc dc-bbr` over loopback: the shipped
// policy tunes the flow every 100 ms, the receiver gets every byte once
// (it checks each against the sender's pattern) and the sender reports
// the tuner's counters.
func TestSendDCBBR(t *testing.T) {
	addr := freeUDPAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rout, rerr bytes.Buffer
	rcode := make(chan int)
	go func() { rcode <- Main(ctx, []string{"recv", "--listen", addr, "--once", "--json"}, &rout, &rerr) }()
	time.Sleep(200 * time.Millisecond)
	var sout, serr bytes.Buffer
	if code := Main(ctx, []string{"send", addr, "--cc", "dc-bbr", "--link-rate", "1Gbps", "--bytes", "40MB", "--json"}, &sout, &serr); code != 0 {
		t.Fatalf("send exit %d: %s", code, serr.String())
	}
	if code := <-rcode; code != 0 {
		t.Fatalf("recv exit %d: %s", code, rerr.String())
	}
	var s, r live.Result
	if err := json.Unmarshal(sout.Bytes(), &s); err != nil {
		t.Fatalf("send output: %v\n%s", err, sout.String())
	}
	if err := json.Unmarshal(rout.Bytes(), &r); err != nil {
		t.Fatalf("recv output: %v\n%s", err, rout.String())
	}
	if !s.Complete || !r.Complete || r.Flow.BytesDelivered != 40_000_000 || r.CorruptBytes != 0 || s.Flow.CC != "dc-bbr" {
		t.Fatalf("sender %+v\nreceiver %+v", s, r)
	}
	if s.WallSeconds > 0.3 && s.Extra["dc_steps"] < 1 {
		t.Errorf("%.2f s transfer, tuner counters %v", s.WallSeconds, s.Extra)
	}
	t.Logf("%.2f s, %v", s.WallSeconds, s.Extra)
}

func TestSendDCBBRFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cc", "dc-bbr"}, "needs --link-rate"},
		{[]string{"--cc", "dc-bbr", "--link-rate", "fast"}, `--link-rate "fast"`},
		{[]string{"--cc", "dc-bbr", "--link-rate", "0Mbps"}, `--link-rate "0Mbps"`},
		{[]string{"--cc", "cubic", "--link-rate", "1Gbps"}, "--link-rate needs --cc dc-bbr"},
		{[]string{"--cc", "dc-bbr:static", "--policy", "x.policy", "--link-rate", "1Gbps"}, "give the policy once"},
		{[]string{"--cc", "dc-bbr", "--link-rate", "1Gbps", "--param", "min_rtt_window=0"}, "min_rtt_window"},
		{[]string{"--cc", "dc-bbr", "--link-rate", "1Gbps", "--policy", "../../papers/deepcc/policy/deepcc.policy"}, "data-centre"},
	} {
		var out, errb bytes.Buffer
		full := append([]string{"send", "127.0.0.1:9", "--time", "1s"}, c.args...)
		if code := Main(context.Background(), full, &out, &errb); code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to contain %q", c.args, code, errb.String(), c.want)
		}
	}
}
