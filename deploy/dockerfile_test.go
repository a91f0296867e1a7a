// Package deploy checks the container image recipe where no container
// engine is available: the Dockerfile's build step, run as written, gives a
// static binary that runs the image's /scenarios files on a bare system.
package deploy

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dockerfile is the recipe's build command and the scenario files it
// copies into the image.
type dockerfile struct {
	build     []string // the RUN line that builds cclab, as words
	scenarios string   // the COPY source glob for /scenarios/
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d dockerfile
	copyRe := regexp.MustCompile(`^COPY\s+(\S+)\s+/scenarios/$`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "RUN "); ok && strings.Contains(rest, "go build") {
			d.build = strings.Fields(rest)
		}
		if m := copyRe.FindStringSubmatch(line); m != nil {
			d.scenarios = m[1]
		}
	}
	if d.build == nil || d.scenarios == "" {
		t.Fatalf("Dockerfile: no `RUN ... go build` line or no COPY into /scenarios/ (got %q, %q)", d.build, d.scenarios)
	}
	return d
}

// TestImageBinaryIsStatic runs the Dockerfile's build step as written
// (environment assignments, then go build), checks that the binary has no
// dynamic loader (the distroless static base has no libc), and runs a copied
// scenario the way a pod does (`cclab run /scenarios/NAME.yaml`).
func TestImageBinaryIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the image build in -short mode")
	}
	d := readDockerfile(t)
	out := t.TempDir()
	var env []string
	words := d.build
	for len(words) > 0 && strings.Contains(words[0], "=") {
		env = append(env, words[0])
		words = words[1:]
	}
	if len(words) < 2 || words[0] != "go" || words[1] != "build" {
		t.Fatalf("build line %q does not run go build", d.build)
	}
	args := make([]string, 0, len(words))
	for _, w := range words[1:] {
		args = append(args, strings.ReplaceAll(w, "/out/", out+"/"))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	bin := filepath.Join(out, "cclab")
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary needs a dynamic loader; the static base image has none")
		}
	}
	scenarios, _ := filepath.Glob(filepath.Join("..", d.scenarios))
	if len(scenarios) == 0 {
		t.Fatalf("COPY %s /scenarios/ matches no file", d.scenarios)
	}
	img := t.TempDir() // stands for the image's /scenarios
	for _, s := range scenarios {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(img, filepath.Base(s)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := exec.Command(bin, "run", filepath.Join(img, "dumbbell.yaml"), "--set", "duration=2s", "--json")
	run.Env = []string{} // nothing from the build environment, as in the image
	run.Dir = t.TempDir()
	if b, err := run.CombinedOutput(); err != nil || !strings.Contains(string(b), "goodput") {
		t.Fatalf("cclab run in a bare environment: %v\n%s", err, b)
	}
	if st, err := os.Stat(bin); err == nil {
		t.Logf("static binary: %.1f MiB", float64(st.Size())/(1<<20))
	}
}
