package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/internal/ipecn"
)

// freeUDPAddr returns a loopback address with a port free at the time.
func freeUDPAddr(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().String()
}

// TestSendRecv runs `cclab recv --once` and `cclab send` in process and
// checks both JSON reports: every byte delivered, the same connection,
// and ECN negotiated when asked for (every data segment ECN-capable).
func TestSendRecv(t *testing.T) {
	for _, ecn := range []bool{false, true} {
		t.Run(fmt.Sprintf("ecn=%v", ecn), func(t *testing.T) { sendRecv(t, ecn) })
	}
}

func sendRecv(t *testing.T, ecn bool) {
	addr := freeUDPAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rout, rerr bytes.Buffer
	rcode := make(chan int)
	go func() { rcode <- Main(ctx, []string{"recv", "--listen", addr, "--once", "--json"}, &rout, &rerr) }()
	time.Sleep(100 * time.Millisecond)
	var sout, serr bytes.Buffer
	args := []string{"send", addr, "--cc", "cubic", "--bytes", "2MB", "--json"}
	if ecn {
		args = append(args, "--ecn")
	}
	if code := Main(ctx, args, &sout, &serr); code != 0 {
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
	if !s.Complete || !r.Complete || r.Flow.BytesDelivered != 2_000_000 || r.CorruptBytes != 0 || s.ConnID != r.ConnID {
		t.Errorf("sender %+v\nreceiver %+v", s, r)
	}
	if s.Flow.FCT == nil || s.Flow.GoodputMbps <= 0 || s.Flow.RTTMeanMs <= 0 {
		t.Errorf("sender metrics missing: %+v", s.Flow)
	}
	want := "off"
	if ecn && ipecn.Supported {
		want = "on"
	} else if ecn {
		want = "refused"
	}
	if s.ECN != want || r.ECN != want && !(want == "refused" && r.ECN == "off") {
		t.Errorf("ECN: sender %q, receiver %q; want %q", s.ECN, r.ECN, want)
	}
	if want == "on" && (s.Flow.ECNReductions == nil || r.ECTSegments == nil || *r.ECTSegments < 2_000_000/1432 || *r.CESegments != 0) {
		t.Errorf("with ECN on loopback: sender reductions %v, receiver ECT %v CE %v; want 0, every segment, none", s.Flow.ECNReductions, r.ECTSegments, r.CESegments)
	}
}

func TestSendBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"send", "127.0.0.1:9"},
		{"send", "127.0.0.1:9", "--bytes", "-3"},
		{"send", "127.0.0.1:9", "--time", "1s", "--cc", "nope"},
		{"send", "127.0.0.1:9", "--time", "1s", "--param", "beta"},
		{"send", "127.0.0.1:9", "--time", "1s", "--cc", "deepcc:g9"},
		{"send", "127.0.0.1:9", "--time", "1s", "--cc", "deepcc:1,-1,0"},
		{"send", "127.0.0.1:9", "--time", "1s", "--cc", "cubic", "--policy", "x.policy"},
		{"send", "127.0.0.1:9", "--time", "1s", "--ecn", "--nc-window", "32"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), args, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), "cclab send") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// TestAgentServeAndSend runs `cclab agent serve` on a Unix socket and
// `cclab send --agent` against it, in process: the shipped MARLIN policy
// drives a 600 KB transfer to completion.
func TestAgentServeAndSend(t *testing.T) {
	sock := "unix:" + t.TempDir() + "/agent.sock"
	addr := freeUDPAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	actx, stopAgent := context.WithCancel(ctx)
	var aout, aerr bytes.Buffer
	acode := make(chan int)
	go func() {
		acode <- Main(actx, []string{"agent", "serve", "--policy", "marlin", "--listen", sock}, &aout, &aerr)
	}()
	var rout, rerr bytes.Buffer
	rcode := make(chan int)
	go func() { rcode <- Main(ctx, []string{"recv", "--listen", addr, "--once", "--json"}, &rout, &rerr) }()
	time.Sleep(200 * time.Millisecond)
	var sout, serr bytes.Buffer
	if code := Main(ctx, []string{"send", addr, "--agent", sock, "--bytes", "600KB", "--json"}, &sout, &serr); code != 0 {
		t.Fatalf("send exit %d: %s", code, serr.String())
	}
	if code := <-rcode; code != 0 {
		t.Fatalf("recv exit %d: %s", code, rerr.String())
	}
	stopAgent()
	if code := <-acode; code != 0 {
		t.Fatalf("agent exit %d: %s", code, aerr.String())
	}
	var s live.Result
	if err := json.Unmarshal(sout.Bytes(), &s); err != nil {
		t.Fatalf("send output: %v\n%s", err, sout.String())
	}
	if !s.Complete || s.Extra["agent_steps"] == 0 || s.Extra["agent_applied"] == 0 || s.Extra["agent_disconnected"] != 0 {
		t.Errorf("result %+v", s)
	}
	if !strings.Contains(s.Flow.CC, "marlin@unix:") {
		t.Errorf("controller label %q", s.Flow.CC)
	}
}

func TestAgentServeRefusesRemote(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"agent", "serve", "--listen", "0.0.0.0:0"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "allow-remote") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}
