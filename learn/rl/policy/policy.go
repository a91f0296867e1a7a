// Package policy stores trained actors as files and runs them. A Policy is
// a deterministic actor: an optional observation normaliser, an MLP and an
// output head that maps network outputs to an action of the environment's
// action space. Controllers call Act once per decision (every RTT), so Act
// does not allocate.
//
// # File format (version 1, little endian)
//
//	magic     "CCLABPOL"                       8 bytes
//	version   uint32                            = 1
//	metaLen   uint32, meta JSON                 Meta: algorithm, command, seed, steps, training_wall_s
//	obs space, action space                     space.AppendBinary encodings
//	head      uint8                             Head
//	layers    uint32 n, n+1 sizes uint32, n activations uint8
//	params    uint64 count, count float32
//	norm      uint8 present, then norm.Obs.AppendBinary if present
//	crc       uint32                            CRC-32C (Castagnoli) of every preceding byte
//
// An ensemble (version 2) holds the complete files of its members:
//
//	magic     "CCLABPOL"                       8 bytes
//	version   uint32                            = 2
//	metaLen   uint32, meta JSON                 the ensemble's Meta
//	count     uint32                            2..MaxMembers
//	members   count x (uint32 length, a version-1 file of that length)
//	crc       uint32                            CRC-32C of every preceding byte
//
// Load checks the magic, version and checksum before parsing, then that
// every shape agrees (input width = observation size, outputs cover the
// action, parameter count = layer sizes, normaliser size = observation
// size; an ensemble's members share their spaces and head), and reports
// the first problem with what was found and what was expected. Check
// compares a loaded policy's spaces with an environment's.
package policy

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/cclab/cclab/internal/atomicfile"
	"github.com/cclab/cclab/internal/boundedio"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/norm"
	"github.com/cclab/cclab/learn/rl/space"
)

// Magic starts every policy file.
const Magic = "CCLABPOL"

// Version is the format version of a single policy's file.
const Version = 1

// EnsembleVersion is the format version of an ensemble's file. Single
// policies are still written as Version, so files read by older builds
// stay readable by them.
const EnsembleVersion = 2

// MaxMembers bounds an ensemble's size.
const MaxMembers = 64

// Head says how network outputs become an action.
type Head uint8

// Heads. The numeric values are part of the file format.
const (
	// Squash: a = tanh(y[:d]) rescaled from [−1, 1] to the Box bounds
	// (SAC's deterministic action: tanh of the Gaussian mean).
	Squash Head = 1
	// Rescale: y[:d] is already in [−1, 1] (the network ends in tanh, as
	// DDPG's actor) and is rescaled to the Box bounds.
	Rescale Head = 2
	// Clip: a = y[:d] clipped to the Box bounds (PPO/A2C Gaussian mean).
	Clip Head = 3
	// Argmax: a = argmax y over a Discrete space's n outputs (DQN
	// Q-values, PPO/A2C logits).
	Argmax Head = 4
)

// String names the head.
func (h Head) String() string {
	switch h {
	case Squash:
		return "squash"
	case Rescale:
		return "rescale"
	case Clip:
		return "clip"
	case Argmax:
		return "argmax"
	}
	return fmt.Sprintf("Head(%d)", h)
}

// Meta records how a policy was trained. MARLIN's evaluation prints
// TrainingWallS.
type Meta struct {
	Algo          string  `json:"algo"`
	Env           string  `json:"env,omitempty"`
	Command       string  `json:"command,omitempty"`
	Seed          uint64  `json:"seed"`
	Steps         int64   `json:"steps"`
	TrainingWallS float64 `json:"training_wall_s"`
	// Extra holds free-form notes (hyper-parameters, versions).
	Extra map[string]string `json:"extra,omitempty"`
}

// CheckEnv refuses a policy trained in another environment than those
// whose name starts with prefix (what names them for the message): given
// to another paper's evaluation, it failed on a symptom (an unknown
// action, an observation size) instead. A policy without an Env (written
// before it was recorded) passes.
func (m Meta) CheckEnv(prefix, what string) error {
	if m.Env == "" || strings.HasPrefix(m.Env, prefix) {
		return nil
	}
	return fmt.Errorf("the policy was trained in environment %q, not %s's (%s...)", m.Env, what, prefix)
}

// Policy is a deterministic actor. Act is not safe for concurrent use; use
// Clone for one Policy per goroutine.
type Policy struct {
	Obs, Act space.Space
	Head     Head
	// Net is the actor's network; nil for an ensemble.
	Net *nn.MLP
	// Norm normalises observations before the network; nil if none.
	Norm *norm.Obs
	Meta Meta
	// Members are an ensemble's policies (see NewEnsemble); nil for a
	// single policy.
	Members []*Policy

	ws     *nn.Workspace
	in     []float32
	action []float32
	// sum accumulates an Argmax ensemble's member outputs.
	sum []float32
}

