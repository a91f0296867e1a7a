package traces

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"
	"time"

	"github.com/cclab/cclab/netsim/trace"
)

// TestShippedTraces checks each built-in trace against README.md: the
// decompressed file is the original (SHA-256 prefix), and the simulator
// reads it whole (opportunities = lines, period = duration) by name from
// any directory.
func TestShippedTraces(t *testing.T) {
	for _, tc := range []struct {
		file   string
		sha16  string
		lines  int64
		period time.Duration
	}{
		{"ATT-LTE-driving.down.gz", "73c58f41bf7a3f0f", 338_895, 786_112 * time.Millisecond},
		{"TMobile-LTE-short.down.gz", "4f33dce8dd811b57", 194_846, 139_986 * time.Millisecond},
		{"TMobile-LTE-driving.down.gz", "d48ff134fc29c36c", 505_078, 474_609 * time.Millisecond},
		{"ATT-LTE-driving-2016.down.gz", "24a40538340de991", 45_604, 120_002 * time.Millisecond},
		{"Verizon-LTE-short.down.gz", "c918436fbd6246af", 58_655, 140_000 * time.Millisecond},
	} {
		f, err := files.Open(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, zr); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		f.Close()
		if got := hex.EncodeToString(h.Sum(nil))[:16]; got != tc.sha16 {
			t.Errorf("%s: SHA-256 of the decompressed trace starts %s, README says %s", tc.file, got, tc.sha16)
		}
		tr, err := trace.Shared.Load("no/such/dir/" + tc.file)
		if err != nil {
			t.Fatalf("%s by name: %v", tc.file, err)
		}
		if tr.Opportunities() != tc.lines || tr.Period() != tc.period {
			t.Errorf("%s: %d opportunities over %v, want %d over %v", tc.file, tr.Opportunities(), tr.Period(), tc.lines, tc.period)
		}
	}
}
