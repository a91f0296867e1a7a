//go:build linux

package experiment

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"

	"github.com/cclab/cclab/experiment/network"
)

// rssFileKB is the process's resident file-backed memory, from
// /proc/self/status.
func rssFileKB(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if f := bytes.Fields(line); len(f) == 3 && string(f[0]) == "RssFile:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// TestReleaseColdPages checks that a run in a process that gives back its
// pages gives the same result as one that does not, and that
// CollectFinishedNetwork then returns the dead network's heap to the
// operating system and drops the executable's resident code.
func TestReleaseColdPages(t *testing.T) {
	t.Cleanup(func() { releaseColdPages.Store(false) })
	s := mustParse(t, lossyScenario("{model: bernoulli, p: 0.02}", "2MB", 3, 7))
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	runOnce := func() *Result {
		n, err := network.Build(s)
		if err != nil {
			t.Fatal(err)
		}
		res, err := RunNetwork(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		res.WallSeconds = 0
		return res
	}
	want := runOnce()
	ReleaseColdPages()
	got := runOnce()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("run with ReleaseColdPages differs:\n got %+v\nwant %+v", got, want)
	}

	// Garbage the collection frees: with the heap returned, almost none of
	// it stays resident as free heap. (64 MiB against an 8 MiB allowance:
	// a test binary's runtime frees and keeps a few MiB of its own, 2.6 MB
	// once on a loaded CI machine, where a collection alone leaves all 64
	// MiB.)
	garbage := make([][]byte, 512)
	for i := range garbage {
		garbage[i] = bytes.Repeat([]byte{byte(i)}, 128<<10)
	}
	fileBefore := rssFileKB(t)
	runtime.KeepAlive(garbage)
	CollectFinishedNetwork()
	free := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(free)
	if b := free[0].Value.Uint64(); b > 8<<20 {
		t.Errorf("%d bytes of free heap still resident after CollectFinishedNetwork freed 64 MiB, want at most 8 MiB", b)
	}
	if fileAfter := rssFileKB(t); fileAfter >= fileBefore {
		t.Errorf("resident file pages %d kB after CollectFinishedNetwork, %d kB before: want fewer", fileAfter, fileBefore)
	}
}
