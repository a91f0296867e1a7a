package scenario

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cclab/cclab/netsim/trace"
)

const minimal = "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno}]\n"

// parseErr parses in and returns the error text ("" when accepted).
func parseErr(in string) string {
	_, err := Parse([]byte(in), "x.yaml")
	if err == nil {
		return ""
	}
	return err.Error()
}

// aliasBomb is the audit's alias bomb: nine levels of nine aliases.
func aliasBomb(field string) string {
	var b strings.Builder
	b.WriteString(minimal)
	b.WriteString("a0: &a0 [lol]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [" + strings.Repeat("*a"+strconv.Itoa(i-1)+", ", 8) + "*a" + strconv.Itoa(i-1) + "]\n")
	}
	b.WriteString(field + ": *a9\n")
	return b.String()
}

// TestAliasBombRefused: before the fix the decoder expanded 9^9 strings
// (gigabytes) before reaching the unknown-field error.
func TestAliasBombRefused(t *testing.T) {
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, in := range []string{
		aliasBomb("unknown"),
		"name: x\nbottleneck:\n  rate: 1Mbps\n  schedule:\n    - at: 1s\n      stop_background: &s [a, b]\n    - at: 2s\n      stop_background: *s\nflows: [{cc: newreno}]\n",
	} {
		msg := parseErr(in)
		if !strings.Contains(msg, "x.yaml:") || !strings.Contains(msg, "aliases") {
			t.Errorf("got %q, want an alias refusal with a position", msg)
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("refusing the bombs allocated %d MB", grew>>20)
	}
}

// TestNestingBombRefused: before the fix 30,000 brackets cost the parser
// 2.8 GB; now the depth is checked on the bytes first.
func TestNestingBombRefused(t *testing.T) {
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, in := range []string{
		minimal + "x: " + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "\n",
		"name: x\nbottleneck: {rate: 1Mbps}\nflows: " + strings.Repeat("[", 30000) + strings.Repeat("]", 30000) + "\n",
		minimal + "x: " + strings.Repeat("{a: ", 50000) + "1" + strings.Repeat("}", 50000) + "\n",
	} {
		if msg := parseErr(in); !strings.Contains(msg, "nesting deeper than") || !strings.HasPrefix(msg, "x.yaml:") {
			t.Errorf("got %q, want a nesting refusal", msg)
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("refusing the bombs allocated %d MB", grew>>20)
	}
}

func TestDecodeMessages(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"byte-order mark", "\xEF\xBB\xBF" + minimal, ""},
		{"parser error position", "name: x\nbottleneck: {rate: 1Mbps\nflows: [{cc: newreno}]\n", "x.yaml:3:1: "},
		{"no Go type names", "name: x\nbottleneck: {rate: 1Mbps, queue: {max_p: abc}}\nflows: [{cc: newreno}]\n", `x.yaml:2:42: bottleneck.queue.max_p: want a number, got "abc"`},
		{"integer field", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, count: x}]\n", `x.yaml:3:30: flows[0].count: want an integer, got "x"`},
		{"mapping expected", "name: x\nbottleneck: 3\nflows: [{cc: newreno}]\n", `x.yaml:2:13: bottleneck: want a mapping of fields`},
		{"not YAML at all: the value is cut", "root:x:0:0:root:/root:/bin/bash\n" + strings.Repeat("daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n", 20), `x.yaml:1:1: value: want a mapping of fields, got "root:x:0:0:root:/root:/bin/bash daemon:x:1:1:daemon:/usr/sbi" (931 bytes more)`},
		{"cc error has a line", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: [1]}]\n", "x.yaml:3:14: flows[0].cc: cc must be"},
		{"nearest field", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, extra_dealy: 1s}]\n", `unknown field "extra_dealy" (did you mean "extra_delay"?)`},
		{"nearest field of the right record", "name: x\nbottleneck: {rate: 1Mbps, dleay: 1s}\nflows: [{cc: newreno}]\n", `(did you mean "delay"?)`},
		{"second document", minimal + "---\nname: y\n", "x.yaml:5: a second YAML document"},
		{"leading marker is one document", "---\n" + minimal, ""},
	}
	for _, tt := range tests {
		got := parseErr(tt.in)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
		if strings.Contains(got, "Go struct") || strings.Contains(got, "[") && strings.Contains(got, "] ") && strings.Index(got, "[") < 8 {
			t.Errorf("%s: library wording in %q", tt.name, got)
		}
	}
}

