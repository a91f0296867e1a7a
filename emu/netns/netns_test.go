package netns

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestOwner(t *testing.T) {
	for name, want := range map[string]int{
		"cclab-123-snd": 123, "cclab-7-rcv": 7, "cclab-0-x": 0, "cclab--1-x": 0,
		"cclab-abc-snd": 0, "other-123-snd": 0, "cclab-123": 0,
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
