package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/cclab/cclab/cc/newreno"
	"github.com/cclab/cclab/netsim/traffic"
)

const good = `name: satcom-uhf
seed: 1
duration: 120s
bottleneck:
  rate: 1Mbps
  delay: 500ms
  queue: {discipline: droptail, limit: 100}
  loss: {model: bernoulli, p: 0}
  schedule:
    - at: 10s
      rate: 256kbps
      delay: 125ms
      loss: {model: bernoulli, p: 0.03}
flows:
  - name: transfer
    cc: newreno
    bytes: 600KB
    start: 0s
    count: 1
    extra_delay: 0ms
`

func TestParseIssueExample(t *testing.T) {
	s, err := Parse([]byte(good), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := s.Bottleneck
	if b.Rate.V != 1e6 || b.Delay.V != 500*time.Millisecond || b.Queue.Limit.Packets != 100 {
		t.Errorf("bottleneck = %+v", b)
	}
	c := b.Schedule[0]
	if c.At.V != 10*time.Second || c.Rate.V != 256000 || c.Delay.V != 125*time.Millisecond || c.Loss.P != 0.03 {
		t.Errorf("schedule = %+v", c)
	}
	f := s.Flows[0]
	if f.Bytes.V != 600000 || f.CC.Name != "newreno" || f.Count != 1 {
		t.Errorf("flow = %+v", f)
	}
}

func TestErrorsNameLineAndField(t *testing.T) {
	tests := []struct {
		name, edit, to, want string
	}{
		{"bad rate unit", "rate: 1Mbps", "rate: 1Mbs", `x.yaml:5:9: bottleneck.rate: "1Mbs": unknown rate unit "Mbs"`},
		{"unknown field", "  delay: 500ms\n  queue", "  delay: 500ms\n  dleay: 1s\n  queue", `x.yaml:7:3: unknown field "dleay"`},
		{"bad cc", "cc: newreno", "cc: cubicc", `x.yaml:16:9: flows[0].cc: unknown congestion controller "cubicc" (accepted:`},
		{"bad cc param", "cc: newreno", "cc: {name: newreno, alpha: 3}", `flows[0].cc: newreno has no parameter "alpha" (accepted: iw, beta, linux)`},
		{"param range", "cc: newreno", "cc: {name: newreno, beta: 3}", `parameter beta = 3 is out of range [0.05, 0.95]`},
		{"bad loss", "p: 0.03", "p: 1.5", `x.yaml:13:35: bottleneck.schedule[0].loss.p: must be in [0, 1), got 1.5`},
		{"bad queue", "discipline: droptail", "discipline: fifo", `bottleneck.queue.discipline: unknown queue discipline "fifo" (accepted: droptail, red, codel)`},
		{"mark threshold on red", "discipline: droptail", "discipline: red, mark_threshold: 20", `bottleneck.queue.mark_threshold: is droptail's step marking; red marks with ecn: true`},
		{"ecn on droptail", "discipline: droptail", "discipline: droptail, ecn: true", `bottleneck.queue.ecn: droptail marks at a threshold: give mark_threshold`},
		{"bad mark threshold", "discipline: droptail", "discipline: droptail, mark_threshold: -3", `bottleneck.queue.mark_threshold: must be positive, got -3`},
		{"ecn not a bool", "cc: newreno", "cc: newreno\n    transport: {ecn: sometimes}", `flows[0].transport.ecn`},
		{"ecn with coding", "cc: newreno", "cc: newreno\n    transport: {ecn: true}\n    coding: {redundancy: 1.2}", `flows[0].coding: TCP/NC's coded packets carry no ECN`},
		{"bad size", "600KB", "600kB?", `flows[0].bytes: "600kB?"`},
		{"decreasing schedule", "at: 10s", "at: -1s", `bottleneck.schedule[0].at: "-1s": a duration cannot be negative`},
		{"wrong type", "seed: 1", "seed: one", `x.yaml:2:7: seed: want a non-negative integer, got "one"`},
		{"no rate", "  rate: 1Mbps\n", "", `bottleneck.rate: the bottleneck needs a rate`},
		{"bad duration", "duration: 120s", "duration: 2 minutes", `x.yaml:3:11: duration: "2 minutes" is not a duration`},
		{"missing sizes file", "flows:", "background: [{type: arrivals, cc: cubic, sizes: nope.cdf, load: 0.1}]\nflows:", `background[0].sizes: flow sizes "nope.cdf": not a built-in distribution (datamining, websearch)`},
		{"bad send buffer", "flows:", "transport: {send_buffer: auto}\nflows:", `transport.send_buffer: must be none or linux, got "auto"`},
		{"two send buffers", "flows:", "transport: {send_buffer: linux, pending_queue: 64KB}\nflows:", `transport.send_buffer: linux sizes the send buffer itself; it cannot be combined with pending_queue "64KB"`},
		{"huge dupthresh", "flows:", "transport: {dupthresh: 4294967299}\nflows:", `transport.dupthresh: must be between 1 and 1048576, got 4294967299`},
		{"bad sizes file", "flows:", "background: [{type: arrivals, cc: cubic, sizes: scenario_test.go, load: 0.1}]\nflows:", `background[0].sizes: scenario_test.go:1:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.Replace(good, tt.edit, tt.to, 1)
			_, err := Parse([]byte(in), "x.yaml")
			if err == nil {
				t.Fatalf("accepted:\n%s", in)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tt.want)
			}
		})
	}
}

func TestSetOverrides(t *testing.T) {
	s, err := Parse([]byte(good), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{
		{"bottleneck.loss.p", "0.01"},
		{"flows.0.bytes", "1MB"},
		{"flows[0].extra_delay", "10ms"},
		{"bottleneck.schedule.0.rate", "512kbps"},
		{"newreno.beta", "0.7"},
		{"seed", "9"},
	} {
		if err := s.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("Set(%s): %v", kv[0], err)
		}
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Bottleneck.Loss.P != 0.01 || s.Flows[0].Bytes.V != 1e6 || s.Flows[0].ExtraDelay.V != 10*time.Millisecond ||
		s.Bottleneck.Schedule[0].Rate.V != 512000 || s.Flows[0].CC.Params["beta"] != 0.7 || s.Seed != 9 {
		t.Errorf("overrides not applied: %+v", s)
	}
	for _, bad := range [][2]string{
		{"bottleneck.los.p", `bottleneck has no field "los"`},
		{"flows.3.bytes", "flows has 1 entries, index 3 is out of range"},
		{"newreno.alpha", `newreno has no parameter "alpha"`},
		{"seed", `"x" is not a non-negative integer`},
	} {
		v := "x"
		if bad[0] != "seed" {
			v = "1"
		}
		if err := s.Set(bad[0], v); err == nil || !strings.Contains(err.Error(), bad[1]) {
			t.Errorf("Set(%s) error %v, want %q", bad[0], err, bad[1])
		}
	}
}

func TestCloneIsDeep(t *testing.T) {
	s, err := Parse([]byte(good), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Clone()
	c.Set("newreno.beta", "0.6")
	c.Set("bottleneck.schedule.0.loss.p", "0.2")
	if s.Flows[0].CC.Params != nil || s.Bottleneck.Schedule[0].Loss.P != 0.03 {
		t.Errorf("modifying the clone changed the original")
	}
}

func TestShippedScenariosParse(t *testing.T) {
	files, _ := filepath.Glob("../../scenarios/*.yaml")
	if len(files) == 0 {
		t.Skip("no scenarios")
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			// Controllers registered elsewhere are not linked into this
			// test; only structural errors matter here.
			if !strings.Contains(err.Error(), "unknown congestion controller") {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno}]\n"))
	// The audit's bad inputs (the bombs scaled down: the fuzzer mutates
	// them towards the limits).
	for _, bad := range []string{
		aliasBomb("unknown"),
		minimal + "x: " + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "\n",
		minimal + "x: " + strings.Repeat("{a: ", 70) + "1" + strings.Repeat("}", 70) + "\n",
		"\xEF\xBB\xBF" + minimal,
		minimal + "---\nname: y\n",
		"name: x\nbottleneck: {rate: 1Mbps, queue: {discipline: red, min_th: .nan, max_th: .nan}}\nflows: [{cc: newreno}]\n",
		"name: x\nbottleneck: {rate: 1Mbps, schedule: [{at: 1s, scale_background: -1, stop_background: [nope]}]}\nflows: [{cc: newreno}]\n",
		"name: x\nbottleneck: {rate: 1Mbps}\ntransport: {min_rto: 1ns, max_rto: 1ns, recv_window: 0B}\nflows: [{cc: newreno, count: 0}]\n",
		"name: x\nduration: 1000000s\nsample: 1us\nbottleneck: {rate: 1000Gbps}\nflows: [{cc: newreno, start: 2000000s}]\n",
		"name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno}]\nbackground: [{type: cbr, rate: 1e15bps}, {type: arrivals, cc: newreno, size: 1KB, interval: 1ns, count: 10000}]\n",
		"name: x\nbottleneck: {rate: 1Mbps, dleay: 1s}\nseed: one\nflows: [{cc: [1]}]\n",
	} {
		f.Add([]byte(bad))
	}
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps}\ntransport: {lost_retransmissions: rack, rack: false}\nflows: [{cc: newreno, transport: {lost_retransmissions: gap}}]\n"))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps}\ntransport: {timeout_min: 8ms}\nflows: [{cc: cubic, transport: {timeout_min: 2ms}}]\n"))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps}\ntransport: {prr: linux}\nflows: [{cc: cubic, transport: {prr: rfc6937}}]\n"))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps}\ntransport: {window_growth: linux}\nflows: [{cc: hybla, transport: {window_growth: delivered}}]\n"))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps}\ntransport: {cwnd_limited: linux}\nflows: [{cc: cubic, transport: {cwnd_limited: last_send}}]\n"))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps}\ntransport: {rack_timer: linux}\nflows: [{cc: cubic, transport: {rack_timer: earliest}}]\n"))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps}\ntransport: {kernel_hz: 250}\nflows: [{cc: cubic, transport: {kernel_hz: 1000}}]\n"))
	f.Add([]byte("name: x\nprofile: linux-host\nbottleneck: {rate: 1Mbps}\ntransport: {sack_compression: true}\nflows: [{cc: cubic, transport: {sack_compression: false, kernel_hz: 0}}]\n"))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps}\ntransport: {srtt_sample: oldest}\nflows: [{cc: newreno, transport: {srtt_sample: newest}}]\n"))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps, ack_jitter: 70us}\nflows: [{cc: newreno}]\n"))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps, ack_read_delay: 120us}\nflows: [{cc: newreno}]\n"))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps, ack_read_delay: 80us, ack_read_share: 0.3}\nflows: [{cc: newreno}]\n"))
	f.Add([]byte("name: x\nbottleneck: {rate: 1Mbps}\ntransport: {receive_window: linux}\nflows: [{cc: cubic, transport: {receive_window: none}}, {cc: newreno, transport: {receive_window: linux, sack: false}}]\n"))
	f.Add([]byte("name: x\nprofile: linux\nbottleneck: {rate: 1Mbps}\ntransport: {lost_retransmissions: gap}\nflows: [{cc: {name: bbr, linux: 0}}, {cc: cubic}]\nbackground: [{type: tcp, cc: bbr}]\n"))
	f.Add([]byte("flows: [{cc: {name: newreno, beta: 0.3}, count: 3}]\nbottleneck: {trace: a, trace_mode: average}\n"))
	f.Add([]byte("background: [{type: sequence, period: 8s, sequence: [{type: cbr, rate: 1Mbps, stop: 2s}]}]\nbottleneck: {rate: 1Mbps}\n"))
	dir := f.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "a"), []byte("1\n"), 0o644)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, filepath.Join(dir, "fuzz.yaml"))
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("empty error message")
			}
			return
		}
		// A valid scenario stays valid through Clone.
		if err := s.Clone().Validate(); err != nil {
			t.Fatalf("clone of valid scenario invalid: %v", err)
		}
	})
}

// TestArrivalsAndProcess checks what the simulator and the emulator both
// derive from a background source: an arrivals source's mean time between
// flows (interval, or the time the bottleneck carries load times the mean
// size in) and a UDP source's process (an onoff source alone cycles from
// its start; mice send at a constant rate inside bursts).
func TestArrivalsAndProcess(t *testing.T) {
	s, err := Parse([]byte(`name: x
bottleneck: {rate: 10Mbps}
background:
  - {type: arrivals, cc: cubic, size: 125KB, load: 0.5}
  - {type: arrivals, cc: cubic, sizes: websearch, interval: 30ms}
  - {type: onoff, rate: 1Mbps, on: 2s, off: 3s}
  - {type: mice, rate: 2Mbps, interval: 100ms, burst: 5ms}
`), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sizes, gap, err := s.Arrivals(&s.Background[0])
	if err != nil || sizes != nil || gap != 200*time.Millisecond {
		t.Errorf("125 KB flows at half of 10 Mbit/s: sizes %v, gap %v, %v; want none, 200ms", sizes, gap, err)
	}
	sizes, gap, err = s.Arrivals(&s.Background[1])
	if err != nil || sizes == nil || sizes.Name != "websearch" || gap != 30*time.Millisecond {
		t.Errorf("websearch every 30ms: sizes %v, gap %v, %v", sizes, gap, err)
	}
	on := s.Background[2].Process(traffic.Window{})
	if on.Poisson || on.Window.Period != 5*time.Second || on.Window.From != 0 || on.Window.To != 2*time.Second {
		t.Errorf("onoff alone: %+v, want a 5 s period on for its first 2 s", on)
	}
	part := traffic.Window{Period: 8 * time.Second, From: time.Second, To: 4 * time.Second}
	if got := s.Background[2].Process(part); got.Window != part {
		t.Errorf("onoff in a sequence part: window %+v, want the part's %+v", got.Window, part)
	}
	mice := s.Background[3].Process(traffic.Window{})
	if mice.Poisson || mice.MiceGap != 100*time.Millisecond || mice.BurstLen != 5*time.Millisecond || mice.Rate != 2e6 {
		t.Errorf("mice: %+v", mice)
	}
}
