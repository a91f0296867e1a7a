package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCaptures: cclab run writes each capture its flags name (and only
// those), each a pcap file with a header and packets; one file named for
// two captures, or a capture that cannot be created, fails the run with
// the names in the message.
func TestRunCaptures(t *testing.T) {
	dir := t.TempDir()
	arrivals, drops := filepath.Join(dir, "in.pcap"), filepath.Join(dir, "drops.pcap")
	if code, out, errs := runCmd(t, "run", "dumbbell", "--set", "duration=3s", "--set", "bottleneck.queue.limit=5",
		"--pcap-arrivals", arrivals, "--pcap-drops", drops); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	for _, p := range []string{arrivals, drops} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		// A 24-byte file header, then at least one packet record.
		if st.Size() <= 24+16 {
			t.Errorf("%s: %d bytes, want a header and packets", filepath.Base(p), st.Size())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files written, want the 2 named", len(entries))
	}
	code, _, errs := runCmd(t, "run", "dumbbell", "--set", "duration=1s", "--pcap", drops, "--pcap-drops", dir+"/./drops.pcap")
	if code == 0 || !strings.Contains(errs, "--pcap and --pcap-drops both name") {
		t.Errorf("one file for two captures: exit %d, stderr %q", code, errs)
	}
	bad := filepath.Join(dir, "missing", "drops.pcap")
	code, _, errs = runCmd(t, "run", "dumbbell", "--set", "duration=1s", "--pcap-drops", bad)
	if code == 0 || !strings.Contains(errs, bad) {
		t.Errorf("exit %d, stderr %q: want a failure naming %s", code, errs, bad)
	}
}
