package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/papers/deepcc"
)

// TestSendDeepCCTuned: `cclab send --cc deepcc --target` over loopback
// runs the tuner (every 4 RTTs) and, for a throughput bound loopback
// cannot meet, ends with more throughput weight than goal g2 starts with.
func TestSendDeepCCTuned(t *testing.T) {
	addr := freeUDPAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rout, rerr bytes.Buffer
	rcode := make(chan int)
	go func() { rcode <- Main(ctx, []string{"recv", "--listen", addr, "--once"}, &rout, &rerr) }()
	time.Sleep(200 * time.Millisecond)
	var sout, serr bytes.Buffer
	if code := Main(ctx, []string{"send", addr, "--cc", "deepcc:g2", "--target", "100000,0,0", "--time", "1s", "--json"}, &sout, &serr); code != 0 {
		t.Fatalf("send exit %d: %s", code, serr.String())
	}
	if code := <-rcode; code != 0 {
		t.Fatalf("recv exit %d: %s", code, rerr.String())
	}
	var s live.Result
	if err := json.Unmarshal(sout.Bytes(), &s); err != nil {
		t.Fatalf("send output: %v\n%s", err, sout.String())
	}
	var g2 deepcc.Goal
	for _, ng := range deepcc.DefaultGoals {
		if ng.Name == "g2" {
			g2 = ng.Goal
		}
	}
	if s.Extra["tune_intervals"] < 3 || s.Extra["tune_stopped"] != 0 {
		t.Fatalf("tuner did not run: %v", s.Extra)
	}
	if s.Extra["goal_throughput"] <= g2[0] {
		t.Errorf("throughput weight %.3f, g2 starts at %.3f: an unmet bound should raise it", s.Extra["goal_throughput"], g2[0])
	}
}

func TestSendDeepCCTuneFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--cc", "cubic", "--mode", "low-delay"},
		{"--cc", "deepcc", "--mode", "fast"},
		{"--cc", "deepcc", "--target", "1,2"},
		{"--cc", "deepcc", "--target", "1,x,0"},
		{"--cc", "deepcc", "--target", "0,0,0"},
		{"--cc", "deepcc", "--target", "1,0,0", "--mode", "low-delay"},
	} {
		var out, errb bytes.Buffer
		full := append([]string{"send", "127.0.0.1:9", "--time", "1s"}, args...)
		if code := Main(context.Background(), full, &out, &errb); code == 0 || !strings.Contains(errb.String(), "cclab send") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
