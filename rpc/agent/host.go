package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/cclab/cclab/cc"
	_ "github.com/cclab/cclab/cc/external" // the controller a MARLIN host drives
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/papers/datacenter"
	"github.com/cclab/cclab/papers/marlin"
	"github.com/cclab/cclab/rpc/agent/agentpb"
	"github.com/cclab/cclab/transport/tcp"
	"github.com/cclab/cclab/transport/udp"
)

// HostStats count a host's control steps. They are written on the flow's
// event loop; read them after the flow has ended.
type HostStats struct {
	// Steps is the number of observations sent; Applied the actions
	// applied; Misses the steps whose action had not arrived by the next
	// step (the last action stayed in force); Late the actions that
	// arrived after their step and were discarded.
	Steps, Applied, Misses, Late int64
	// Disconnected reports that the agent went away during the flow; Err
	// says why.
	Disconnected bool
	Err          string
}

// Map returns the counters by name, for live.Result.Extra.
func (s *HostStats) Map() map[string]float64 {
	m := map[string]float64{
		"agent_steps": float64(s.Steps), "agent_applied": float64(s.Applied),
		"agent_misses": float64(s.Misses), "agent_late": float64(s.Late),
	}
	if s.Disconnected {
		m["agent_disconnected"] = 1
	}
	return m
}

// actor answers observations: a remote agent over a Control stream, or
// the policy in process.
type actor interface {
	// submit hands an observation over without blocking the event loop.
	submit(obs *agentpb.Observation)
	close()
}

// Host drives a live flow from a policy.
type Host struct {
	kind  string
	step  time.Duration
	act   actor
	Stats HostStats
	// dc holds a dc-bbr policy's settings (from Describe).
	dc datacenter.Config

	s        *udp.Sender
	view     view
	stepNo   uint64
	answered bool
}

// view is how a host of one policy kind observes its flow.
type view interface {
	// attach hooks into s before it runs.
	attach(s *udp.Sender) error
	// observe closes the step ending at now: the observation vector (owned
	// by the view) and the step's raw statistics.
	observe(now clock.Time, t *tcp.Sender) ([]float32, map[string]float64)
	// applied tells the view that action a took effect.
	applied(a *agentpb.Action)
	// summary is what the view measured over the flow, for the result.
	summary() map[string]float64
}

// FlowConfig is what a host needs to know of its flow beyond the policy.
type FlowConfig struct {
	// Params are the controller's parameters (dc-bbr: BBR's, whose two
	// windows are the tuner's starting point).
	Params map[string]float64
	// LinkRate is the bottleneck's nominal rate (dc-bbr observes rates
	// as fractions of it).
	LinkRate units.Bandwidth
}

// Kind returns the served policy's kind.
func (h *Host) Kind() string { return h.kind }

// Step returns the control interval.
func (h *Host) Step() time.Duration { return h.step }

// NewLocalHost drives a flow from a policy in process (`--cc marlin`):
// actions are computed on the event loop, so none is ever missed.
func NewLocalHost(s *Served) *Host {
	h := &Host{kind: s.Kind, step: s.Step, dc: s.dc}
	h.act = &localActor{h: h, sess: newSession(s)}
	return h
}

type localActor struct {
	h    *Host
	sess *session
}

func (l *localActor) submit(obs *agentpb.Observation) {
	a, err := l.sess.act(obs)
	if err != nil {
		l.h.Stats.Err = err.Error()
		return
	}
	l.h.apply(a)
}
func (l *localActor) close() {}

// DialHost connects to an agent at addr ("host:port" or "unix:PATH") and
// asks what it serves.
func DialHost(ctx context.Context, addr string) (*Host, error) {
	target := addr
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		target = "unix://" + path
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", addr, err)
	}
	client := agentpb.NewAgentClient(conn)
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	desc, err := client.Describe(dctx, &agentpb.DescribeRequest{}, grpc.WaitForReady(true))
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("agent %s: %w", addr, err)
	}
	if desc.Kind != KindMarlin && desc.Kind != KindDCBBR {
		conn.Close()
		return nil, fmt.Errorf("agent %s serves a %q policy; a live flow can be driven by: %s, %s", addr, desc.Kind, KindMarlin, KindDCBBR)
	}
	var dc datacenter.Config
	if desc.Kind == KindDCBBR {
		if dc, err = datacenter.LiveSettingsFrom(desc.Settings); err != nil {
			conn.Close()
			return nil, fmt.Errorf("agent %s: %w", addr, err)
		}
		if n := obsDim(desc.Observation); n != datacenter.NumFeatures*dc.History {
			conn.Close()
			return nil, fmt.Errorf("agent %s: observation space of %d values, a dc-bbr policy with history %d takes %d", addr, n, dc.History, datacenter.NumFeatures*dc.History)
		}
	}
	// Checked in microseconds: converted first, a huge step_us would wrap
	// round to nanoseconds, possibly inside the range.
	if us := desc.StepUs; us < time.Millisecond.Microseconds() || us > time.Minute.Microseconds() {
		conn.Close()
		return nil, fmt.Errorf("agent %s: step_us %d out of range [1000, 60000000] (1 ms to 1 min)", addr, us)
	}
	step := time.Duration(desc.StepUs) * time.Microsecond
	h := &Host{kind: desc.Kind, step: step, dc: dc}
	sctx, scancel := context.WithCancel(context.Background())
	stream, err := client.Control(sctx)
	if err != nil {
		scancel()
		conn.Close()
		return nil, fmt.Errorf("agent %s: %w", addr, err)
	}
	r := &remoteActor{h: h, conn: conn, stream: stream, cancel: scancel, out: make(chan *agentpb.Observation, 1)}
	h.act = r
	r.wg.Add(2)
	go r.sendLoop()
	go r.recvLoop()
	return h, nil
}

