// Package pendulum is a port of Gymnasium's Pendulum-v1
// (gymnasium/envs/classic_control/pendulum.py), cclab's reference task for
// continuous-control learners: swing a pendulum up and hold it upright.
//
// Dynamics (semi-implicit Euler, dt = 0.05 s), with g = 10 m/s², m = 1 kg,
// l = 1 m, torque u clipped to ±2 N·m and angular speed to ±8 rad/s:
//
//	θ̇' = clip(θ̇ + (3g/(2l)·sin θ + 3/(m·l²)·u)·dt, −8, 8)
//	θ'  = θ + θ̇'·dt
//
// Reward −(norm(θ)² + 0.1·θ̇² + 0.001·u²) with norm(θ) ∈ [−π, π) and θ = 0
// upright, observation (cos θ, sin θ, θ̇), start state uniform in
// θ ∈ [−π, π], θ̇ ∈ [−1, 1]. Pendulum-v1 is registered with
// max_episode_steps = 200; New applies that TimeLimit.
package pendulum

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"

	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/space"
)

// Constants of Gymnasium's PendulumEnv.__init__ (g is its default).
const (
	MaxSpeed  = 8.0  // rad/s
	MaxTorque = 2.0  // N·m
	Dt        = 0.05 // s
	G         = 10.0 // m/s²
	M         = 1.0  // kg
	L         = 1.0  // m
	// MaxEpisodeSteps is Pendulum-v1's registered time limit.
	MaxEpisodeSteps = 200
)

// Env is the untimed pendulum (no time limit; wrap it, or use New).
type Env struct {
	Theta, ThetaDot float64 // rad, rad/s
	obs             [3]float32
}

// New returns Pendulum-v1: the pendulum under a 200-step TimeLimit.
func New() env.Env { return env.NewTimeLimit(&Env{}, MaxEpisodeSteps) }

var (
	obsSpace = space.NewBox([]float32{-1, -1, -MaxSpeed}, []float32{1, 1, MaxSpeed})
	actSpace = space.Uniform(-MaxTorque, MaxTorque, 1)
)

// ObservationSpace is Box([-1, -1, -8], [1, 1, 8]).
func (e *Env) ObservationSpace() space.Space { return obsSpace }

// ActionSpace is Box(-2, 2, (1,)).
func (e *Env) ActionSpace() space.Space { return actSpace }

// Reset draws θ uniform in [−π, π] and θ̇ uniform in [−1, 1] from a
// generator seeded with seed.
func (e *Env) Reset(seed uint64) ([]float32, env.Info) {
	r := rand.New(rand.NewPCG(seed, 0x70656e64756c756d)) // stream "pendulum"
	e.Theta = math.Pi * (2*r.Float64() - 1)
	e.ThetaDot = 2*r.Float64() - 1
	return e.observe(), nil
}

// Step applies torque action[0].
func (e *Env) Step(action []float32) ([]float32, float64, bool, bool, env.Info) {
	// Gymnasium clips the float32 action and computes in float64.
	u := min(max(float64(action[0]), -MaxTorque), MaxTorque)
	th, thdot := e.Theta, e.ThetaDot
	an := AngleNormalize(th)
	cost := an*an + 0.1*thdot*thdot + 0.001*u*u
	newThdot := thdot + (3*G/(2*L)*math.Sin(th)+3.0/(M*L*L)*u)*Dt
	newThdot = min(max(newThdot, -MaxSpeed), MaxSpeed)
	e.Theta = th + newThdot*Dt
	e.ThetaDot = newThdot
	return e.observe(), -cost, false, false, nil
}

func (e *Env) observe() []float32 {
	e.obs = [3]float32{float32(math.Cos(e.Theta)), float32(math.Sin(e.Theta)), float32(e.ThetaDot)}
	return e.obs[:]
}

// AngleNormalize maps x to [−π, π) as Gymnasium's angle_normalize,
// ((x + π) mod 2π) − π with Python's floored modulo.
func AngleNormalize(x float64) float64 {
	m := math.Mod(x+math.Pi, 2*math.Pi)
	if m < 0 {
		m += 2 * math.Pi
	}
	return m - math.Pi
}

// AppendState implements env.Stateful.
func (e *Env) AppendState(b []byte) ([]byte, error) {
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Theta))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(e.ThetaDot)), nil
}

// RestoreState implements env.Stateful.
func (e *Env) RestoreState(b []byte) error {
	if len(b) != 16 {
		return errors.New("pendulum: saved state must be 16 bytes")
	}
	e.Theta = math.Float64frombits(binary.LittleEndian.Uint64(b))
	e.ThetaDot = math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
	e.observe()
	return nil
}
