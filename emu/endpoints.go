package emu

import (
	"net/netip"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/emu/endpoint"
	"github.com/cclab/cclab/emu/link"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/experiment/scenario"
)

// Env is what a flow's endpoints get: the two namespaces, the receiver's
// address and port (the port identifies the flow's packets at the
// bottleneck, so the receiving end must listen on it with the path's
// protocol), the run's clock and the completion callback.
type Env struct {
	// Snd and Rcv are the sender's and receiver's namespaces; open
	// sockets there with NS.Do.
	Snd, Rcv *netns.NS
	// Dst is the receiver's address and port.
	Dst netip.AddrPort
	// Clock is the run's clock (the forwarder's).
	Clock clock.Clock
	// Sample is the scenario's sampling interval (0: none).
	Sample time.Duration
	// Done must be called once when a finite flow's receiver has all its
	// bytes.
	Done func(at clock.Time)
	// OnRTT, for endpoints whose packets the forwarder cannot time (UDP
	// transports), records an RTT sample the sender measured; safe from
	// any goroutine.
	OnRTT func(rtt time.Duration)
}

// FlowSpec describes one measured flow to its endpoints.
type FlowSpec struct {
	// Name is the flow's name, CC its controller name.
	Name, CC string
	// Bytes is the transfer size (0: bulk).
	Bytes int64
	// Flow is the scenario's entry (stack, agent, parameters, protocol,
	// coding), for stacks other than kernel.
	Flow *scenario.Flow
	// LinkRate is the bottleneck's nominal rate at the start (0 for a
	// trace-driven bottleneck): what an agent that observes rates as
	// fractions of the link's (the data-centre tuner) is told.
	LinkRate units.Bandwidth
	// ECN is the flow's transport.ecn (its own, else the scenario's):
	// for stacks other than kernel, whose ECN the emulator does not set.
	ECN bool
	// Nagle is the flow's transport.nagle: a kernel sender leaves Nagle's
	// algorithm on (clears TCP_NODELAY).
	Nagle bool
}

// FlowStats is what endpoints report when stopped.
type FlowStats struct {
	// Received is the payload bytes the receiving application got.
	Received int64
	// Retransmissions and RTOs are the sender's counts.
	Retransmissions, RTOs int64
	// LossProbes and FastRecoveries are the sender's tail loss probes and
	// entries into fast recovery, when it counts them per flow (cclab's
	// TCP on UDP; kernel TCP counts them per namespace only).
	LossProbes, FastRecoveries *int64
	// RTOsInRecovery and RTOsInLoss are the sender's first timeouts in
	// fast recovery and in the loss state, when it counts them per flow
	// (experiment.FlowResult.RTOsInRecovery).
	RTOsInRecovery, RTOsInLoss *int64
	// LostRetransmits is the sender's retransmissions found lost in
	// turn, when it counts them per flow
	// (experiment.FlowResult.LostRetransmits).
	LostRetransmits *int64
	// ECNReductions is the sender's window reductions for ECN echoes,
	// when it counts them per flow and the connection negotiated ECN
	// (cclab's transport on UDP; kernel TCP's are read from its CWR
	// segments).
	ECNReductions *int64
	// RwndLimited is how long the sender waited for the receiver's
	// window (kernel TCP's tcpi_rwnd_limited), if the transport reports it.
	RwndLimited *time.Duration
	// Samples are the sender's periodic readings (may be empty).
	Samples []endpoint.Sample
	// Agent holds what the flow's agent reported (steps, misses, a
	// tuner's counters), if it has one.
	Agent map[string]float64
}

// Endpoints runs the two ends of one measured flow. Kernel TCP is the
// default; a transport that is not kernel TCP (cclab's own UDP-based
// transport, for example) implements this interface with sockets it opens
// inside env.Snd and env.Rcv, and is plugged in with Options.Endpoints.
type Endpoints interface {
	// Proto is link.TCP or link.UDP: how the forwarder recognises the
	// flow's packets (with Env.Dst's port).
	Proto() uint8
	// Listen prepares the receiving end before the run starts.
	Listen(env Env) error
	// Start starts the sending end. It is called on the forwarder's
	// event loop and must not block.
	Start(env Env)
	// Stop ends the flow (it may block) and reports.
	Stop() (FlowStats, error)
}

// kernelTCP is the default Endpoints: a kernel TCP connection with the
// flow's controller.
type kernelTCP struct {
	spec    FlowSpec
	sink    *endpoint.TCPSink
	snd     *endpoint.TCPSender
	started bool
	ch      chan endpoint.Sample
}

// KernelTCP returns kernel TCP endpoints for spec; the controller must be
// one the kernel has (see endpoint.KernelCC).
func KernelTCP(spec FlowSpec) Endpoints { return &kernelTCP{spec: spec} }

func (k *kernelTCP) Proto() uint8 { return link.TCP }

// Listen opens the receiver's socket and prepares the sender's, so that
// Start only connects: flows due at the same instant then leave together
// (endpoint.PrepareTCP).
func (k *kernelTCP) Listen(env Env) error {
	s, err := endpoint.ListenTCP(env.Rcv, env.Dst.Addr(), env.Dst.Port(), k.spec.Bytes, env.Clock)
	if err != nil {
		return err
	}
	s.OnDone = env.Done
	k.sink = s
	cfg := endpoint.TCPConfig{CC: k.spec.CC, Bytes: k.spec.Bytes, Sample: env.Sample, Nagle: k.spec.Nagle}
	if env.Sample > 0 {
		k.ch = make(chan endpoint.Sample, 1<<16)
		cfg.OnSample = func(s endpoint.Sample) {
			select {
			case k.ch <- s:
			default:
			}
		}
	}
	if k.snd, err = endpoint.PrepareTCP(env.Snd, cfg, env.Clock); err != nil {
		s.Close()
		k.sink = nil
		return err
	}
	return nil
}

func (k *kernelTCP) Start(env Env) {
	k.started = true
	k.snd.Connect(env.Dst)
}

func (k *kernelTCP) Stop() (FlowStats, error) {
	var st FlowStats
	var err error
	if k.snd != nil && !k.started {
		_, _ = k.snd.Stop() // closes the prepared socket; nothing to report
	} else if k.snd != nil {
		var final endpoint.Sample
		final, err = k.snd.Stop()
		st.Retransmissions, st.RTOs = int64(final.Retrans), int64(final.RTOs)
		if err == nil {
			st.RwndLimited = &final.RwndLimited
		}
		if k.ch != nil {
			close(k.ch)
			for s := range k.ch {
				st.Samples = append(st.Samples, s)
			}
		}
	}
	if k.sink != nil {
		st.Received = k.sink.Received()
		k.sink.Close()
		st.Received = max(st.Received, k.sink.Received())
	}
	return st, err
}