// remoteActor talks to an agent over one Control stream. Observations go
// through a one-slot mailbox: if the stream is slow, a newer observation
// replaces the unsent older one (its step is then a miss).
type remoteActor struct {
	h      *Host
	conn   *grpc.ClientConn
	stream agentpb.Agent_ControlClient
	cancel context.CancelFunc
	out    chan *agentpb.Observation
	wg     sync.WaitGroup
	once   sync.Once
	mu     sync.Mutex
	poster *udp.Sender
}

func (r *remoteActor) submit(obs *agentpb.Observation) {
	select {
	case r.out <- obs:
	default:
		select {
		case <-r.out:
		default:
		}
		r.out <- obs
	}
}

func (r *remoteActor) sendLoop() {
	defer r.wg.Done()
	for obs := range r.out {
		if err := r.stream.Send(obs); err != nil {
			r.fail(err)
			// Keep draining so submit never blocks.
			for range r.out {
			}
			return
		}
	}
	_ = r.stream.CloseSend()
}

func (r *remoteActor) recvLoop() {
	defer r.wg.Done()
	for {
		a, err := r.stream.Recv()
		if err != nil {
			r.fail(err)
			return
		}
		r.mu.Lock()
		s := r.poster
		r.mu.Unlock()
		if s != nil {
			s.Post(func(clock.Time) { r.h.apply(a) })
		}
	}
}

// fail records the agent's disconnection on the flow's loop.
func (r *remoteActor) fail(err error) {
	r.mu.Lock()
	s := r.poster
	r.mu.Unlock()
	if s == nil {
		return
	}
	msg := err.Error()
	s.Post(func(clock.Time) {
		if !r.h.Stats.Disconnected {
			r.h.Stats.Disconnected = true
			r.h.Stats.Err = msg
		}
	})
}

func (r *remoteActor) close() {
	r.once.Do(func() {
		close(r.out)
		r.cancel()
		r.wg.Wait()
		r.conn.Close()
	})
}

// Close ends the session with the agent; call it after the flow ended.
func (h *Host) Close() { h.act.close() }

// Controller returns the controller a host drives and prepares the
// host's observation of it: for MARLIN the external controller, with
// MARLIN's initial window of 10 segments and its window cap; for dc-bbr
// BBR with f.Params, observed on a link of f.LinkRate.
func (h *Host) Controller(mss units.Bytes, f FlowConfig) (cc.Algorithm, error) {
	name, given := "external", map[string]float64{"iw": 10, "max_window": float64(marlin.WindowCap)}
	if h.kind == KindDCBBR {
		o, err := datacenter.NewLiveObserver(h.dc.History, h.dc.Reward, f.LinkRate, datacenter.ParamsFrom(f.Params))
		if err != nil {
			return nil, err
		}
		h.view = &dcView{o: o}
		name, given = "bbr", f.Params
	} else {
		h.view = &marlinView{}
	}
	spec, err := cc.Lookup(name)
	if err != nil {
		return nil, err
	}
	params, err := spec.Resolve(given)
	if err != nil {
		return nil, err
	}
	return spec.New(cc.Config{MSS: mss, Params: params})
}

// obsDim is the size of a described space.
func obsDim(s *agentpb.Space) int {
	if s == nil {
		return 0
	}
	n := 1
	for _, d := range s.Shape {
		n *= int(d)
	}
	return n
}

// Attach hooks the host into a sender before it runs: an observation
// every step, actions applied when they arrive.
func (h *Host) Attach(s *udp.Sender) error {
	if h.view == nil {
		return fmt.Errorf("agent: the host has no controller (call Controller first)")
	}
	if err := h.view.attach(s); err != nil {
		return err
	}
	h.s = s
	if r, ok := h.act.(*remoteActor); ok {
		r.mu.Lock()
		r.poster = s
		r.mu.Unlock()
	}
	h.answered = true
	s.Every(h.step, h.tick)
	return nil
}

// tick observes the step that just ended and submits the observation.
func (h *Host) tick(now clock.Time, t *tcp.Sender) {
	if !h.answered && h.Stats.Steps > 0 {
		h.Stats.Misses++
	}
	vec, stats := h.view.observe(now, t)
	obs := &agentpb.Observation{
		Step:      h.stepNo,
		Obs:       append([]float32(nil), vec...),
		CwndBytes: int64(t.CC().CongestionWindow()),
		Stats:     stats,
	}
	h.answered = false
	h.Stats.Steps++
	h.stepNo++
	h.act.submit(obs)
}

