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
	_ "github.com/cclab/cclab/cc/external" // the controller a host drives
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
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

	s        *udp.Sender
	obs      *marlin.LiveObserver
	stepNo   uint64
	answered bool
	mss      units.Bytes
}

// Kind returns the served policy's kind.
func (h *Host) Kind() string { return h.kind }

// Step returns the control interval.
func (h *Host) Step() time.Duration { return h.step }

// NewLocalHost drives a flow from a policy in process (`--cc marlin`):
// actions are computed on the event loop, so none is ever missed.
func NewLocalHost(s *Served) *Host {
	h := &Host{kind: s.Kind, step: s.Step}
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
	if desc.Kind != KindMarlin {
		conn.Close()
		return nil, fmt.Errorf("agent %s serves a %q policy; a live flow can be driven by: %s", addr, desc.Kind, KindMarlin)
	}
	step := time.Duration(desc.StepUs) * time.Microsecond
	if step < time.Millisecond || step > time.Minute {
		conn.Close()
		return nil, fmt.Errorf("agent %s: step interval %v out of range [1ms, 1min]", addr, step)
	}
	h := &Host{kind: desc.Kind, step: step}
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

// Controller returns the controller a host drives: the external one,
// with MARLIN's initial window of 10 segments and its window cap.
func (h *Host) Controller(mss units.Bytes) (cc.Algorithm, error) {
	spec, err := cc.Lookup("external")
	if err != nil {
		return nil, err
	}
	params, err := spec.Resolve(map[string]float64{"iw": 10, "max_window": float64(marlin.WindowCap)})
	if err != nil {
		return nil, err
	}
	return spec.New(cc.Config{MSS: mss, Params: params})
}

// Attach hooks the host into a sender before it runs: an observation
// every step, actions applied when they arrive.
func (h *Host) Attach(s *udp.Sender) error {
	if _, ok := s.Transport().CC().(cc.WindowSetter); !ok {
		return fmt.Errorf("agent: the flow's controller cannot take a window from outside (use the external controller)")
	}
	h.s = s
	h.mss = s.Transport().Config().MSS
	if r, ok := h.act.(*remoteActor); ok {
		r.mu.Lock()
		r.poster = s
		r.mu.Unlock()
	}
	h.obs = marlin.NewLiveObserver(s.Clock().Now())
	prev := s.Transport().OnRTT
	s.Transport().OnRTT = func(now clock.Time, rtt time.Duration) {
		if prev != nil {
			prev(now, rtt)
		}
		h.obs.OnRTT(rtt)
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
	st := t.State()
	vec, raw := h.obs.Observe(now, st)
	obs := &agentpb.Observation{
		Step:      h.stepNo,
		Obs:       append([]float32(nil), vec...),
		CwndBytes: int64(st.Cwnd),
		Stats:     make(map[string]float64, len(raw)+1),
	}
	for i, name := range marlin.FeatureNames {
		obs.Stats[name] = raw[i]
	}
	obs.Stats["mss_bytes"] = float64(h.mss)
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
	now := h.s.Clock().Now()
	alg := h.s.Transport().CC()
	if a.CwndBytes > 0 {
		if ws, ok := alg.(cc.WindowSetter); ok {
			ws.SetCongestionWindow(now, units.Bytes(a.CwndBytes))
		}
	}
	if a.PacingBps > 0 {
		if ps, ok := alg.(cc.PacingSetter); ok {
			ps.SetPacingRate(now, units.Bandwidth(a.PacingBps))
		}
	}
	if len(a.Params) > 0 {
		if tu, ok := alg.(cc.Tunable); ok {
			for k, v := range a.Params {
				_ = tu.SetParam(k, v)
			}
		}
	}
}

// MarlinAckInterval is the acknowledgement timer of MARLIN's Mockets-style
// transport, which the policy was trained with.
const MarlinAckInterval = marlin.LiveAckInterval