// TestLoadRefusesDevices: before the fix Load trusted the stat size, 0 for
// /dev/zero, and read without end.
func TestLoadRefusesDevices(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "is a device, not a scenario file") {
		t.Errorf("got %v", err)
	}
}

// TestMissingTraceNamesLineAndBuiltins: a missing trace is reported at its
// line with the built-in traces listed, and a built-in one is found with
// or without ".gz".
func TestMissingTraceNamesLineAndBuiltins(t *testing.T) {
	trace.RegisterFS(fstest.MapFS{"Shipped.down.gz": {Data: []byte{}}})
	in := "name: x\nbottleneck:\n  trace: Nope.down\nflows: [{cc: newreno}]\n"
	msg := parseErr(in)
	if !strings.HasPrefix(msg, "x.yaml:3:10: bottleneck.trace: ") || !strings.Contains(msg, "built-in traces: ") || !strings.Contains(msg, "Shipped.down.gz") {
		t.Errorf("got %q", msg)
	}
	if msg := parseErr(strings.Replace(in, "Nope.down", "Shipped.down", 1)); msg != "" {
		t.Errorf("built-in without .gz: %s", msg)
	}
}

// TestSetAfterValidateActsAsOnTheFile: bug 1. Sweeps and tuners apply
// their values to clones of a validated base; validation had turned an
// absent loss model into "none", so bottleneck.loss.p=0.01 failed with
// "model none takes no p" while run --set accepted it. The same holds for
// defaults derived from other fields: the queue limit (from the
// discipline) and the trace mode.
func TestSetAfterValidateActsAsOnTheFile(t *testing.T) {
	for _, tt := range []struct{ path, value string }{
		{"bottleneck.loss.p", "0.01"},
		{"bottleneck.queue.discipline", "red"},
		{"flows.0.loss.p", "0.02"},
	} {
		raw, _, err := Decode([]byte("name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, loss: {}}]\n"), "x.yaml")
		if err != nil {
			t.Fatal(err)
		}
		validated := raw.Clone()
		if err := validated.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, s := range []*Scenario{raw, validated} {
			if err := s.Set(tt.path, tt.value); err != nil {
				t.Fatalf("%s: %v", tt.path, err)
			}
			if err := s.Validate(); err != nil {
				t.Errorf("%s=%s after Validate: %v", tt.path, tt.value, err)
			}
		}
		a, _ := raw.Marshal()
		b, _ := validated.Marshal()
		if string(a) != string(b) {
			t.Errorf("%s=%s: on the file\n%s\nafter Validate\n%s", tt.path, tt.value, a, b)
		}
	}
	// An explicit model stays the user's.
	s, _, _ := Decode([]byte(minimal), "x.yaml")
	s.Validate()
	s.Set("bottleneck.loss.model", "none")
	s.Set("bottleneck.loss.p", "0.01")
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "model none takes no p") {
		t.Errorf("explicit model none with p: %v", err)
	}
}

