package trainlog

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestCSVRows(t *testing.T) {
	var csv, bar bytes.Buffer
	l := New(&csv, &bar, 100, "train")
	if err := l.Log(10, F("loss", 0.5), F("return", math.NaN())); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(20, F("loss", 0.25), F("return", -150)); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(30, F("other", 1), F("return", 0)); err == nil {
		t.Errorf("row with a different field name was accepted")
	}
	if err := l.Log(30, F("loss", 1)); err == nil {
		t.Errorf("row with a missing field was accepted")
	}
	l.Close()
	want := "step,loss,return\n10,0.5,\n20,0.25,-150\n"
	if csv.String() != want {
		t.Errorf("CSV =\n%s\nwant\n%s", csv.String(), want)
	}
	if !strings.Contains(bar.String(), "train") {
		t.Errorf("progress output %q lacks the description", bar.String())
	}
}

func TestZeroLoggerDiscards(t *testing.T) {
	var l Logger
	if err := l.Log(1, F("x", 1)); err != nil {
		t.Fatal(err)
	}
	if l.Last[0].Value != 1 {
		t.Errorf("Last = %v, want the logged row", l.Last)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestProgressLinesWhenNotATerminal: long commands under nohup or SLURM
// printed no progress at all (the bar was for terminals only); now a
// plain line with the rate and an ETA is written every LineEvery.
func TestProgressLinesWhenNotATerminal(t *testing.T) {
	old := LineEvery
	LineEvery = 0
	defer func() { LineEvery = old }()
	var out strings.Builder
	l := New(nil, &out, 1000, "train")
	l.Progress(0)
	time.Sleep(2 * time.Millisecond)
	l.Describe("return -3.5")
	l.Progress(500)
	l.Close()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "train: 500/1000 steps (50.0%), ") || !strings.Contains(lines[0], "ETA ") ||
		!strings.Contains(lines[0], "[return -3.5]") || strings.ContainsAny(out.String(), "\r\x1b") {
		t.Errorf("progress output:\n%q", out.String())
	}
}
