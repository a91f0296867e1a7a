package policy

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cclab/cclab/internal/atomicfile"
	"github.com/cclab/cclab/internal/racebuild"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/norm"
	"github.com/cclab/cclab/learn/rl/space"
)

func testPolicy(t testing.TB, head Head, withNorm bool) *Policy {
	t.Helper()
	obs := space.Uniform(-5, 5, 4)
	act := space.NewBox([]float32{-2, 0}, []float32{2, 10})
	out := 2
	if head == Argmax {
		act = space.NewDiscrete(3)
		out = 3
	}
	if head == Squash {
		out = 4 // SAC actors also output log σ
	}
	net := nn.NewMLP([]int{4, 8, out}, nn.ReLU, nn.Identity)
	if head == Rescale {
		net = nn.NewMLP([]int{4, 8, out}, nn.ReLU, nn.Tanh)
	}
	net.InitTorchDefault(rand.New(rand.NewPCG(1, uint64(head))))
	var o *norm.Obs
	if withNorm {
		o = norm.NewObs(4)
		o.RMS.Update([]float32{1, 2, 3, 4, -1, 0, 1, 2})
	}
	p, err := New(obs, act, head, net, o, Meta{Algo: "test", Seed: 9, Steps: 100, TrainingWallS: 12.5, Command: "cclab rl bench"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRoundTripAllHeads(t *testing.T) {
	dir := t.TempDir()
	for _, head := range []Head{Squash, Rescale, Clip, Argmax} {
		for _, withNorm := range []bool{false, true} {
			p := testPolicy(t, head, withNorm)
			path := filepath.Join(dir, head.String())
			if err := p.Save(path); err != nil {
				t.Fatal(err)
			}
			q, err := Load(path)
			if err != nil {
				t.Fatalf("%v: %v", head, err)
			}
			if q.Meta.TrainingWallS != 12.5 || q.Meta.Seed != 9 || q.Meta.Algo != "test" {
				t.Errorf("%v: metadata %+v", head, q.Meta)
			}
			if (q.Norm != nil) != withNorm {
				t.Errorf("%v: normaliser present = %v, want %v", head, q.Norm != nil, withNorm)
			}
			rng := rand.New(rand.NewPCG(2, 2))
			for k := 0; k < 20; k++ {
				x := []float32{float32(rng.NormFloat64() * 3), float32(rng.NormFloat64()), 0, 1}
				a := append([]float32(nil), p.ActInto(x)...)
				b := q.ActInto(x)
				if !bytes.Equal(f32bytes(a), f32bytes(b)) {
					t.Fatalf("%v: loaded policy acts %v, original %v", head, b, a)
				}
				if !p.Act.Contains(a) {
					t.Fatalf("%v: action %v outside %v", head, a, p.Act)
				}
			}
		}
	}
}

func f32bytes(x []float32) []byte {
	var b []byte
	for _, v := range x {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// TestHeadsMapOutputs checks each head's mapping on a network whose output
// is set directly (zero weights, chosen biases).
func TestHeadsMapOutputs(t *testing.T) {
	obs := space.Uniform(-1, 1, 1)
	box := space.NewBox([]float32{-2, 0}, []float32{2, 10})
	mk := func(out []float32, act nn.Activation) *nn.MLP {
		m := nn.NewMLP([]int{1, len(out)}, act, act)
		copy(m.B(0), out)
		return m
	}
	for _, tc := range []struct {
		head Head
		act  space.Space
		net  *nn.MLP
		want []float32
	}{
		{Squash, box, mk([]float32{0, float32(math.Atanh(0.5)), 9, 9}, nn.Identity), []float32{0, 7.5}},
		{Rescale, box, mk([]float32{-1, 1}, nn.Identity), []float32{-2, 10}},
		{Clip, box, mk([]float32{-3, 4}, nn.Identity), []float32{-2, 4}},
		{Argmax, space.NewDiscrete(3), mk([]float32{0.1, 0.7, 0.2}, nn.Identity), []float32{1}},
	} {
		p, err := New(obs, tc.act, tc.head, tc.net, nil, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		got := p.ActInto([]float32{0.3})
		for i := range tc.want {
			if math.Abs(float64(got[i]-tc.want[i])) > 1e-5 {
				t.Errorf("%v: action %v, want %v", tc.head, got, tc.want)
				break
			}
		}
	}
}

func TestRefusesBadFiles(t *testing.T) {
	p := testPolicy(t, Squash, true)
	good, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated", good[:len(good)-10], "corrupt or truncated"},
		{"flipped", func() []byte { b := append([]byte(nil), good...); b[60] ^= 0x10; return b }(), "corrupt"},
		{"magic", append([]byte("NOTAPOLI"), good[8:]...), "bad magic"},
		{"version", func() []byte { b := append([]byte(nil), good...); b[8] = 3; return b }(), "format version 3, this build reads versions 1 (a policy) and 2 (an ensemble)"},
		{"empty", nil, "too short"},
	} {
		_, err := Read(bytes.NewReader(tc.b))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	// A well-formed file whose network does not fit its spaces.
	bad := testPolicy(t, Clip, false)
	bad.Net = nn.NewMLP([]int{5, 2}, nn.Identity, nn.Identity)
	if _, err := bad.MarshalBinary(); err == nil || !strings.Contains(err.Error(), "takes 5 inputs") {
		t.Errorf("shape mismatch: %v", err)
	}
}

func TestCheckNamesMismatch(t *testing.T) {
	p := testPolicy(t, Clip, false)
	if err := p.Check(p.Obs, p.Act); err != nil {
		t.Fatal(err)
	}
	err := p.Check(space.Uniform(-5, 5, 980), p.Act)
	if err == nil || !strings.Contains(err.Error(), "dim 4") || !strings.Contains(err.Error(), "dim 980") {
		t.Errorf("observation mismatch error: %v", err)
	}
	if err := p.Check(p.Obs, space.Uniform(-1, 1, 2)); err == nil {
		t.Errorf("action mismatch accepted")
	}
}

func TestActDoesNotAllocate(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("under -race sync.Pool drops pooled GEMM buffers at random, so they are allocated again")
	}
	p := testPolicy(t, Squash, true)
	x := []float32{1, 2, 3, 4}
	p.ActInto(x)
	if n := testing.AllocsPerRun(100, func() { p.ActInto(x) }); n != 0 {
		t.Errorf("ActInto allocates %v times per call, want 0", n)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope")); !os.IsNotExist(err) {
		t.Errorf("Load of a missing file: %v, want a not-exist error", err)
	}
}

func FuzzRead(f *testing.F) {
	for _, h := range []Head{Squash, Argmax} {
		b, _ := testPolicy(f, h, true).MarshalBinary()
		f.Add(b)
	}
	// The audit's bad inputs: NaN and Inf weights with a valid checksum,
	// a text file, nothing.
	for _, w := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		p := testPolicy(f, Clip, false)
		p.Net.Params[0] = w
		b, _ := p.MarshalBinary()
		f.Add(b)
	}
	if e, err := NewEnsemble([]*Policy{testPolicy(f, Squash, true), testPolicy(f, Squash, false)}, "cclab marlin ensemble"); err == nil {
		b, _ := e.MarshalBinary()
		f.Add(b)
	} else {
		f.Fatal(err)
	}
	f.Add([]byte("name: not a policy\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		// Besides the raw input, parse it with a valid checksum appended
		// so the fuzzer exercises the parser behind the CRC check.
		fixed := binary.LittleEndian.AppendUint32(append([]byte(nil), data...), crc32.Checksum(data, castagnoli()))
		for _, b := range [][]byte{data, fixed} {
			p, err := Read(bytes.NewReader(b))
			if err != nil {
				continue
			}
			// A file that passed every check must be usable.
			x := make([]float32, p.Obs.Dim())
			p.ActInto(x)
		}
	})
}

// TestNonFiniteWeightsRefused: before the fix a policy with NaN or Inf
// weights and a valid checksum loaded, and evaluation printed "mean return
// NaN".
func TestNonFiniteWeightsRefused(t *testing.T) {
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		p := testPolicy(t, Clip, false)
		p.Net.Params[3] = bad
		b, err := p.MarshalBinary()
		if err != nil {
			continue // refused already when writing: fine too
		}
		if _, err := Read(bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), "parameter 3 of") {
			t.Errorf("weight %v: got %v", bad, err)
		}
	}
}

// TestLoadRefusesDevices: /dev/zero was refused only after reading 1 GiB.
func TestLoadRefusesDevices(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "is a device, not a policy file") {
		t.Errorf("got %v", err)
	}
}

// TestSaveRemovesStaleTemps: a Save killed before its rename leaves a
// temporary file; the next Save removes it.
func TestSaveRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.policy")
	stale := filepath.Join(dir, atomicfile.TempPrefix+"p.policy-123")
	os.WriteFile(stale, []byte("half"), 0o644)
	if err := testPolicy(t, Clip, false).Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file still there: %v", err)
	}
}

