package policy

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cclab/cclab/internal/racebuild"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/norm"
	"github.com/cclab/cclab/learn/rl/space"
)

// member is testPolicy with its own weights, normaliser and metadata, as an
// independently trained seed would have.
func member(t testing.TB, head Head, seed uint64, extra map[string]string) *Policy {
	t.Helper()
	p := testPolicy(t, head, true)
	p.Net.InitTorchDefault(rand.New(rand.NewPCG(seed, 77)))
	// Larger weights than the default initialisation so that members
	// disagree clearly, and Squash members saturate on some inputs.
	for i := range p.Net.Params {
		p.Net.Params[i] *= 3
	}
	p.Norm.RMS.Update([]float32{float32(seed), 0, -1, 2})
	p.Meta.Seed = seed
	p.Meta.Extra = extra
	return p
}

func randObs(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.Float64()*10 - 5)
	}
	return x
}

// TestEnsembleActsAsMeanOfMembers checks a Box ensemble's action against
// the mean of its members' actions computed separately, before and after
// a round trip through a file, and an Argmax ensemble's against the argmax
// of its members' summed network outputs computed from the networks.
func TestEnsembleActsAsMeanOfMembers(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 5))
	for _, head := range []Head{Squash, Rescale, Clip, Argmax} {
		ms := []*Policy{member(t, head, 1, nil), member(t, head, 2, nil), member(t, head, 3, nil)}
		e, err := NewEnsemble(ms, "cclab marlin ensemble")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, head.String())
		if err := e.Save(path); err != nil {
			t.Fatal(err)
		}
		loaded, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		disagree := 0
		for k := 0; k < 200; k++ {
			x := randObs(r, 4)
			var want []float64
			if head == Argmax {
				sum := make([]float32, 3)
				votes := map[int]bool{}
				for _, m := range ms {
					in := make([]float32, 4)
					m.Norm.Normalize(x, in)
					y := m.Net.Forward(m.Net.NewWorkspace(), in, 1)
					votes[nn.Argmax(y)] = true
					for i := range sum {
						sum[i] += y[i]
					}
				}
				if len(votes) > 1 {
					disagree++
				}
				want = []float64{float64(nn.Argmax(sum))}
			} else {
				want = make([]float64, 2)
				var first []float32
				for j, m := range ms {
					a := m.ActInto(x)
					if j == 0 {
						first = append([]float32(nil), a...)
					} else if math.Abs(float64(a[0]-first[0])) > 0.1 {
						disagree++
					}
					for i := range want {
						want[i] += float64(a[i]) / 3
					}
				}
			}
			for _, p := range []*Policy{e, loaded} {
				got := p.ActInto(x)
				for i := range want {
					if math.Abs(float64(got[i])-want[i]) > 1e-5 {
						t.Fatalf("%v: action %d is %g, the members' mean is %g", head, i, got[i], want[i])
					}
					if head != Argmax && (got[i] < e.Act.Low[i] || got[i] > e.Act.High[i]) {
						t.Fatalf("%v: action %d = %g outside %v", head, i, got[i], e.Act)
					}
				}
			}
		}
		if disagree < 20 {
			t.Fatalf("%v: members disagreed on %d of 200 inputs: the test does not tell a mean from one member", head, disagree)
		}
	}
}

// TestEnsembleMeta: totals, seeds and the Extra entries all members share.
func TestEnsembleMeta(t *testing.T) {
	a := member(t, Squash, 4, map[string]string{"variant": "compact", "bdp_span": "4", "selected_step": "20000"})
	b := member(t, Squash, 9, map[string]string{"variant": "compact", "bdp_span": "4", "selected_step": "130000"})
	a.Meta.Steps, b.Meta.Steps = 150000, 150000
	a.Meta.TrainingWallS, b.Meta.TrainingWallS = 200, 210
	e, err := NewEnsemble([]*Policy{a, b}, "cclab marlin ensemble --out e.policy")
	if err != nil {
		t.Fatal(err)
	}
	m := e.Meta
	if m.Steps != 300000 || m.TrainingWallS != 410 || m.Algo != "test" {
		t.Fatalf("meta %+v: want steps 300000, wall 410, algo test", m)
	}
	want := map[string]string{"variant": "compact", "bdp_span": "4", ExtraMembers: "2", ExtraSeeds: "4,9"}
	if len(m.Extra) != len(want) {
		t.Fatalf("extra %v, want %v", m.Extra, want)
	}
	for k, v := range want {
		if m.Extra[k] != v {
			t.Fatalf("extra %v, want %v", m.Extra, want)
		}
	}
	if s := e.Seeds(); len(s) != 2 || s[0] != 4 || s[1] != 9 {
		t.Fatalf("seeds %v", s)
	}
	// The members were cloned: changing the caller's copy does not
	// change the ensemble.
	x := []float32{1, 2, 3, 4}
	before := append([]float32(nil), e.ActInto(x)...)
	a.Net.Params[0] += 10
	if got := e.ActInto(x); got[0] != before[0] || got[1] != before[1] {
		t.Fatalf("ensemble changed with its caller's member: %v then %v", before, got)
	}
	c := e.Clone()
	if got := c.ActInto(x); got[0] != before[0] || got[1] != before[1] {
		t.Fatalf("clone acts %v, ensemble %v", got, before)
	}
}

