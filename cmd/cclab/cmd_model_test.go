package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/analysis/model"
	"github.com/cclab/cclab/core/units"
)

func runModelCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

type modelJSON struct {
	Params modelParamsJSON `json:"params"`
	Points []struct {
		Model         string  `json:"model"`
		P             float64 `json:"p"`
		R             float64 `json:"R"`
		RChoice       string  `json:"R_choice"`
		GoodputBps    float64 `json:"goodput_bps"`
		GoodputPps    float64 `json:"goodput_pps"`
		SendPps       float64 `json:"send_pps"`
		Window        float64 `json:"window_packets"`
		EffectiveLoss float64 `json:"effective_loss"`
		Limit         string  `json:"limit"`
	} `json:"points"`
}

// TestModelJSONMatchesLibrary checks that the command prints exactly what
// the model package computes for the flags given.
func TestModelJSONMatchesLibrary(t *testing.T) {
	code, out, errOut := runModelCLI(t, "model", "--rtt", "80ms", "--rto", "500ms", "--loss", "0.01,0.0963",
		"--R", "1.2,opt", "--mss", "1000B", "--wmax", "32", "--b", "2", "--capacity", "0.5Mbps", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var got modelJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if got.Params.RTTSeconds != 0.08 || got.Params.MSSBytes != 1000 || got.Params.CapacityBps != 500000 || got.Params.B != 2 {
		t.Errorf("params echoed as %+v", got.Params)
	}
	// 2 losses x (3 TCP models + 2 R choices).
	if len(got.Points) != 10 {
		t.Fatalf("%d points, want 10", len(got.Points))
	}
	tp := model.TCPParams{RTT: 80 * time.Millisecond, RTO: 500 * time.Millisecond, MSS: 1000, Wmax: 32, B: 2, Capacity: 500 * units.Kbps}
	for _, pt := range got.Points {
		tp.P = pt.P
		var want model.Estimate
		var err error
		switch pt.Model {
		case "mathis":
			want, err = model.Mathis(tp)
		case "padhye":
			want, err = model.Padhye(tp)
		case "padhye-approx":
			want, err = model.PadhyeApprox(tp)
		case "tcpnc":
			r := 1.2
			if pt.RChoice == "1/(1-p)" {
				r = 1 / (1 - pt.P)
			}
			if pt.R != r {
				t.Errorf("tcpnc p=%g %s: R = %g, want %g", pt.P, pt.RChoice, pt.R, r)
			}
			want, err = model.TCPNC(model.NCParams{TCPParams: tp, R: r})
		default:
			t.Fatalf("unexpected model %q", pt.Model)
		}
		if err != nil {
			t.Fatal(err)
		}
		if pt.GoodputBps != want.GoodputBitsPerSecond() || pt.SendPps != want.SendRate || pt.Window != want.Window ||
			pt.EffectiveLoss != want.EffectiveLoss || pt.Limit != want.Limit.String() {
			t.Errorf("%s p=%g R=%g: printed %+v, library %+v", pt.Model, pt.P, pt.R, pt, want)
		}
	}
}

func TestModelTableAndSweeps(t *testing.T) {
	code, out, errOut := runModelCLI(t, "model", "--loss", "0.001:0.2:5", "--R", "1.2", "--wmax", "40")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// Two comment lines, a header, five rows.
	if len(lines) != 8 || !strings.HasPrefix(lines[0], "# RTT 100ms") {
		t.Fatalf("table has %d lines, want 8:\n%s", len(lines), out)
	}
	for _, col := range []string{"p", "mathis", "padhye", "padhye-approx", "R", "tcpnc", "p_eff", "limit"} {
		if !strings.Contains(lines[2], col) {
			t.Errorf("header %q lacks column %q", lines[2], col)
		}
	}
	wantP := []string{"0.001", "0.05075", "0.1005", "0.1502", "0.2"}
	for i, w := range wantP {
		if f := strings.Fields(lines[3+i]); len(f) == 0 || f[0] != w {
			t.Errorf("row %d starts %q, want p = %s", i, lines[3+i], w)
		}
	}

	vs, err := model.ParseValues("0.001:0.1:3", true)
	if err != nil || len(vs) != 3 || math.Abs(vs[1]-0.01) > 1e-15 || vs[2] != 0.1 {
		t.Errorf("log sweep 0.001:0.1:3 = %v, %v; want [0.001 0.01 0.1]", vs, err)
	}
	rs, err := model.ParseRedundancies("1:1.2:3", false)
	if err != nil || len(rs) != 3 || math.Abs(rs[1].Value-1.1) > 1e-15 {
		t.Errorf("R sweep 1:1.2:3 = %v, %v", rs, err)
	}
}

func TestModelPlot(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file  string
		args  []string
		magic string
	}{
		{"loss.png", []string{"--loss", "0.001:0.3:12", "--logx", "--R", "1,opt", "--capacity", "0.5Mbps"}, "\x89PNG"},
		{"redundancy.svg", []string{"--loss", "0.0963", "--R", "1:1.4:9", "--capacity", "0.5Mbps"}, "<?xml"},
	} {
		path := filepath.Join(dir, tc.file)
		code, _, errOut := runModelCLI(t, append([]string{"model", "--plot", path}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", tc.file, code, errOut)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 1000 || !bytes.HasPrefix(data, []byte(tc.magic)) {
			t.Errorf("%s: %d bytes starting %q, want a plot starting %q", tc.file, len(data), data[:min(len(data), 8)], tc.magic)
		}
		if tc.file == "redundancy.svg" {
			for _, s := range []string{"redundancy factor R", "goodput (Mbit/s)", "tcpnc", "padhye"} {
				if !bytes.Contains(data, []byte(s)) {
					t.Errorf("%s lacks %q (axis label or legend)", tc.file, s)
				}
			}
		}
	}
}

func TestModelBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--R", "0.9"}, "--R values must be in [1, 100]"},
		{[]string{"--R", "fast"}, "neither a number nor opt"},
		{[]string{"--loss", "1.2"}, "--loss values must be in [0, 1)"},
		{[]string{"--loss", "-0.1"}, "--loss values must be in [0, 1)"},
		{[]string{"--loss", "0.1:0.2:x"}, "FROM:TO:POINTS"},
		{[]string{"--loss", "0.2:0.1:5"}, "upwards"},
		{[]string{"--loss", "0.1:0.2"}, "FROM:TO:POINTS"},
		{[]string{"--loss", "NaN"}, "not a number"},
		{[]string{"--loss", "0:0.1:5", "--logx"}, "needs FROM > 0"},
		{[]string{"--rtt", "-1s"}, "--rtt must be a positive duration"},
		{[]string{"--rtt", "0"}, "--rtt must be a positive duration"},
		{[]string{"--rtt", "fast"}, "--rtt must be a positive duration"},
		{[]string{"--rto", "0"}, "--rto must be a positive duration"},
		{[]string{"--mss", "0"}, "--mss must be a positive size"},
		{[]string{"--wmax", "0.5"}, "--wmax must be 0 (no cap) or at least 1"},
		{[]string{"--b", "0"}, "--b must be at least 1"},
		{[]string{"--capacity", "fast"}, "--capacity must be a positive rate"},
		{[]string{"--duration", "-5s"}, "--duration must be a duration"},
		{[]string{"--plot", "out.bmp"}, "--plot file must end in .png, .svg or .pdf"},
		{[]string{"--models", "reno"}, "unknown model \"reno\""},
		{[]string{"--wmax", "0", "--loss", "0.1", "--R", "2"}, "use --wmax or --capacity"},
		{[]string{"--wmax", "0", "--loss", "0", "--models", "padhye"}, "use --wmax or --capacity"},
		{[]string{"--duration", "10ms"}, "Duration must be in"},
		{[]string{"extra"}, "unexpected argument \"extra\""},
		{[]string{"--no-such-flag"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		code, out, errOut := runModelCLI(t, append([]string{"model"}, tt.args...)...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("model %v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut, tt.want)
		}
		if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
			t.Errorf("model %v printed NaN or Inf: %q", tt.args, out)
		}
	}
	if code, _, _ := runModelCLI(t, "model", "-h"); code != 0 {
		t.Errorf("model -h: exit %d, want 0", code)
	}
}

// TestModelNeverPrintsNaN sweeps the whole loss range, edges included.
func TestModelNeverPrintsNaN(t *testing.T) {
	code, out, errOut := runModelCLI(t, "model", "--loss", "0:0.98:200", "--R", "1,1.5,opt", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
		t.Fatal("output contains NaN or Inf")
	}
	var got modelJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Points) != 200*6 {
		t.Errorf("%d points, want %d", len(got.Points), 200*6)
	}
}
