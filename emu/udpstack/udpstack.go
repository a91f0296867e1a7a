// Package udpstack runs a scenario flow under `cclab emu` with cclab's
// own transport (transport/udp: the simulator's sender and receiver on
// real UDP sockets) instead of kernel TCP: `stack: cclab` in the scenario.
// Any registered controller works, with the flow's parameters, the
// Mockets protocol (timer-driven SACKs) and TCP/NC coding; an agent
// (`agent:`) drives the flow through a hook the command installs, because
// agents live above emu.
package udpstack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/emu/link"
	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/transport/tcp"
	"github.com/cclab/cclab/transport/udp"
)

// AgentHook configures o for the agent of spec's flow (the scenario's
// `agent:`, with its `target:` or `mode:`) and returns a function to call
// with the result when the flow ends.
type AgentHook func(spec emu.FlowSpec, o *live.SendOptions) (finish func(*live.Result), err error)

// Register makes `stack: cclab` available to emu, with agents resolved
// by hook (nil: flows with an agent are refused).
func Register(hook AgentHook) {
	emu.RegisterStack("cclab", func(spec emu.FlowSpec) (emu.Endpoints, error) { return New(spec, hook) })
}

// Endpoints are one flow's cclab sender and receiver.
type Endpoints struct {
	spec emu.FlowSpec
	opts live.SendOptions
	fin  func(*live.Result)

	l      *udp.Listener
	rdone  chan struct{}
	rres   udp.ReceiverResult
	rerr   error
	cancel context.CancelFunc
	ctx    context.Context

	mu     sync.Mutex
	sdone  chan struct{}
	sres   *live.Result
	serr   error
	sender *udp.Sender
}

// New returns the endpoints of spec's flow.
func New(spec emu.FlowSpec, hook AgentHook) (*Endpoints, error) {
	f := spec.Flow
	if f == nil {
		return nil, errors.New("udpstack: no scenario flow")
	}
	o := live.SendOptions{CC: f.CC.Name, Params: f.CC.Params, Bytes: f.Bytes.V, Seed: 1}
	if f.Transport != nil {
		// The flow's own transport settings (the scenario-wide section
		// is not carried to stacks).
		applyTransport(&o.TCP, f.Transport)
	}
	if spec.ECN {
		// The forwarder's queue marks the ECT(0) datagrams this makes,
		// as it marks kernel TCP's packets.
		o.TCP.ECN = tcp.ECNRFC3168
	}
	if f.Protocol == "mockets" && o.TCP.AckInterval == 0 {
		o.TCP.AckInterval = network.DefaultSACKTimeout
	}
	if c := f.Coding; c != nil {
		w := c.Window
		if w == 0 {
			w = 1000
		}
		o.Coding = &udp.Coding{Window: w, Redundancy: c.Redundancy}
	}
	if o.Bytes == 0 {
		// A bulk flow runs until the emulation stops it.
		o.Duration = 24 * time.Hour
	}
	e := &Endpoints{spec: spec, fin: func(*live.Result) {}, rdone: make(chan struct{}), sdone: make(chan struct{})}
	if f.Agent != "" {
		if hook == nil {
			return nil, fmt.Errorf("agent %q: this program cannot run agents", f.Agent)
		}
		fin, err := hook(spec, &o)
		if err != nil {
			return nil, err
		}
		e.fin = fin
	} else if _, err := live.NewController(o.CC, o.Params, udp.DefaultMSS, 1); err != nil {
		return nil, err
	}
	e.opts = o
	e.ctx, e.cancel = context.WithCancel(context.Background())
	return e, nil
}

// applyTransport sets the sender's configuration from a flow's transport
// section: the acknowledgement and timer settings, the loss-recovery
// choices the sender makes alone (rack, tlp, frto, rto,
// lost_retransmissions, srtt_sample, prr, rack_timer, recovery_start),
// which ACKs grow the window and when it counts as used (window_growth,
// cwnd_limited) and its pacing (pacing),
// which the same tcp.Sender honours on UDP as
// in the simulator. sack is not carried: both ends would have to agree
// on it. Nor is receive_window, a model of the receiver: the UDP
// receiver takes its settings from the handshake, which does not carry
// it.
func applyTransport(c *tcp.Config, t *scenario.Transport) {
	c.MSS = t.MSS.V
	c.AckInterval = t.SACKTimeout.V
	c.NoDelayedAck = t.DelayedAck != nil && !*t.DelayedAck
	c.MinRTO, c.InitialRTO, c.MaxRTO, c.TimeoutMin = t.MinRTO.V, t.InitialRTO.V, t.MaxRTO.V, t.TimeoutMin.V
	c.RecvWindow = t.RecvWindow.V
	network.ApplyLossRecovery(c, t)
}

