package trainlog

import (
	"bytes"
	"math"
	"strings"
	"testing"
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
