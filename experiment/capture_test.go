package experiment

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/netsim/pcap"
)

// capturedSeg is one TCP data segment read back from a capture.
type capturedSeg struct {
	at       time.Time
	src, dst string
	sport    uint16
	seq      uint32
	payload  int
}

// readSegs decodes a capture written by AttachPcap, keeping its TCP data
// segments; it also returns how many packets the file holds.
func readSegs(t *testing.T, path string) (segs []capturedSeg, packets int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, packets, err := pcap.ReadSegments(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, g := range all {
		if g.Payload > 0 {
			segs = append(segs, capturedSeg{g.At, g.Src.Addr().String(), g.Dst.Addr().String(), g.Src.Port(), g.Seq, g.Payload})
		}
	}
	return segs, packets
}

// TestPcapCaptures: with a queue too small for three flows, the three
// captures of the bottleneck agree with the run and with each other: the
// drops file holds exactly the packets the queue dropped (the flows' drop
// counters), each also in the arrivals file at the same instant (DropTail
// drops as packets arrive); every arrival not dropped leaves the queue, in
// arrival order per flow; and every dropped segment arrives again later and
// gets through (the flows complete). Each file written alone is the same
// file.
func TestPcapCaptures(t *testing.T) {
	s := mustParse(t, `
name: drops
seed: 4
duration: 20s
bottleneck: {rate: 10Mbps, delay: 10ms, queue: {limit: 8}}
flows:
  - {count: 3, cc: newreno, bytes: 400KB, start_spread: 10ms}
`)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	all := Capture{
		Departures: filepath.Join(dir, "departures.pcap"),
		Arrivals:   filepath.Join(dir, "arrivals.pcap"),
		Drops:      filepath.Join(dir, "drops.pcap"),
	}
	capture := func(c Capture) *network.Network {
		n, err := network.Build(s)
		if err != nil {
			t.Fatal(err)
		}
		done, err := AttachPcap(n, c)
		if err != nil {
			t.Fatal(err)
		}
		n.Run()
		if err := done(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := capture(all)
	var want int64
	for _, f := range n.Flows {
		if !f.Done() {
			t.Fatalf("flow %s did not complete", f.Name)
		}
		want += f.Drops
	}
	if want < 10 {
		t.Fatalf("only %d drops: the scenario no longer overflows its queue", want)
	}
	t.Logf("%d drops", want)
	dropped, packets := readSegs(t, all.Drops)
	if int64(packets) != want || len(dropped) != packets {
		t.Fatalf("drops capture: %d packets, %d of them data segments; the flows counted %d drops", packets, len(dropped), want)
	}
	arrived, _ := readSegs(t, all.Arrivals)
	left, _ := readSegs(t, all.Departures)
	same := func(a, b capturedSeg) bool {
		return a.src == b.src && a.dst == b.dst && a.sport == b.sport && a.seq == b.seq && a.payload == b.payload
	}
	// Arrivals minus drops, in order, are the departures: match the drops
	// off the arrivals, then the rest one for one against the departures.
	var kept []capturedSeg
	j := 0
	for _, a := range arrived {
		if j < len(dropped) && same(a, dropped[j]) && a.at.Equal(dropped[j].at) {
			j++
			continue
		}
		kept = append(kept, a)
	}
	if j != len(dropped) {
		t.Fatalf("drop %d (%s:%d seq %d at %v) is not among the arrivals at its instant", j, dropped[j].src, dropped[j].sport, dropped[j].seq, dropped[j].at)
	}
	if len(kept) != len(left) {
		t.Fatalf("%d arrivals not dropped, %d departures", len(kept), len(left))
	}
	for i := range kept {
		if !same(kept[i], left[i]) || left[i].at.Before(kept[i].at) {
			t.Fatalf("arrival %d (seq %d at %v) leaves as departure (seq %d at %v)", i, kept[i].seq, kept[i].at, left[i].seq, left[i].at)
		}
	}
	for _, d := range dropped {
		resent := false
		for _, o := range left {
			if o.at.After(d.at) && same(o, d) {
				resent = true
				break
			}
		}
		if !resent {
			t.Errorf("segment %s:%d seq %d dropped at %v never leaves the queue afterwards", d.src, d.sport, d.seq, d.at)
		}
	}
	for name, c := range map[string]Capture{
		all.Arrivals: {Arrivals: filepath.Join(dir, "a.pcap")},
		all.Drops:    {Drops: filepath.Join(dir, "d.pcap")},
	} {
		capture(c)
		a, _ := os.ReadFile(c.Arrivals + c.Drops)
		b, _ := os.ReadFile(name)
		if !bytes.Equal(a, b) {
			t.Errorf("%s written alone (%d bytes) differs from the one written beside the others (%d bytes)", filepath.Base(name), len(a), len(b))
		}
	}
}

// TestCaptureCheck: one file named for two captures (up to spelling) is a
// *SameFileError naming both fields and the file; distinct files and
// empty names pass.
func TestCaptureCheck(t *testing.T) {
	for _, c := range []struct {
		c    Capture
		a, b string
	}{
		{Capture{Departures: "x.pcap", Drops: "./x.pcap"}, "Departures", "Drops"},
		{Capture{Arrivals: "d/a.pcap", Drops: "d/../d/a.pcap"}, "Arrivals", "Drops"},
		{Capture{Departures: "p", Arrivals: "p", Drops: "q"}, "Departures", "Arrivals"},
	} {
		err := c.c.Check()
		same, ok := errors.AsType[*SameFileError](err)
		if !ok || same.A != c.a || same.B != c.b || !strings.Contains(err.Error(), "Capture."+c.a) || !strings.Contains(err.Error(), same.Path) {
			t.Errorf("%+v: %v, want a *SameFileError naming %s and %s", c.c, err, c.a, c.b)
		}
	}
	for _, c := range []Capture{{}, {Departures: "a", Arrivals: "b", Drops: "c"}, {Drops: "d"}} {
		if err := c.Check(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
