package netns

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
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
