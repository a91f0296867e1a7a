package boundedio

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDevicesRefused(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := ReadFile("/dev/zero", 1<<20, "scenario file")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero is a device, not a scenario file") {
		t.Errorf("got %v", err)
	}
	if _, err := ReadFile(t.TempDir(), 1<<20, "trace"); err == nil || !strings.Contains(err.Error(), "is a directory, not a trace") {
		t.Errorf("got %v", err)
	}
}

func TestLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("12345"), 0o644)
	if b, err := ReadFile(p, 5, "x"); err != nil || string(b) != "12345" {
		t.Errorf("at the limit: %q %v", b, err)
	}
	if _, err := ReadFile(p, 4, "x"); err == nil || !strings.Contains(err.Error(), "larger than 4 bytes") {
		t.Errorf("over the limit: %v", err)
	}
	b, err := io.ReadAll(Limit(strings.NewReader("12345"), p, 5, "x"))
	if err != nil || string(b) != "12345" {
		t.Errorf("Limit at the limit: %q %v", b, err)
	}
	if _, err := io.ReadAll(Limit(strings.NewReader("123456"), p, 5, "x")); err == nil {
		t.Errorf("Limit over the limit: no error")
	}
}
