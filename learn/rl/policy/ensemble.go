package policy

import (
	"encoding/binary"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/cclab/cclab/learn/rl/nn"
)

// Keys NewEnsemble adds to an ensemble's Meta.Extra.
const (
	// ExtraMembers is the number of members.
	ExtraMembers = "ensemble_members"
	// ExtraSeeds lists the members' training seeds, comma-separated, in
	// member order.
	ExtraSeeds = "ensemble_seeds"
)

// NewEnsemble makes one policy of independently trained ones that act
// together: with a Box action space the ensemble's action is the mean of
// the members' actions (each after its own head, so within the bounds);
// with Argmax, the argmax of the sum of the members' outputs (Q-values or
// logits). Averaging is what makes the ensemble less sensitive to any one
// training seed's quirks than a single seed is.
//
// Members must share their observation and action spaces and head, and
// may not be ensembles themselves; they are cloned. The ensemble's Meta
// sums the members' Steps and TrainingWallS (what it cost to train),
// keeps the Algo and Env they share, records command, and keeps the Extra
// entries on which all members agree, adding ExtraMembers and
// ExtraSeeds. Callers whose environment is configured from Extra should
// check that the members agree on those entries: an entry they disagree
// on is dropped, not chosen.
func NewEnsemble(members []*Policy, command string) (*Policy, error) {
	if len(members) < 2 || len(members) > MaxMembers {
		return nil, fmt.Errorf("policy: an ensemble needs 2 to %d members, got %d", MaxMembers, len(members))
	}
	// Refuse unusable members before reading any of them.
	for i, q := range members {
		if q == nil {
			return nil, fmt.Errorf("policy: ensemble member %d is nil", i+1)
		}
		if q.Members != nil {
			return nil, fmt.Errorf("policy: ensemble member %d is itself an ensemble; list its members instead", i+1)
		}
	}
	m := Meta{Algo: members[0].Meta.Algo, Env: members[0].Meta.Env, Command: command, Extra: maps.Clone(members[0].Meta.Extra)}
	seeds := make([]string, len(members))
	for i, q := range members {
		if q.Meta.Algo != m.Algo {
			m.Algo = "mixed"
		}
		if q.Meta.Env != m.Env {
			m.Env = ""
		}
		m.Steps += q.Meta.Steps
		m.TrainingWallS += q.Meta.TrainingWallS
		seeds[i] = strconv.FormatUint(q.Meta.Seed, 10)
		maps.DeleteFunc(m.Extra, func(k, v string) bool {
			w, ok := q.Meta.Extra[k]
			return !ok || w != v
		})
	}
	if m.Extra == nil {
		m.Extra = map[string]string{}
	}
	m.Extra[ExtraMembers] = strconv.Itoa(len(members))
	m.Extra[ExtraSeeds] = strings.Join(seeds, ",")
	p := &Policy{Obs: members[0].Obs, Act: members[0].Act, Head: members[0].Head, Meta: m, Members: make([]*Policy, len(members))}
	for i, q := range members {
		p.Members[i] = q.Clone()
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.init()
	return p, nil
}

func (p *Policy) validateEnsemble() error {
	if n := len(p.Members); n < 2 || n > MaxMembers {
		return fmt.Errorf("policy: an ensemble needs 2 to %d members, got %d", MaxMembers, n)
	}
	if p.Net != nil || p.Norm != nil {
		return fmt.Errorf("policy: an ensemble has no network or normaliser of its own")
	}
	for i, q := range p.Members {
		if q.Members != nil {
			return fmt.Errorf("policy: ensemble member %d is itself an ensemble", i+1)
		}
		if err := q.validate(); err != nil {
			return fmt.Errorf("policy: ensemble member %d: %w", i+1, err)
		}
		if !q.Obs.Equal(p.Obs) || !q.Act.Equal(p.Act) || q.Head != p.Head {
			return fmt.Errorf("policy: ensemble member %d has observations %v, actions %v and head %v; the ensemble has %v, %v and %v",
				i+1, q.Obs, q.Act, q.Head, p.Obs, p.Act, p.Head)
		}
	}
	return nil
}

// actEnsemble combines the members' actions as NewEnsemble says.
func (p *Policy) actEnsemble(obs []float32) []float32 {
	if p.Head == Argmax {
		clear(p.sum)
		for _, q := range p.Members {
			for i, y := range q.outputs(obs)[:len(p.sum)] {
				p.sum[i] += y
			}
		}
		p.action[0] = float32(nn.Argmax(p.sum))
		return p.action
	}
	clear(p.action)
	for _, q := range p.Members {
		for i, a := range q.ActInto(obs) {
			p.action[i] += a
		}
	}
	n := float32(len(p.Members))
	for i := range p.action {
		// The mean of values within the bounds is within them, up to
		// rounding, which the clamp removes.
		p.action[i] = min(max(p.action[i]/n, p.Act.Low[i]), p.Act.High[i])
	}
	return p.action
}

// decodeEnsemble reads an ensemble's members after its metadata.
func decodeEnsemble(d *decoder, p *Policy) (*Policy, error) {
	n := int(d.u32("member count"))
	if d.err != nil {
		return nil, d.err
	}
	if n < 2 || n > MaxMembers {
		return nil, fmt.Errorf("policy: ensemble of %d members, want 2..%d", n, MaxMembers)
	}
	for i := 0; i < n; i++ {
		what := fmt.Sprintf("ensemble member %d", i+1)
		l := int(d.u32(what + "'s length"))
		if !d.need(l, what) {
			return nil, d.err
		}
		mb := d.b[d.off : d.off+l]
		if len(mb) >= len(Magic)+4 && binary.LittleEndian.Uint32(mb[len(Magic):]) == EnsembleVersion {
			return nil, fmt.Errorf("policy: %s is itself an ensemble", what)
		}
		q, err := decode(mb)
		if err != nil {
			return nil, fmt.Errorf("policy: %s: %w", what, err)
		}
		d.off += l
		p.Members = append(p.Members, q)
	}
	if d.off != len(d.b) {
		return nil, fmt.Errorf("policy: %d unexpected bytes after the ensemble's members", len(d.b)-d.off)
	}
	p.Obs, p.Act, p.Head = p.Members[0].Obs, p.Members[0].Act, p.Members[0].Head
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.init()
	return p, nil
}

// Seeds returns the training seeds of an ensemble's members in order, or
// the policy's own seed.
func (p *Policy) Seeds() []uint64 {
	if p.Members == nil {
		return []uint64{p.Meta.Seed}
	}
	s := make([]uint64, len(p.Members))
	for i, q := range p.Members {
		s[i] = q.Meta.Seed
	}
	return s
}