// TestAcceptedButInvalid: hardening 10 and bug 5, each silently accepted
// before.
func TestAcceptedButInvalid(t *testing.T) {
	bg := "background: [{name: bg, type: cbr, rate: 100kbps}]\n"
	tests := []struct{ name, in, want string }{
		{"RED NaN", "name: x\nbottleneck: {rate: 1Mbps, queue: {discipline: red, min_th: .nan}}\nflows: [{cc: newreno}]\n", "bottleneck.queue.min_th: must be a finite number"},
		{"scale_background NaN", "name: x\nbottleneck: {rate: 1Mbps, schedule: [{at: 1s, scale_background: .nan}]}\nflows: [{cc: newreno}]\n" + bg, "x.yaml:2:65: bottleneck.schedule[0].scale_background: must be a factor >= 0"},
		{"scale_background negative", "name: x\nbottleneck: {rate: 1Mbps, schedule: [{at: 1s, scale_background: -2}]}\nflows: [{cc: newreno}]\n" + bg, "scale_background: must be a factor >= 0"},
		{"unknown stop_background", "name: x\nbottleneck: {rate: 1Mbps, schedule: [{at: 1s, stop_background: [bgg]}]}\nflows: [{cc: newreno}]\n" + bg, `bottleneck.schedule[0].stop_background[0]: no background source is named "bgg" (background sources: bg)`},
		{"stop_background names a flow", "name: x\nbottleneck: {rate: 1Mbps, schedule: [{at: 1s, stop_background: [f]}]}\nflows: [{name: f, cc: newreno}]\n" + bg, `no background source is named "f"`},
		{"recv_window 0B", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {recv_window: 0B}\nflows: [{cc: newreno}]\n", "transport.recv_window: must be at least one MSS"},
		{"flow after the end", "name: x\nduration: 10s\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, start: 20s}]\n", "x.yaml:4:30: flows[0].start: 20s is not before the end of the run (duration 10s)"},
		{"schedule after the end", "name: x\nduration: 10s\nbottleneck: {rate: 1Mbps, schedule: [{at: 11s, rate: 2Mbps}]}\nflows: [{cc: newreno}]\n", "bottleneck.schedule[0].at: 11s is after the end of the run"},
		{"count 0", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, count: 0}]\n", "x.yaml:3:30: flows[0].count: must be at least 1, got 0"},
		{"header 0B", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {header: 0B}\nflows: [{cc: newreno}]\n", "transport.header: must be in [1B, 1024B], got \"0B\""},
		{"syn_options 41B", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {syn_options: 41B}\nflows: [{cc: newreno}]\n", "transport.syn_options: must be in [1B, 40B] (TCP's option space), got \"41B\""},
		{"lost_retransmissions time", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {lost_retransmissions: time}\nflows: [{cc: newreno}]\n", "transport.lost_retransmissions: must be gap or rack, got \"time\""},
		{"receive_window auto", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {receive_window: auto}\nflows: [{cc: newreno}]\n", "transport.receive_window: must be none or linux, got \"auto\""},
		{"flow receive_window", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, transport: {receive_window: Linux}}]\n", "receive_window: must be none or linux"},
		{"flow lost_retransmissions", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, transport: {lost_retransmissions: RACK}}]\n", "lost_retransmissions: must be gap or rack"},
		{"srtt_sample first", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {srtt_sample: first}\nflows: [{cc: newreno}]\n", "transport.srtt_sample: must be newest or oldest, got \"first\""},
		{"timeout_min too long", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {timeout_min: 2s}\nflows: [{cc: newreno}]\n", "transport.timeout_min: must be at most 1s"},
		{"flow timeout_min unit", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: cubic, transport: {timeout_min: 8}}]\n", "flows[0].transport.timeout_min"},
		{"prr linux6", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {prr: linux6}\nflows: [{cc: newreno}]\n", "transport.prr: must be rfc6937 or linux, got \"linux6\""},
		{"flow prr", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: cubic, transport: {prr: RFC6937}}]\n", "flows[0].transport.prr: must be rfc6937 or linux"},
		{"rack_timer", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {rack_timer: latest}\nflows: [{cc: newreno}]\n", "transport.rack_timer: must be earliest or linux, got \"latest\""},
		{"window_growth", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {window_growth: acked}\nflows: [{cc: cubic}]\n", "transport.window_growth: must be delivered or linux, got \"acked\""},
		{"flow window_growth", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: hybla, transport: {window_growth: Linux}}]\n", "flows[0].transport.window_growth: must be delivered or linux"},
		{"cwnd_limited", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {cwnd_limited: latched}\nflows: [{cc: cubic}]\n", "transport.cwnd_limited: must be last_send or linux, got \"latched\""},
		{"tlp_timer", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {tlp_timer: pto}\nflows: [{cc: cubic}]\n", "transport.tlp_timer: must be rto_first or linux, got \"pto\""},
		{"flow cwnd_limited", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, transport: {cwnd_limited: true}}]\n", "flows[0].transport.cwnd_limited: must be last_send or linux"},
		{"recovery_start", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {recovery_start: rfc6675}\nflows: [{cc: cubic}]\n", "transport.recovery_start: must be new_loss or linux, got \"rfc6675\""},
		{"flow recovery_start", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: bbr, transport: {recovery_start: Linux}}]\n", "flows[0].transport.recovery_start: must be new_loss or linux"},
		{"pacing", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {pacing: fq}\nflows: [{cc: bbr}]\n", "transport.pacing: must be segment or linux, got \"fq\""},
		{"flow pacing", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: bbr, transport: {pacing: Linux}}]\n", "flows[0].transport.pacing: must be segment or linux"},
		{"kernel_hz", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {kernel_hz: -250}\nflows: [{cc: newreno}]\n", "transport.kernel_hz: must be between 0 (exact timers) and 10000 ticks a second"},
		{"flow kernel_hz", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: cubic, transport: {kernel_hz: 100000}}]\n", "flows[0].transport.kernel_hz: must be between 0"},
		{"kernel_phase", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {kernel_hz: 250, kernel_phase: 5000h}\nflows: [{cc: newreno}]\n", "transport.kernel_phase: must be between 0s and 4660h20m16s (the jiffy counter's reading at time zero, as a time), got \"5000h\""},
		{"negative kernel_phase", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {kernel_hz: 250, kernel_phase: -4ms}\nflows: [{cc: newreno}]\n", "transport.kernel_phase: \"-4ms\": a duration cannot be negative"},
		{"flow kernel_phase", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: cubic, transport: {kernel_phase: 4ms}}]\n", "flows[0].transport.kernel_phase: is the host's clock, which every flow shares: set it in the scenario's transport section"},
		{"flow rack_timer", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: cubic, transport: {rack_timer: Linux}}]\n", "flows[0].transport.rack_timer: must be earliest or linux"},
		{"flow srtt_sample", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, transport: {srtt_sample: Oldest}}]\n", "srtt_sample: must be newest or oldest"},
		{"ack_jitter negative", "name: x\nbottleneck: {rate: 1Mbps, ack_jitter: -5us}\nflows: [{cc: newreno}]\n", "bottleneck.ack_jitter: \"-5us\": a duration cannot be negative"},
		{"ack_jitter unit", "name: x\nbottleneck: {rate: 1Mbps, ack_jitter: 5 parsecs}\nflows: [{cc: newreno}]\n", "bottleneck.ack_jitter: "},
		{"ack_read_share above 1", "name: x\nbottleneck: {rate: 1Mbps, ack_read_delay: 80us, ack_read_share: 1.5}\nflows: [{cc: newreno}]\n", "bottleneck.ack_read_share: must be in [0, 1]"},
		{"ack_read_share NaN", "name: x\nbottleneck: {rate: 1Mbps, ack_read_share: .nan}\nflows: [{cc: newreno}]\n", "bottleneck.ack_read_share: must be in [0, 1]"},
		{"ack_read_delay negative", "name: x\nbottleneck: {rate: 1Mbps, ack_read_delay: -5us}\nflows: [{cc: newreno}]\n", "bottleneck.ack_read_delay: \"-5us\": a duration cannot be negative"},
		// Each of these delivered nothing, or something else than asked,
		// without a word before (the audit of 2026-12-07).
		{"queue limit 42.0", "name: x\nbottleneck: {rate: 1Mbps, queue: {limit: 42.0}}\nflows: [{cc: newreno}]\n", "x.yaml:2:42: bottleneck.queue.limit: a bare number is a packet count and must be a whole number, got \"42.0\""},
		{"queue limit 1e2", "name: x\nbottleneck: {rate: 1Mbps, queue: {limit: 1e2}}\nflows: [{cc: newreno}]\n", "bottleneck.queue.limit: a bare number is a packet count"},
		{"queue limit below a packet", "name: x\nbottleneck: {rate: 1Mbps, queue: {limit: 1499B}}\nflows: [{cc: newreno}]\n", "bottleneck.queue.limit: \"1499B\" holds no full-size packet (1500 bytes with its header)"},
		{"schedule queue below a packet", "name: x\nbottleneck: {rate: 1Mbps, schedule: [{at: 1s, queue: {limit: 1KB}}]}\nflows: [{cc: newreno}]\n", "bottleneck.schedule[0].queue.limit: \"1KB\" holds no full-size packet"},
		{"queue limit in bits", "name: x\nbottleneck: {rate: 1Mbps, queue: {limit: 150Kb}}\nflows: [{cc: newreno}]\n", "bottleneck.queue.limit: \"150Kb\": \"Kb\" counts bits"},
		{"rate in bytes", "name: x\nbottleneck: {rate: 1MBps}\nflows: [{cc: newreno}]\n", "bottleneck.rate: \"1MBps\": \"MBps\" is bytes per second"},
		{"recv_window below an MSS", "name: x\nbottleneck: {rate: 1Mbps}\ntransport: {recv_window: 1447B}\nflows: [{cc: newreno}]\n", "transport.recv_window: must be at least one MSS (1448 bytes"},
		{"load NaN", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno}]\nbackground: [{name: web, type: arrivals, cc: cubic, sizes: websearch, load: .nan}]\n", "background[0].load: must be in [0, 1), got NaN"},
		{"interval and load", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno}]\nbackground: [{name: web, type: arrivals, cc: cubic, sizes: websearch, load: 0.5, interval: 10ms}]\n", "background[0].interval: give interval or load, not both"},
		{"count 2.7", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, count: 2.7}]\n", "x.yaml:3:30: flows[0].count: must be a whole number, got 2.7"},
		{"loss_hops 2.5", "name: x\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, loss: {model: bernoulli, p: 0.01}, loss_hops: 2.5}]\n", "flows[0].loss_hops: must be a whole number, got 2.5"},
		{"background count 2.5", "name: x\nbottleneck: {rate: 1Mbps}\nbackground: [{name: b, type: cbr, rate: 100kbps, count: 2.5}]\n", "background[0].count: must be a whole number, got 2.5"},
		{"seed 25e-1", "name: x\nseed: 25e-1\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno}]\n", "x.yaml:2:7: seed: must be a whole number, got 25e-1"},
		{"seed negative", "name: x\nseed: -4\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno}]\n", "x.yaml:2:7: seed: -4 out of range for a non-negative integer"},
		{"codel target", "name: x\nbottleneck: {rate: 1Mbps, queue: {discipline: codel, target: 1ms, interval: 1ms}}\nflows: [{cc: newreno}]\n", "bottleneck.queue.target: must be below interval (1ms), got 1ms"},
		{"codel target above the default interval", "name: x\nbottleneck: {rate: 1Mbps, queue: {discipline: codel, target: 200ms}}\nflows: [{cc: newreno}]\n", "bottleneck.queue.target: must be below interval (100ms), got 200ms"},
		{"only a comment", "# a scenario to write\n", "x.yaml: empty scenario file (only comments or blank lines)"},
	}
	for _, tt := range tests {
		if got := parseErr(tt.in); !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	// --set max_p=NaN is refused too.
	s, _, _ := Decode([]byte(minimal), "x.yaml")
	s.Set("bottleneck.queue.max_p", "NaN")
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "max_p: must be a finite number") {
		t.Errorf("--set max_p=NaN: %v", err)
	}
}

