package tcpnc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestSaveWindowRoundTrip checks that the study's JSON output decodes to
// the rows it was written from and that both figure formats are written.
func TestSaveWindowRoundTrip(t *testing.T) {
	rows := []WindowRow{
		{P: 0.01, Scheme: "tcp", CwndPackets: 19.5, ThroughputMbps: 0.41, RTTMs: 130, UsedPackets: 4.6, Efficiency: 0.24},
		{P: 0.01, Scheme: "tcpnc", R: 1.06, CwndPackets: 12.1, ThroughputMbps: 0.46, RTTMs: 180, UsedPackets: 7.1, Efficiency: 0.59},
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := SaveWindow(dir, rows); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "window.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got []WindowRow
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("window.json decodes to %+v, want %+v", got, rows)
	}
	for _, ext := range []string{"png", "svg"} {
		if st, err := os.Stat(filepath.Join(dir, "window."+ext)); err != nil || st.Size() == 0 {
			t.Errorf("window.%s: %v", ext, err)
		}
	}
	var b bytes.Buffer
	WriteWindowText(&b, rows, Config{Seeds: 2, Duration: time.Minute, NoSACK: true})
	if s := b.String(); !strings.Contains(s, "Reno-style") || !strings.Contains(s, "2 runs of 1m0s") || strings.Count(s, "\n") != 4 {
		t.Errorf("window table:\n%s", s)
	}
}