// New assembles a policy and checks that its parts agree.
func New(obs, act space.Space, head Head, net *nn.MLP, nrm *norm.Obs, meta Meta) (*Policy, error) {
	p := &Policy{Obs: obs, Act: act, Head: head, Net: net, Norm: nrm, Meta: meta}
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.init()
	return p, nil
}

func (p *Policy) init() {
	p.action = make([]float32, p.Act.Dim())
	if p.Members != nil {
		if p.Head == Argmax {
			p.sum = make([]float32, p.Act.N)
		}
		return
	}
	p.ws = p.Net.NewWorkspace()
	p.in = make([]float32, p.Obs.Dim())
}

func (p *Policy) validate() error {
	if p.Members != nil {
		return p.validateEnsemble()
	}
	if err := p.Obs.Validate(); err != nil {
		return fmt.Errorf("policy: observation space: %w", err)
	}
	if err := p.Act.Validate(); err != nil {
		return fmt.Errorf("policy: action space: %w", err)
	}
	if p.Obs.Kind != space.KindBox {
		return fmt.Errorf("policy: observation space must be a Box, got %v", p.Obs)
	}
	if p.Net == nil {
		return errors.New("policy: no network")
	}
	for i, w := range p.Net.Params {
		if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
			return fmt.Errorf("policy: parameter %d of %d is %v: the network is broken (training diverged?)", i, len(p.Net.Params), w)
		}
	}
	if p.Net.In() != p.Obs.Dim() {
		return fmt.Errorf("policy: network takes %d inputs, observation space %v has %d", p.Net.In(), p.Obs, p.Obs.Dim())
	}
	switch p.Head {
	case Squash, Rescale, Clip:
		if p.Act.Kind != space.KindBox {
			return fmt.Errorf("policy: head %v needs a Box action space, got %v", p.Head, p.Act)
		}
		if p.Head != Clip && !p.Act.Bounded() {
			return fmt.Errorf("policy: head %v needs finite action bounds, got %v", p.Head, p.Act)
		}
		if p.Net.Out() < p.Act.Dim() {
			return fmt.Errorf("policy: network has %d outputs, action space %v needs %d", p.Net.Out(), p.Act, p.Act.Dim())
		}
	case Argmax:
		if p.Act.Kind != space.KindDiscrete {
			return fmt.Errorf("policy: head argmax needs a Discrete action space, got %v", p.Act)
		}
		if p.Net.Out() != p.Act.N {
			return fmt.Errorf("policy: network has %d outputs, action space %v needs %d", p.Net.Out(), p.Act, p.Act.N)
		}
	default:
		return fmt.Errorf("policy: unknown head %d, want 1..4", p.Head)
	}
	if p.Norm != nil && p.Norm.Dim() != p.Obs.Dim() {
		return fmt.Errorf("policy: normaliser has dimension %d, observation space has %d", p.Norm.Dim(), p.Obs.Dim())
	}
	return nil
}

// Check reports whether the policy fits an environment with the given
// spaces, naming the mismatch if not.
func (p *Policy) Check(obs, act space.Space) error {
	if !p.Obs.Equal(obs) {
		return fmt.Errorf("policy: trained on observations %v (dim %d), environment has %v (dim %d)", p.Obs, p.Obs.Dim(), obs, obs.Dim())
	}
	if !p.Act.Equal(act) {
		return fmt.Errorf("policy: trained for actions %v, environment has %v", p.Act, act)
	}
	return nil
}

// Clone returns an independent copy (sharing nothing mutable).
func (p *Policy) Clone() *Policy {
	q := *p
	if p.Members != nil {
		q.Members = make([]*Policy, len(p.Members))
		for i, m := range p.Members {
			q.Members[i] = m.Clone()
		}
		q.init()
		return &q
	}
	q.Net = p.Net.Clone()
	if p.Norm != nil {
		q.Norm = p.Norm.Clone()
	}
	q.init()
	return &q
}

// ActInto writes the deterministic action for obs into the returned slice,
// which belongs to p and is valid until the next call.
func (p *Policy) ActInto(obs []float32) []float32 {
	if p.Members != nil {
		return p.actEnsemble(obs)
	}
	return p.head(p.outputs(obs))
}

// outputs runs the normaliser and the network.
func (p *Policy) outputs(obs []float32) []float32 {
	if len(obs) != len(p.in) {
		panic(fmt.Sprintf("policy: observation has %d values, want %d", len(obs), len(p.in)))
	}
	x := obs
	if p.Norm != nil {
		p.Norm.Normalize(obs, p.in)
		x = p.in
	}
	return p.Net.Forward(p.ws, x, 1)
}

