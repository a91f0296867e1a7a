package netns

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestOwner(t *testing.T) {
	for name, want := range map[string]int{
		"cclab-123-snd": 123, "cclab-7-rcv": 7, "cclab-0-x": 0, "cclab--1-x": 0,
		"cclab-abc-snd": 0, "other-123-snd": 0, "cclab-123": 0, "cclab-01-x": 0, "cclab-+1-x": 0,
	} {
		got, ok := Owner(name)
		if got != want || ok != (want > 0) {
			t.Errorf("Owner(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
	if p, ok := Owner(Name("snd")); !ok || p != os.Getpid() {
		t.Errorf("Owner(Name) = %d, %v", p, ok)
	}
}

func FuzzOwner(f *testing.F) {
	f.Add("cclab-1-snd")
	f.Add("cclab-99999999999999999999-x")
	f.Fuzz(func(t *testing.T, s string) {
		if p, ok := Owner(s); ok && (p <= 0 || !strings.HasPrefix(s, Prefix+strconv.Itoa(p)+"-")) {
			t.Errorf("Owner(%q) = %d", s, p)
		}
	})
}

func TestCreateRefusesForeignNames(t *testing.T) {
	if _, err := Create("not-ours"); err == nil {
		t.Error("created a namespace without the cclab prefix")
	}
}

// TestZombieIsDead: a killed run not yet reaped by its parent still holds
// its pid, but its namespaces are stale.
func TestZombieIsDead(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Wait()
	for range 200 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
			if alive(pid) {
				t.Fatalf("zombie %d reported alive", pid)
			}
			if !alive(os.Getpid()) {
				t.Fatal("this process reported dead")
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Skip("the child never showed as a zombie")
}

// TestCleanStaleRacesAnotherCleaner: two processes cleaning at once (a
// second run, the emulator's test packages in parallel) both list a stale
// namespace and one removes it first; the other's cleanup must count it
// removed, not fail on iproute2's "No such file or directory". A stale
// namespace is made with a dead child's pid, and another cleaner is
// played by removing it just before CleanStale's own removal.
func TestCleanStaleRacesAnotherCleaner(t *testing.T) {
	if err := Check(); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	name := fmt.Sprintf("%s%d-racetest", Prefix, cmd.Process.Pid)
	if alive(cmd.Process.Pid) {
		t.Skipf("pid %d reused already", cmd.Process.Pid)
	}
	if err := ip("netns", "add", name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ip("netns", "del", name) })
	real := delStale
	t.Cleanup(func() { delStale = real })
	raced := false
	delStale = func(n string) error {
		if n == name {
			raced = true
			if err := real(n); err != nil { // the other cleaner
				t.Fatal(err)
			}
		}
		return real(n)
	}
	removed, _, err := CleanStale()
	if !raced {
		if _, serr := os.Stat(filepath.Join(runDir, name)); errors.Is(serr, os.ErrNotExist) {
			t.Skipf("another process (a parallel test package) removed %s before this test's cleaner listed it", name)
		}
		t.Fatalf("CleanStale never removed %s (removed %v, error %v)", name, removed, err)
	}
	if err != nil {
		t.Fatalf("CleanStale after another cleaner: %v", err)
	}
	if !slices.Contains(removed, name) {
		t.Errorf("%s not reported removed: %v", name, removed)
	}
	// A removal that fails for another reason is still an error.
	if err := ip("netns", "add", name); err != nil {
		t.Fatal(err)
	}
	refused := false
	delStale = func(n string) error {
		if n == name {
			refused = true
			return fmt.Errorf("ip netns del %s: refused", n)
		}
		return real(n)
	}
	removed, _, err = CleanStale()
	if !refused {
		t.Skipf("another process removed %s before this test's cleaner listed it", name)
	}
	if err == nil || slices.Contains(removed, name) {
		t.Errorf("a failed removal: removed %v, error %v", removed, err)
	}
}