// apply applies an action on the event loop, unless it is for an older
// step than the latest observation.
func (h *Host) apply(a *agentpb.Action) {
	if a.Step+1 != h.stepNo {
		h.Stats.Late++
		return
	}
	h.answered = true
	h.Stats.Applied++
	h.applyTo(h.s.Clock().Now(), h.s.Transport().CC(), a)
	h.view.applied(a)
}

// applyTo sets on alg what a asks for. What an agent may not set is not
// in force, and Stats.Err says why (the flow goes on with the rest).
func (h *Host) applyTo(now clock.Time, alg cc.Algorithm, a *agentpb.Action) {
	if a.CwndBytes > 0 {
		if ws, ok := alg.(cc.WindowSetter); ok {
			ws.SetCongestionWindow(now, units.Bytes(a.CwndBytes))
		}
	}
	if a.PacingBps > 0 {
		// A larger or infinite rate would wrap round to a negative one in
		// whole bits per second, which switches pacing off.
		if a.PacingBps > units.MaxBandwidth {
			h.Stats.Err = fmt.Sprintf("step %d: pacing_bps %g is above %g (1000 Tbit/s); not applied", a.Step, a.PacingBps, float64(units.MaxBandwidth))
		} else if ps, ok := alg.(cc.PacingSetter); ok {
			ps.SetPacingRate(now, units.Bandwidth(a.PacingBps))
		}
	}
	if len(a.Params) > 0 {
		if tu, ok := alg.(cc.Tunable); ok {
			for k, v := range a.Params {
				if err := tu.SetParam(k, v); err != nil {
					delete(a.Params, k) // not in force
					h.Stats.Err = err.Error()
				}
			}
		}
	}
}

// Summary returns the host's counters and what its view measured, for
// live.Result.Extra; call it after the flow has ended.
func (h *Host) Summary() map[string]float64 {
	m := h.Stats.Map()
	if h.view != nil {
		for k, v := range h.view.summary() {
			m[k] = v
		}
	}
	return m
}

// marlinView builds MARLIN's observation (marlin.LiveObserver).
type marlinView struct {
	obs *marlin.LiveObserver
	mss units.Bytes
}

func (v *marlinView) attach(s *udp.Sender) error {
	if _, ok := s.Transport().CC().(cc.WindowSetter); !ok {
		return fmt.Errorf("agent: the flow's controller cannot take a window from outside (use the external controller)")
	}
	v.mss = s.Transport().Config().MSS
	v.obs = marlin.NewLiveObserver(s.Clock().Now())
	prev := s.Transport().OnRTT
	s.Transport().OnRTT = func(now clock.Time, rtt time.Duration) {
		if prev != nil {
			prev(now, rtt)
		}
		v.obs.OnRTT(rtt)
	}
	return nil
}

func (v *marlinView) observe(now clock.Time, t *tcp.Sender) ([]float32, map[string]float64) {
	vec, raw := v.obs.Observe(now, t.State())
	stats := make(map[string]float64, len(raw)+1)
	for i, name := range marlin.FeatureNames {
		stats[name] = raw[i]
	}
	stats["mss_bytes"] = float64(v.mss)
	return vec, stats
}

func (v *marlinView) applied(*agentpb.Action)     {}
func (v *marlinView) summary() map[string]float64 { return nil }

// dcView builds the data-centre tuner's observation
// (datacenter.LiveObserver) and keeps its windows in step with the
// parameters the agent sets.
type dcView struct {
	o       *datacenter.LiveObserver
	changes int // actions that changed the windows
}

func (v *dcView) attach(s *udp.Sender) error {
	_, err := v.o.Attach(s)
	return err
}

func (v *dcView) observe(now clock.Time, _ *tcp.Sender) ([]float32, map[string]float64) {
	vec, m := v.o.Observe(now)
	p := v.o.Params()
	return vec, map[string]float64{"util": m.Util, "delay_term": m.DelayTerm, "reward": m.Reward,
		"goodput_bytes": float64(m.GoodputBytes), "min_rtt_window": p.MinRTTWindow, "bw_window_rounds": float64(p.BwWindowRounds)}
}

func (v *dcView) applied(a *agentpb.Action) {
	p := v.o.Params()
	if x, ok := a.Params["min_rtt_window"]; ok {
		p.MinRTTWindow = x
	}
	if x, ok := a.Params["bw_window_rounds"]; ok {
		p.BwWindowRounds = int(x)
	}
	if p != v.o.Params() {
		v.changes++
	}
	v.o.SetParams(p)
}

func (v *dcView) summary() map[string]float64 {
	m := v.o.Summary()
	m["dc_changes"] = float64(v.changes)
	return m
}

// MarlinAckInterval is the acknowledgement timer of MARLIN's Mockets-style
// transport, which the policy was trained with.
const MarlinAckInterval = marlin.LiveAckInterval