// head maps network outputs y to an action in p.action.
func (p *Policy) head(y []float32) []float32 {
	d := p.Act.Dim()
	switch p.Head {
	case Squash, Rescale:
		for i := 0; i < d; i++ {
			a := float64(y[i])
			if p.Head == Squash {
				a = math.Tanh(a)
			}
			lo, hi := float64(p.Act.Low[i]), float64(p.Act.High[i])
			p.action[i] = float32(lo + (a+1)*0.5*(hi-lo))
		}
	case Clip:
		for i := 0; i < d; i++ {
			p.action[i] = min(max(y[i], p.Act.Low[i]), p.Act.High[i])
		}
	case Argmax:
		p.action[0] = float32(nn.Argmax(y))
	}
	return p.action
}

// castagnoli is the CRC-32C table. hash/crc32 makes it on the first call
// and returns the same table after; called at package initialisation, as
// it was, it cost every cclab command over a million instructions (an
// eighth of its start-up) that only checkpoints and policy files need.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// MarshalBinary encodes the policy in the file format.
func (p *Policy) MarshalBinary() ([]byte, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	m := p.Meta
	m.Command = CleanCommand(m.Command)
	meta, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("policy: metadata: %w", err)
	}
	b := []byte(Magic)
	if p.Members != nil {
		b = binary.LittleEndian.AppendUint32(b, EnsembleVersion)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(meta)))
		b = append(b, meta...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p.Members)))
		for _, q := range p.Members {
			mb, err := q.MarshalBinary()
			if err != nil {
				return nil, err
			}
			b = binary.LittleEndian.AppendUint32(b, uint32(len(mb)))
			b = append(b, mb...)
		}
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli())), nil
	}
	b = binary.LittleEndian.AppendUint32(b, Version)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(meta)))
	b = append(b, meta...)
	if b, err = p.Obs.AppendBinary(b); err != nil {
		return nil, err
	}
	if b, err = p.Act.AppendBinary(b); err != nil {
		return nil, err
	}
	b = append(b, byte(p.Head))
	b = binary.LittleEndian.AppendUint32(b, uint32(p.Net.Layers()))
	for _, s := range p.Net.Sizes {
		b = binary.LittleEndian.AppendUint32(b, uint32(s))
	}
	for _, a := range p.Net.Acts {
		b = append(b, byte(a))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(p.Net.Params)))
	for _, v := range p.Net.Params {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	if p.Norm != nil {
		b = append(b, 1)
		b, _ = p.Norm.AppendBinary(b)
	} else {
		b = append(b, 0)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli())), nil
}

// maxFile bounds what Load reads: 1 GiB, far above MARLIN's 1.4 MB actor.
const maxFile = 1 << 30

// Limits on decoded shapes so a corrupt file cannot request huge
// allocations before its checksum is checked (it is checked first, but a
// well-formed hostile file could still ask).
const (
	maxLayers = 64
	maxWidth  = 1 << 20
)

// UnmarshalBinary decodes a policy file.
func (p *Policy) UnmarshalBinary(b []byte) error {
	q, err := decode(b)
	if err != nil {
		return err
	}
	*p = *q
	return nil
}

type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) need(n int, what string) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || len(d.b)-d.off < n {
		d.err = fmt.Errorf("policy: file truncated while reading %s at byte %d", what, d.off)
		return false
	}
	return true
}