func TestEnsembleRefusals(t *testing.T) {
	a, b := member(t, Squash, 1, nil), member(t, Squash, 2, nil)
	e, err := NewEnsemble([]*Policy{a, b}, "")
	if err != nil {
		t.Fatal(err)
	}
	other := member(t, Clip, 3, nil)
	wide := testPolicy(t, Squash, false)
	wide.Obs = space.Uniform(-5, 5, 5)
	wide.Net = nn.NewMLP([]int{5, 8, 4}, nn.ReLU, nn.Identity)
	wide.Norm = norm.NewObs(5)
	wide.init()
	for _, c := range []struct {
		name    string
		members []*Policy
		want    string
	}{
		{"one member", []*Policy{a}, "2 to 64 members, got 1"},
		{"nested", []*Policy{a, e}, "member 2 is itself an ensemble"},
		{"other head", []*Policy{a, other}, "member 2 has observations"},
		{"other observations", []*Policy{a, wide}, "member 2 has observations"},
		{"nil", []*Policy{a, nil}, "member 2 is nil"},
		{"nil first", []*Policy{nil, a}, "member 1 is nil"},
	} {
		if _, err := NewEnsemble(c.members, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}

	good, err := e.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// reseal recomputes the checksum so that the parser, not the CRC
	// check, meets the change.
	reseal := func(b []byte) []byte {
		b = b[:len(b)-4]
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
	}
	metaLen := int(binary.LittleEndian.Uint32(good[len(Magic)+4:]))
	countAt := len(Magic) + 8 + metaLen
	withCount := func(n uint32) []byte {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(b[countAt:], n)
		return reseal(b)
	}
	// An ensemble listed as a member of an ensemble.
	one, _ := a.MarshalBinary()
	nested := append([]byte(nil), good[:countAt]...)
	nested = binary.LittleEndian.AppendUint32(nested, 2)
	nested = binary.LittleEndian.AppendUint32(nested, uint32(len(one)))
	nested = append(nested, one...)
	nested = binary.LittleEndian.AppendUint32(nested, uint32(len(good)))
	nested = append(nested, good...)
	nested = binary.LittleEndian.AppendUint32(nested, 0)
	corruptMember := append([]byte(nil), good...)
	corruptMember[countAt+4+len(Magic)+20] ^= 1
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"count 1", withCount(1), "ensemble of 1 members, want 2..64"},
		{"count 3", withCount(3), "file truncated while reading ensemble member 3's length"},
		{"nested", reseal(nested), "ensemble member 2 is itself an ensemble"},
		{"member corrupt", reseal(corruptMember), "ensemble member 1: policy: file is corrupt"},
		{"trailing bytes", reseal(append(append([]byte(nil), good[:len(good)-4]...), 0, 0, 0, 0, 0)), "unexpected bytes after the ensemble's members"},
	} {
		if _, err := Read(bytes.NewReader(c.b)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, err := Read(bytes.NewReader(good)); err != nil {
		t.Fatalf("the unmodified file: %v", err)
	}
}

func TestEnsembleActDoesNotAllocate(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("under -race sync.Pool drops pooled GEMM buffers at random, so they are allocated again")
	}
	for _, head := range []Head{Squash, Argmax} {
		e, err := NewEnsemble([]*Policy{member(t, head, 1, nil), member(t, head, 2, nil)}, "")
		if err != nil {
			t.Fatal(err)
		}
		x := []float32{1, -2, 3, 0}
		if n := testing.AllocsPerRun(100, func() { e.ActInto(x) }); n != 0 {
			t.Fatalf("%v: ActInto allocates %v times", head, n)
		}
	}
}