// TestMarshalWithoutEmptyFields: the resolved scenario.yaml written next
// to a run's results listed every unset field as "" (transport: {mss: "",
// ...}); it now holds only what is set, and reads back to the same.
func TestMarshalWithoutEmptyFields(t *testing.T) {
	s, err := Parse([]byte(good), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), `""`) || strings.Contains(string(out), "transport:") {
		t.Errorf("empty fields in\n%s", out)
	}
	back, err := Parse(out, "x.yaml")
	if err != nil {
		t.Fatalf("the written scenario does not read back: %v\n%s", err, out)
	}
	again, _ := back.Marshal()
	if string(again) != string(out) {
		t.Errorf("round trip changed it:\n%s\n---\n%s", out, again)
	}
}

// TestSetSuggestsNearestField: --set bottleneck.los.p named the accepted
// fields but not the one meant.
func TestSetSuggestsNearestField(t *testing.T) {
	s, _, _ := Decode([]byte(minimal), "x.yaml")
	if err := s.Set("bottleneck.los.p", "0.1"); err == nil || !strings.Contains(err.Error(), `did you mean "loss"?`) {
		t.Errorf("got %v", err)
	}
	if err := s.Set("flows.0.extra_dealy", "1ms"); err == nil || !strings.Contains(err.Error(), `did you mean "extra_delay"?`) {
		t.Errorf("got %v", err)
	}
}