func (d *decoder) u32(what string) uint32 {
	if !d.need(4, what) {
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}

func decode(b []byte) (*Policy, error) {
	if len(b) < len(Magic)+8+4 {
		return nil, fmt.Errorf("policy: file too short (%d bytes) to be a cclab policy", len(b))
	}
	if string(b[:len(Magic)]) != Magic {
		return nil, errors.New("policy: not a cclab policy file (bad magic)")
	}
	v := binary.LittleEndian.Uint32(b[len(Magic):])
	if v != Version && v != EnsembleVersion {
		return nil, fmt.Errorf("policy: file has format version %d, this build reads versions %d (a policy) and %d (an ensemble)", v, Version, EnsembleVersion)
	}
	body := b[:len(b)-4]
	if got, want := crc32.Checksum(body, castagnoli()), binary.LittleEndian.Uint32(b[len(b)-4:]); got != want {
		return nil, fmt.Errorf("policy: file is corrupt or truncated (CRC-32C %08x, stored %08x)", got, want)
	}
	d := &decoder{b: body, off: len(Magic) + 4}
	p := &Policy{}
	ml := int(d.u32("metadata length"))
	if d.need(ml, "metadata") {
		if err := json.Unmarshal(d.b[d.off:d.off+ml], &p.Meta); err == nil {
			p.Meta.Command = CleanCommand(p.Meta.Command)
		} else {
			return nil, fmt.Errorf("policy: metadata: %w", err)
		}
		d.off += ml
	}
	if d.err != nil {
		return nil, d.err
	}
	if v == EnsembleVersion {
		return decodeEnsemble(d, p)
	}
	var err error
	var n int
	if p.Obs, n, err = space.Decode(d.b[d.off:]); err != nil {
		return nil, fmt.Errorf("policy: observation space: %w", err)
	}
	d.off += n
	if p.Act, n, err = space.Decode(d.b[d.off:]); err != nil {
		return nil, fmt.Errorf("policy: action space: %w", err)
	}
	d.off += n
	if !d.need(1, "head") {
		return nil, d.err
	}
	p.Head = Head(d.b[d.off])
	d.off++
	layers := int(d.u32("layer count"))
	if d.err == nil && (layers < 1 || layers > maxLayers) {
		return nil, fmt.Errorf("policy: %d layers, want 1..%d", layers, maxLayers)
	}
	sizes := make([]int, layers+1)
	for i := range sizes {
		sizes[i] = int(d.u32("layer sizes"))
		if d.err == nil && (sizes[i] < 1 || sizes[i] > maxWidth) {
			return nil, fmt.Errorf("policy: layer size %d is %d, want 1..%d", i, sizes[i], maxWidth)
		}
	}
	acts := make([]nn.Activation, layers)
	if d.need(layers, "activations") {
		for i := range acts {
			acts[i] = nn.Activation(d.b[d.off+i])
			if !acts[i].Valid() {
				return nil, fmt.Errorf("policy: layer %d has unknown activation %d", i, acts[i])
			}
		}
		d.off += layers
	}
	if d.err != nil {
		return nil, d.err
	}
	if !d.need(8, "parameter count") {
		return nil, d.err
	}
	count := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	if want := uint64(nn.NumParams(sizes)); count != want {
		return nil, fmt.Errorf("policy: file has %d parameters, layer sizes %v need %d", count, sizes, want)
	}
	if !d.need(int(4*count), "parameters") {
		return nil, d.err
	}
	p.Net = nn.NewMLPActs(sizes, acts)
	for i := range p.Net.Params {
		p.Net.Params[i] = math.Float32frombits(binary.LittleEndian.Uint32(d.b[d.off:]))
		d.off += 4
	}
	if !d.need(1, "normaliser flag") {
		return nil, d.err
	}
	flag := d.b[d.off]
	d.off++
	switch flag {
	case 0:
	case 1:
		o, n, err := norm.DecodeObs(d.b[d.off:])
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		p.Norm = o
		d.off += n
	default:
		return nil, fmt.Errorf("policy: normaliser flag %d, want 0 or 1", flag)
	}
	if d.off != len(d.b) {
		return nil, fmt.Errorf("policy: %d unexpected bytes after the normaliser", len(d.b)-d.off)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.init()
	return p, nil
}

// Read decodes a policy from r.
func Read(r io.Reader) (*Policy, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("policy: file larger than %d bytes", maxFile)
	}
	return decode(b)
}

// Load reads the policy file at path; errors name the file.
func Load(path string) (*Policy, error) {
	f, err := boundedio.Open(path, "policy file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := Read(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Save writes the policy to path atomically (temporary file, fsync,
// rename, fsync of the directory). Temporary files a killed earlier Save
// left beside path are removed first.
func (p *Policy) Save(path string) error {
	b, err := p.MarshalBinary()
	if err != nil {
		return err
	}
	atomicfile.RemoveTemps(path)
	if err := atomicfile.WriteBytes(path, b); err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	return nil
}

// CleanCommand makes a recorded training command fit to print: an
// absolute path (a developer's temporary folder, a home directory) is cut
// to its file name, as in "--out /tmp/x123/marlin.policy" ->
// "--out marlin.policy"; relative paths, flags and values stay. The
// output paths of a training command only name files, so the command
// still reproduces the policy.
func CleanCommand(cmd string) string {
	fields := strings.Split(cmd, " ")
	for i, f := range fields {
		flag, val, isFlag := strings.Cut(f, "=")
		if !isFlag || !strings.HasPrefix(flag, "-") {
			flag, val = "", f
		}
		if filepath.IsAbs(val) {
			val = filepath.Base(val)
			if flag != "" {
				val = flag + "=" + val
			}
			fields[i] = val
		}
	}
	return strings.Join(fields, " ")
}
