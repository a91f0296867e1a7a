// Command gymtraj steps one cclab environment in-process, in Go, and prints
// its trajectory as JSON, so that the Python tests (python/tests) can check
// that the service replays exactly what Go runs: same seed, same
// trajectory. The actions are a fixed pattern both sides compute exactly:
// at step k, environment index i acts ((3k+i) mod 9 - 4) / 5 on every
// action dimension. An episode that ends is reset on the next step, as
// Gymnasium's next-step autoreset does: that step records the new
// episode's first observation with reward 0.
//
//	go run ./rpc/gym/gymtraj -env cclab/Marlin-v0 -seed 7 -index 0 -steps 30 [-option k=v ...]
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/cclab/cclab/rpc/gym"
)

type options map[string]string

func (o options) String() string { return fmt.Sprint(map[string]string(o)) }

func (o options) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok {
		return fmt.Errorf("want name=value, got %q", kv)
	}
	o[k] = v
	return nil
}

// Step is one recorded step.
type Step struct {
	ObsSHA256  string  `json:"obs_sha256"`
	Reward     float64 `json:"reward"`
	Terminated bool    `json:"terminated"`
	Truncated  bool    `json:"truncated"`
}

func main() {
	id := flag.String("env", "cclab/Marlin-v0", "environment id")
	seed := flag.Int64("seed", 0, "reset seed")
	index := flag.Int("index", 0, "environment index in the action pattern")
	steps := flag.Int("steps", 20, "steps after the reset")
	opts := options{}
	flag.Var(opts, "option", "Make option name=value (repeatable)")
	flag.Parse()
	if err := run(*id, opts, *seed, *index, *steps); err != nil {
		fmt.Fprintln(os.Stderr, "gymtraj:", err)
		os.Exit(1)
	}
}

func digest(obs []float32) string {
	b := make([]byte, 4*len(obs))
	for i, x := range obs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func run(id string, opts map[string]string, seed int64, index, steps int) error {
	envs, err := gym.MakeEnvs(id, opts, 1)
	if err != nil {
		return err
	}
	e := envs[0]
	var seq gym.SeedSequence
	obs, _ := e.Reset(seq.Next(seed))
	out := []Step{{ObsSHA256: digest(obs)}}
	act := make([]float32, e.ActionSpace().Dim())
	ended := false
	for k := range steps {
		if ended {
			obs, _ = e.Reset(seq.Next(-1))
			out = append(out, Step{ObsSHA256: digest(obs)})
			ended = false
			continue
		}
		for j := range act {
			act[j] = float32(float64((3*k+index)%9-4) / 5)
		}
		o, r, term, trunc, _ := e.Step(act)
		ended = term || trunc
		out = append(out, Step{ObsSHA256: digest(o), Reward: r, Terminated: term, Truncated: trunc})
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