// TestCommandPathsCleaned: bug 6. marlin eval printed the training command
// with "--out <a temporary folder>/marlin-g995.policy".
func TestCommandPathsCleaned(t *testing.T) {
	if got := CleanCommand("cclab marlin train --out /tmp/TestX123/marlin-g995.policy --csv=/home/u/c.csv --gamma 0.995 --traces traces/a"); got != "cclab marlin train --out marlin-g995.policy --csv=c.csv --gamma 0.995 --traces traces/a" {
		t.Errorf("got %q", got)
	}
	p := testPolicy(t, Clip, false)
	p.Meta.Command = "cclab rl bench --save /tmp/abc/p.pol"
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Read(bytes.NewReader(b))
	if err != nil || q.Meta.Command != "cclab rl bench --save p.pol" {
		t.Errorf("saved command %q (%v)", q.Meta.Command, err)
	}
}

// TestCheckEnv: a policy is refused by another paper's evaluation with the
// environment it was trained in named.
func TestCheckEnv(t *testing.T) {
	if err := (Meta{Env: "marlin-satcom-uhf"}).CheckEnv("marlin-", "MARLIN"); err != nil {
		t.Error(err)
	}
	if err := (Meta{}).CheckEnv("marlin-", "MARLIN"); err != nil {
		t.Errorf("a policy without an env: %v", err)
	}
	err := (Meta{Env: "deepcc"}).CheckEnv("dcrl-", "the data-centre paper")
	if err == nil || !strings.Contains(err.Error(), `environment "deepcc", not the data-centre paper's (dcrl-...)`) {
		t.Errorf("a DeepCC policy for the data-centre paper: %v", err)
	}
}