// Proto implements emu.Endpoints: the bottleneck recognises the flow by
// its UDP destination port.
func (e *Endpoints) Proto() uint8 { return link.UDP }

// Listen implements emu.Endpoints.
func (e *Endpoints) Listen(env emu.Env) error {
	cfg := udp.ListenConfig{Idle: time.Hour, Linger: 2 * time.Second}
	if e.spec.Bytes > 0 {
		cfg.OnDone = func() { env.Done(env.Clock.Now()) }
	}
	err := env.Rcv.Do(func() (err error) {
		e.l, err = udp.Listen(env.Dst.String(), cfg)
		return err
	})
	if err != nil {
		return err
	}
	go func() {
		defer close(e.rdone)
		e.rres, e.rerr = e.l.Accept(e.ctx)
	}()
	return nil
}

// Start implements emu.Endpoints; it does not block.
func (e *Endpoints) Start(env emu.Env) {
	o := e.opts
	o.Addr = env.Dst.String()
	o.Within = env.Snd.Do
	attach := o.Attach
	o.Attach = func(s *udp.Sender) error {
		e.mu.Lock()
		e.sender = s
		e.mu.Unlock()
		// The forwarder cannot read RTTs from UDP: the sender reports its
		// own samples (RTT columns and RTI).
		if env.OnRTT != nil {
			prev := s.Transport().OnRTT
			s.Transport().OnRTT = func(now clock.Time, rtt time.Duration) {
				if prev != nil {
					prev(now, rtt)
				}
				env.OnRTT(rtt)
			}
		}
		if attach != nil {
			return attach(s)
		}
		return nil
	}
	go func() {
		defer close(e.sdone)
		res, err := live.Send(e.ctx, o)
		e.fin(res)
		e.mu.Lock()
		e.sres, e.serr = res, err
		e.mu.Unlock()
	}()
}

// Stop implements emu.Endpoints: stop the sender (FINs), wait for both
// ends, and report.
func (e *Endpoints) Stop() (emu.FlowStats, error) {
	e.mu.Lock()
	s := e.sender
	e.mu.Unlock()
	started := e.sdone != nil
	if s != nil {
		s.Stop()
	}
	var st emu.FlowStats
	var errs []error
	wait := func(ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-time.After(5 * time.Second):
			return false
		}
	}
	if started && s != nil && !wait(e.sdone) {
		e.cancel()
		<-e.sdone
	}
	if !wait(e.rdone) {
		e.cancel()
		<-e.rdone
	}
	e.cancel()
	if e.l != nil {
		e.l.Close()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st.Received = e.rres.Delivered
	if r := e.sres; r != nil {
		st.Retransmissions, st.RTOs = r.Flow.Retransmissions, r.Flow.RTOs
		st.LossProbes, st.FastRecoveries = r.Flow.LossProbes, r.Flow.FastRecoveries
		st.RTOsInRecovery, st.RTOsInLoss = r.Flow.RTOsInRecovery, r.Flow.RTOsInLoss
		st.LostRetransmits = r.Flow.LostRetransmits
		st.ECNReductions = r.Flow.ECNReductions
		st.Agent = r.Extra
	}
	if e.serr != nil && !errors.Is(e.serr, context.Canceled) {
		errs = append(errs, fmt.Errorf("cclab sender: %w", e.serr))
	}
	if e.rerr != nil && !errors.Is(e.rerr, context.Canceled) {
		errs = append(errs, fmt.Errorf("cclab receiver: %w", e.rerr))
	}
	if e.rres.Corrupt > 0 {
		errs = append(errs, fmt.Errorf("cclab receiver: %d corrupt bytes", e.rres.Corrupt))
	}
	return st, errors.Join(errs...)
}

// Result returns the sender's summary once the flow has stopped (nil if
// it never started).
func (e *Endpoints) Result() *live.Result {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sres
}
