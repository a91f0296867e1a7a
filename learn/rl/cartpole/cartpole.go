// Package cartpole is a port of Gymnasium's CartPole-v1
// (gymnasium/envs/classic_control/cartpole.py, Barto, Sutton & Anderson
// 1983): push a cart left or right to keep a pole upright. It is cclab's
// discrete-action reference task for DQN, A2C and PPO.
//
// Observation (x, ẋ, θ, θ̇); actions 0 (push left) and 1 (push right) with
// a 10 N force; Euler integration with τ = 0.02 s; reward 1 per step
// including the terminating one; termination when |x| > 2.4 m or
// |θ| > 12°; start state uniform in ±0.05; CartPole-v1 is registered with
// max_episode_steps = 500, which New applies.
package cartpole

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"

	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/space"
)

// Constants of Gymnasium's CartPoleEnv.__init__.
const (
	Gravity        = 9.8
	MassCart       = 1.0
	MassPole       = 0.1
	TotalMass      = MassCart + MassPole
	Length         = 0.5 // half the pole's length, m
	PoleMassLength = MassPole * Length
	ForceMag       = 10.0
	Tau            = 0.02 // s
	XThreshold     = 2.4
	// ThetaThreshold is 12 degrees in radians.
	ThetaThreshold  = 12 * 2 * math.Pi / 360
	MaxEpisodeSteps = 500
)

// Env is the untimed cart-pole.
type Env struct {
	X, XDot, Theta, ThetaDot float64
	obs                      [4]float32
}

// New returns CartPole-v1: the cart-pole under a 500-step TimeLimit.
func New() env.Env { return env.NewTimeLimit(&Env{}, MaxEpisodeSteps) }

var (
	inf      = float32(math.Inf(1))
	obsSpace = space.NewBox(
		[]float32{-XThreshold * 2, -inf, -ThetaThreshold * 2, -inf},
		[]float32{XThreshold * 2, inf, ThetaThreshold * 2, inf})
	actSpace = space.NewDiscrete(2)
)

// ObservationSpace implements env.Env.
func (e *Env) ObservationSpace() space.Space { return obsSpace }

// ActionSpace is Discrete(2).
func (e *Env) ActionSpace() space.Space { return actSpace }

// Reset draws each state variable uniformly from [−0.05, 0.05].
func (e *Env) Reset(seed uint64) ([]float32, env.Info) {
	r := rand.New(rand.NewPCG(seed, 0x63617274706f6c65)) // stream "cartpole"
	u := func() float64 { return -0.05 + 0.1*r.Float64() }
	e.X, e.XDot, e.Theta, e.ThetaDot = u(), u(), u(), u()
	return e.observe(), nil
}

// Step applies action[0] (0 or 1; anything else is treated as 1 only if
// ≥ 0.5, matching a rounded index).
func (e *Env) Step(action []float32) ([]float32, float64, bool, bool, env.Info) {
	force := -ForceMag
	if action[0] >= 0.5 {
		force = ForceMag
	}
	cos, sin := math.Cos(e.Theta), math.Sin(e.Theta)
	// Florian 2007 "Correct equations for the dynamics of the cart-pole
	// system", as implemented by Gymnasium.
	temp := (force + PoleMassLength*e.ThetaDot*e.ThetaDot*sin) / TotalMass
	thetaAcc := (Gravity*sin - cos*temp) / (Length * (4.0/3.0 - MassPole*cos*cos/TotalMass))
	xAcc := temp - PoleMassLength*thetaAcc*cos/TotalMass
	// Gymnasium's default "euler" integrator: positions use old speeds.
	e.X += Tau * e.XDot
	e.XDot += Tau * xAcc
	e.Theta += Tau * e.ThetaDot
	e.ThetaDot += Tau * thetaAcc
	term := e.X < -XThreshold || e.X > XThreshold || e.Theta < -ThetaThreshold || e.Theta > ThetaThreshold
	return e.observe(), 1, term, false, nil
}

func (e *Env) observe() []float32 {
	e.obs = [4]float32{float32(e.X), float32(e.XDot), float32(e.Theta), float32(e.ThetaDot)}
	return e.obs[:]
}

// AppendState implements env.Stateful.
func (e *Env) AppendState(b []byte) ([]byte, error) {
	for _, v := range []float64{e.X, e.XDot, e.Theta, e.ThetaDot} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b, nil
}

// RestoreState implements env.Stateful.
func (e *Env) RestoreState(b []byte) error {
	if len(b) != 32 {
		return errors.New("cartpole: saved state must be 32 bytes")
	}
	f := func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])) }
	e.X, e.XDot, e.Theta, e.ThetaDot = f(0), f(1), f(2), f(3)
	e.observe()
	return nil
}
