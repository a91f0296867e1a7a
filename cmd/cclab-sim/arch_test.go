package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestSameOutputOnArm64: the simulator built for linux/arm64 and run under
// qemu-user prints, for every built-in scenario, exactly what this amd64
// build prints, wall time aside. Go's arm64 compiler fuses a multiply and
// an add into one instruction that rounds once where amd64 rounds twice,
// and arm64 runs without the prefetches and the vector kernels; a result
// that came to depend on either shows here. qemu-user executes arm64's
// instructions exactly as the processor specifies them. Skipped without
// qemu-aarch64-static (apt-get install qemu-user-static; CI does not, for
// its time) and on hosts other than linux/amd64.
func TestSameOutputOnArm64(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("compares with linux/arm64 from linux/amd64 only, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		t.Skip("qemu-aarch64-static not installed (apt-get install qemu-user-static)")
	}
	if testing.Short() {
		t.Skip("builds for arm64 and runs every scenario emulated: about a minute")
	}
	bin := filepath.Join(t.TempDir(), "cclab-sim-arm64")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build for linux/arm64: %v\n%s", err, out)
	}
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("built-in scenarios not found: %v, %d files", err, len(files))
	}
	for _, f := range files {
		want, stderr, code := runArgs(t, f, "--json")
		if code != 0 {
			t.Fatalf("%s on amd64: exit %d: %s", f, code, stderr)
		}
		out, err := exec.Command(qemu, bin, f, "--json").Output()
		if err != nil {
			t.Fatalf("%s on arm64: %v", f, err)
		}
		a, b := wall.ReplaceAllString(want, ""), wall.ReplaceAllString(string(out), "")
		if a != b {
			t.Errorf("%s: arm64 prints otherwise than amd64, first at line %d", f, firstDifference(a, b))
		}
	}
}

// firstDifference returns the number of the first line where a and b
// differ (1-based).
func firstDifference(a, b string) int {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}