// TestWholeNumbersWritten: a whole number written as a float or with an
// exponent is the number (the library's reading, kept); only a fraction is
// refused (TestAcceptedButInvalid).
func TestWholeNumbersWritten(t *testing.T) {
	s, err := Parse([]byte("name: x\nseed: 1e3\nbottleneck: {rate: 1Mbps}\nflows: [{cc: newreno, count: 2.0}]\n"), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Seed != 1000 || s.Flows[0].Count != 2 {
		t.Errorf("seed %d, count %d; want 1000 and 2", s.Seed, s.Flows[0].Count)
	}
}

// TestMarshalForReRunsFromItsDirectory: cclab run --out copied a relative
// trace path into DIR/scenario.yaml, which then named no file from DIR.
func TestMarshalForReRunsFromItsDirectory(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"scn", "out/run1"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "scn", "link.trace"), []byte("1\n2\n3\n"), 0o644)
	os.WriteFile(filepath.Join(root, "scn", "sizes.cdf"), []byte("1000 0\n2000 1\n"), 0o644)
	path := filepath.Join(root, "scn", "s.yaml")
	os.WriteFile(path, []byte("name: x\nbottleneck: {trace: link.trace}\nflows: [{cc: cubic}]\n"+
		"background: [{name: b, type: arrivals, cc: cubic, sizes: sizes.cdf, load: 0.1}, {name: w, type: arrivals, cc: cubic, sizes: websearch, load: 0.1}]\n"), 0o644)
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out", "run1")
	y, err := s.MarshalFor(out)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(out, "scenario.yaml")
	os.WriteFile(copyPath, y, 0o644)
	c, err := Load(copyPath)
	if err != nil {
		t.Fatalf("the copy does not load: %v\n%s", err, y)
	}
	if c.Bottleneck.Trace != filepath.Join("..", "..", "scn", "link.trace") || c.Background[0].Sizes != filepath.Join("..", "..", "scn", "sizes.cdf") || c.Background[1].Sizes != "websearch" {
		t.Errorf("paths in the copy: trace %q, sizes %q and %q", c.Bottleneck.Trace, c.Background[0].Sizes, c.Background[1].Sizes)
	}
	if s.Bottleneck.Trace != "link.trace" {
		t.Errorf("MarshalFor changed the scenario itself: trace %q", s.Bottleneck.Trace)
	}
}
