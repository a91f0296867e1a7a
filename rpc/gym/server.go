// Package gym is the cclab Gymnasium environment service (gym.proto in
// gympb): it hosts vectors of cclab's learning environments and resets and
// steps each vector in one call, running its environments in parallel
// goroutines (never one simulation across goroutines, so every environment
// stays deterministic for its seed). Python's cclab package (python/) is
// its client; docs/python.md describes both.
//
// Every request is validated before it touches an environment: a malformed
// or mis-shaped request gets codes.InvalidArgument with a message naming
// the field, and a panic inside an environment becomes codes.Internal for
// that vector instead of a crash of the server.
package gym

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/space"
	"github.com/cclab/cclab/rpc/gym/gympb"
)

// Config configures a Server. Zero values take the defaults in brackets.
type Config struct {
	// MaxEnvs bounds the environments alive at once, over all vectors
	// [256].
	MaxEnvs int
	// Workers is the number of goroutines stepping environments at once,
	// over all calls [GOMAXPROCS].
	Workers int
	// IdleTimeout is how long a vector may go unused (no call on its
	// handle, no step over its lane) before the server may close it, as
	// Close would, to make room for a Make that would otherwise exceed
	// MaxEnvs: the vectors of a client that died without closing them
	// (a crashed training script) would hold their share of MaxEnvs
	// until the server stops. Idle vectors are closed only then, oldest
	// first, only as many as the Make needs, and only if closing them
	// makes enough room; a vector in a call is never closed. Zero means
	// never (`cclab serve` defaults to 10 minutes).
	IdleTimeout time.Duration
	// Logf, if not nil, reports the vectors closed for being idle.
	Logf func(format string, args ...any)
}

// Server implements gympb.GymServer.
type Server struct {
	gympb.UnimplementedGymServer
	cfg  Config
	sem  chan struct{}
	mu   sync.Mutex
	vecs map[uint64]*vector
	next uint64
	live int
	// lanes holds the open shared-memory lanes by vector handle.
	lanes map[uint64]*lane
	// lanesClosed is set by CloseLanes.
	lanesClosed bool
	// reclaimed holds how long each vector closed for being idle had been
	// idle, by handle, so that a later call on its handle says why it is
	// gone (a few bytes a vector; such closes are rare).
	reclaimed map[uint64]time.Duration
	// now is the clock of idle times: time.Now, but in tests.
	now func() time.Time
}

// NewServer returns a server with no environments.
func NewServer(cfg Config) *Server {
	if cfg.MaxEnvs <= 0 {
		cfg.MaxEnvs = 256
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.IdleTimeout < 0 {
		cfg.IdleTimeout = 0
	}
	return &Server{cfg: cfg, sem: make(chan struct{}, cfg.Workers), vecs: map[uint64]*vector{}, reclaimed: map[uint64]time.Duration{}, now: time.Now}
}

// seedStream separates the per-environment seed sequence from every
// stream the environments derive from the episode seed.
const seedStream = 0x636c61622d677931

// slot is one environment's episode bookkeeping.
type slot struct {
	seeds   SeedSequence
	started bool
	ended   bool
}

// SeedSequence gives an environment's episode seeds the way Gymnasium
// seeds an environment: reset(seed=s) runs the episode of seed s (exactly
// env.Reset(s) in Go) and fixes the sequence of seeds that later resets
// without a seed (and autoresets) continue; before any seed, the sequence
// starts from fresh entropy, as Gymnasium's does. The zero value is ready.
type SeedSequence struct {
	rng *rand.Rand
}

// Next returns the episode seed of a reset with seed s; a negative s means
// no seed.
func (q *SeedSequence) Next(s int64) uint64 {
	if s >= 0 {
		q.rng = rand.New(rand.NewPCG(uint64(s), seedStream))
		return uint64(s)
	}
	if q.rng == nil {
		q.rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return q.rng.Uint64()
}

// vector is one Make's environments; its calls are serialised.
type vector struct {
	mu       sync.Mutex
	id       string
	envs     []env.Env
	slots    []slot
	obsDim   int
	act      space.Space
	actBuf   []float32
	broken   error
	maxSteps int
	// used is when the last call on the vector (or step over its lane)
	// began or ended; gone, set when the server closed the vector for
	// being idle, is the error of the calls that were waiting for it.
	// Both are guarded by mu.
	used time.Time
	gone error

	// The step in progress: its destination, and v.stepOne bound once
	// (a closure per step would be an allocation per step).
	out    *stepOut
	stepFn func(i int)
	// cost is the last parallel call's duration times the goroutines it
	// used: about the CPU its environments took.
	cost time.Duration
	// parallel's join and first failure, reused from call to call.
	wg    sync.WaitGroup
	errMu sync.Mutex
	first error
}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// ListEnvs implements gympb.GymServer.
func (s *Server) ListEnvs(context.Context, *gympb.ListEnvsRequest) (*gympb.ListEnvsResponse, error) {
	resp := &gympb.ListEnvsResponse{}
	for _, sp := range Specs {
		es := &gympb.EnvSpec{Id: sp.ID, Doc: sp.Doc}
		for _, o := range sp.Options {
			es.Options = append(es.Options, o.Name+": "+o.Doc)
		}
		resp.Envs = append(resp.Envs, es)
	}
	return resp, nil
}

// Make implements gympb.GymServer.
func (s *Server) Make(_ context.Context, req *gympb.MakeRequest) (*gympb.MakeResponse, error) {
	spec, err := lookup(req.GetEnvId())
	if err != nil {
		return nil, invalid("%v", err)
	}
	n := int(req.GetNumEnvs())
	if n < 1 || n > s.cfg.MaxEnvs {
		return nil, invalid("num_envs: %d is not in [1, %d]", req.GetNumEnvs(), s.cfg.MaxEnvs)
	}
	s.mu.Lock()
	var closed []idleVector
	if s.live+n > s.cfg.MaxEnvs {
		var idle int
		closed, idle = s.reclaimIdle(s.live + n - s.cfg.MaxEnvs)
		if closed == nil {
			live := s.live
			s.mu.Unlock()
			return nil, s.exhausted(n, live, idle)
		}
	}
	s.live += n // reserve while building
	s.mu.Unlock()
	for _, c := range closed {
		s.closeLane(c.h)
		if s.cfg.Logf != nil {
			s.cfg.Logf("closed environment vector %d (%d of %s) after %v idle, longer than --idle-timeout %v, to make room for a new one", c.h, len(c.v.envs), c.v.id, c.idle.Round(time.Second), s.cfg.IdleTimeout)
		}
	}
	envs, maxSteps, err := s.build(spec, req.GetOptions(), n)
	if err != nil {
		s.mu.Lock()
		s.live -= n
		s.mu.Unlock()
		return nil, err
	}
	v := &vector{id: spec.ID, envs: envs, slots: make([]slot, n), maxSteps: maxSteps, used: s.now()}
	obs, act := envs[0].ObservationSpace(), envs[0].ActionSpace()
	v.obsDim, v.act = obs.Dim(), act
	v.actBuf = make([]float32, n*act.Dim())
	v.stepFn = v.stepOne
	s.mu.Lock()
	s.next++
	h := s.next
	s.vecs[h] = v
	s.mu.Unlock()
	return &gympb.MakeResponse{Handle: h, NumEnvs: int32(n), ObservationSpace: toProto(obs), ActionSpace: toProto(act), MaxEpisodeSteps: int32(maxSteps)}, nil
}

// build runs a spec's Make, turning its panics into errors.
func (s *Server) build(spec *Spec, opts map[string]string, n int) (envs []env.Env, maxSteps int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = status.Errorf(codes.Internal, "making %s: %v", spec.ID, p)
		}
	}()
	envs, maxSteps, err = spec.Make(newOptions(opts, spec.Options), n)
	if err != nil {
		return nil, 0, invalid("%v", err)
	}
	return envs, maxSteps, nil
}

func toProto(sp space.Space) *gympb.Space {
	if sp.Kind == space.KindDiscrete {
		return &gympb.Space{Kind: gympb.Space_DISCRETE, N: int64(sp.N)}
	}
	shape := make([]int32, len(sp.Shape))
	for i, d := range sp.Shape {
		shape[i] = int32(d)
	}
	return &gympb.Space{Kind: gympb.Space_BOX, Shape: shape, Low: sp.Low, High: sp.High}
}

// exhausted is Make's error when n more environments do not fit beside
// the live ones, idle of them in vectors idle for longer than IdleTimeout
// (too few to make room).
func (s *Server) exhausted(n, live, idle int) error {
	msg := fmt.Sprintf("num_envs: %d more environments would exceed the server's limit of %d (%d alive", n, s.cfg.MaxEnvs, live)
	switch t := s.cfg.IdleTimeout; {
	case t == 0:
		msg += "; idle vectors are never closed, as --idle-timeout is 0; close some or start the server with a larger --envs)"
	case idle == 0:
		msg += fmt.Sprintf(", none in a vector idle for longer than --idle-timeout %v, which the server would close to make room; close some or start the server with a larger --envs)", t)
	default:
		msg += fmt.Sprintf(", %d in vectors idle for longer than --idle-timeout %v: too few to make room, so none was closed; close some or start the server with a larger --envs)", idle, t)
	}
	return status.Error(codes.ResourceExhausted, msg)
}

// idleVector is a vector idle for longer than IdleTimeout.
type idleVector struct {
	h    uint64
	v    *vector
	idle time.Duration
}

// reclaimIdle closes, as Close would (but for their lanes, which the
// caller closes once it has released s.mu), the vectors idle for longer
// than IdleTimeout, oldest first, until need environments are freed. It
// closes none if all of them would not free need; it returns the vectors
// closed and the environments of all the idle vectors. A vector in a call
// (its mu held) is in use, never idle. The caller holds s.mu.
func (s *Server) reclaimIdle(need int) (closed []idleVector, idleEnvs int) {
	if s.cfg.IdleTimeout <= 0 {
		return nil, 0
	}
	var cs []idleVector
	now := s.now()
	for h, v := range s.vecs {
		// TryLock never blocks, so holding s.mu here cannot deadlock; the
		// idle candidates stay locked until decided, so that no call can
		// start on one in between.
		if !v.mu.TryLock() {
			continue
		}
		if idle := now.Sub(v.used); idle > s.cfg.IdleTimeout {
			cs = append(cs, idleVector{h, v, idle})
			idleEnvs += len(v.envs)
		} else {
			v.mu.Unlock()
		}
	}
	defer func() {
		for _, c := range cs {
			c.v.mu.Unlock()
		}
	}()
	if idleEnvs < need {
		return nil, idleEnvs
	}
	slices.SortFunc(cs, func(a, b idleVector) int {
		if a.idle != b.idle {
			return cmp.Compare(b.idle, a.idle) // the longest idle first
		}
		return cmp.Compare(a.h, b.h)
	})
	freed := 0
	for _, c := range cs {
		if freed >= need {
			break
		}
		// Calls that found the vector before it left the table and wait
		// for its lock get this error.
		c.v.gone = s.reclaimedError(c.h, c.idle)
		s.drop(c.h, c.v)
		s.reclaimed[c.h] = c.idle
		freed += len(c.v.envs)
		closed = append(closed, c)
	}
	return closed, idleEnvs
}

func (s *Server) reclaimedError(h uint64, idle time.Duration) error {
	return status.Errorf(codes.NotFound, "handle: environment vector %d was closed by the server after being idle for %v, longer than its --idle-timeout (%v), to make room for another; make a new one", h, idle.Round(time.Second), s.cfg.IdleTimeout)
}

// missing is the error for handle h, not in the table. The caller holds
// s.mu.
func (s *Server) missing(h uint64) error {
	if idle, ok := s.reclaimed[h]; ok {
		return s.reclaimedError(h, idle)
	}
	return status.Errorf(codes.NotFound, "handle: no environment vector %d (closed, or made by another server)", h)
}

// drop removes vector h from the table. The caller holds s.mu, and closes
// h's lane once it has released s.mu.
func (s *Server) drop(h uint64, v *vector) {
	delete(s.vecs, h)
	s.live -= len(v.envs)
}

// vec returns the vector of handle h, locked, and marks it used.
func (s *Server) vec(h uint64) (*vector, error) {
	s.mu.Lock()
	v := s.vecs[h]
	var err error
	if v == nil {
		err = s.missing(h)
	}
	s.mu.Unlock()
	if v == nil {
		return nil, err
	}
	v.mu.Lock()
	if v.gone != nil {
		v.mu.Unlock()
		return nil, v.gone
	}
	v.used = s.now()
	if v.broken != nil {
		v.mu.Unlock()
		return nil, status.Errorf(codes.FailedPrecondition, "handle %d: %v; close it", h, v.broken)
	}
	return v, nil
}

// release unlocks a vector vec returned, marking it used: a call that ran
// for longer than IdleTimeout does not leave its vector idle.
func (s *Server) release(v *vector) {
	v.used = s.now()
	v.mu.Unlock()
}

// Reset implements gympb.GymServer.
func (s *Server) Reset(_ context.Context, req *gympb.ResetRequest) (*gympb.ResetResponse, error) {
	v, err := s.vec(req.GetHandle())
	if err != nil {
		return nil, err
	}
	defer s.release(v)
	n := len(v.envs)
	seeds := req.GetSeeds()
	if len(seeds) != 0 && len(seeds) != n {
		return nil, invalid("seeds: %d entries, want 0 or num_envs (%d)", len(seeds), n)
	}
	for k := range req.GetOptions() {
		return nil, invalid("options[%q]: %s accepts no reset options", k, v.id)
	}
	resp := &gympb.ResetResponse{Observations: make([]byte, 4*n*v.obsDim), Infos: make([]*gympb.Info, n)}
	err = s.parallel(v, func(i int) {
		seed := int64(-1)
		if len(seeds) > 0 {
			seed = seeds[i]
		}
		sl := &v.slots[i]
		obs, info := v.envs[i].Reset(sl.seeds.Next(seed))
		sl.started, sl.ended = true, false
		v.put(resp.Observations, i, obs)
		resp.Infos[i] = infoProto(info)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// stepOut is one step's results for a vector, before encoding.
type stepOut struct {
	obs    []byte // packed float32, num_envs x observation dim
	reward []float64
	term   []bool
	trunc  []bool
	info   []env.Info // the environments' own maps: read before their next step
}

// resize makes o hold n environments of observation dimension d, reusing
// its storage.
func (o *stepOut) resize(n, d int) {
	o.obs = grow(o.obs, 4*n*d)
	o.reward = grow(o.reward, n)
	o.term = grow(o.term, n)
	o.trunc = grow(o.trunc, n)
	o.info = grow(o.info, n)
}

// grow returns b resliced to n elements, reallocated only if too short.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// step runs req on its vector into out (resized to fit) and returns the
// vector still locked, so that out.info stays valid until the caller has
// encoded it and unlocks.
func (s *Server) step(req *gympb.StepRequest, out *stepOut) (*vector, error) {
	v, err := s.vec(req.GetHandle())
	if err != nil {
		return nil, err
	}
	n := len(v.envs)
	fail := func(err error) (*vector, error) {
		v.mu.Unlock()
		return nil, err
	}
	if err := decodeActions(v.actBuf, req.GetActions(), n, v.act); err != nil {
		return fail(err)
	}
	for i := range v.slots {
		sl := &v.slots[i]
		switch {
		case !sl.started:
			return fail(status.Errorf(codes.FailedPrecondition, "handle %d: environment %d was never reset; call Reset first", req.GetHandle(), i))
		case sl.ended && !req.GetAutoreset():
			return fail(status.Errorf(codes.FailedPrecondition, "handle %d: environment %d ended its episode; call Reset or step with autoreset", req.GetHandle(), i))
		}
	}
	out.resize(n, v.obsDim)
	v.out = out
	err = s.parallel(v, v.stepFn)
	v.out = nil
	if err != nil {
		return fail(err)
	}
	return v, nil
}

// stepOne steps (or autoresets) environment i into v.out.
func (v *vector) stepOne(i int) {
	sl, out := &v.slots[i], v.out
	if sl.ended {
		obs, info := v.envs[i].Reset(sl.seeds.Next(-1))
		sl.ended = false
		v.put(out.obs, i, obs)
		out.reward[i], out.term[i], out.trunc[i], out.info[i] = 0, false, false, info
		return
	}
	ad := v.act.Dim()
	obs, r, term, trunc, info := v.envs[i].Step(v.actBuf[i*ad : (i+1)*ad])
	sl.ended = term || trunc
	v.put(out.obs, i, obs)
	out.reward[i], out.term[i], out.trunc[i], out.info[i] = r, term, trunc, info
}

// Step implements gympb.GymServer.
func (s *Server) Step(_ context.Context, req *gympb.StepRequest) (*gympb.StepResponse, error) {
	var out stepOut
	v, err := s.step(req, &out)
	if err != nil {
		return nil, err
	}
	defer s.release(v)
	resp := &gympb.StepResponse{Observations: out.obs, Rewards: out.reward, Terminated: out.term, Truncated: out.trunc, Infos: make([]*gympb.Info, len(out.info))}
	for i, info := range out.info {
		resp.Infos[i] = infoProto(info)
	}
	return resp, nil
}

// StepStream implements gympb.GymServer: Step for every request message of
// the stream, in order, answered with packed StepBatch messages. The
// stream's buffers are reused from step to step (gRPC has encoded a message
// when Send returns), so a step allocates little beyond gRPC's own needs.
func (s *Server) StepStream(stream gympb.Gym_StepStreamServer) error {
	var (
		req   gympb.StepRequest
		out   stepOut
		batch = &gympb.StepBatch{Infos: &gympb.InfoTable{}}
		keys  []string
	)
	for {
		if err := stream.RecvMsg(&req); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		v, err := s.step(&req, &out)
		if err != nil {
			return err
		}
		keys = encodeBatch(batch, &out, keys)
		s.release(v)
		if err := stream.Send(batch); err != nil {
			return err
		}
	}
}

// encodeBatch packs o into b, reusing b's buffers and its info keys while
// they stay the same; keys is scratch space, returned for reuse.
func encodeBatch(b *gympb.StepBatch, o *stepOut, keys []string) []string {
	n := len(o.reward)
	b.Observations = o.obs
	b.Rewards = grow(b.Rewards, 8*n)
	b.Terminated = grow(b.Terminated, n)
	b.Truncated = grow(b.Truncated, n)
	for i := range n {
		binary.LittleEndian.PutUint64(b.Rewards[8*i:], math.Float64bits(o.reward[i]))
		b.Terminated[i] = boolByte(o.term[i])
		b.Truncated[i] = boolByte(o.trunc[i])
	}
	// The union of the keys, sorted (maps have no order); usually the
	// same as the last step's.
	keys = keys[:0]
	for _, info := range o.info {
		for k := range info {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	t := b.Infos
	if !slices.Equal(t.Keys, keys) {
		t.Keys = slices.Clone(keys)
	}
	nk := len(keys)
	t.Values = grow(t.Values, 8*n*nk)
	t.Present = grow(t.Present, n*nk)
	all := true
	for i, info := range o.info {
		for j, k := range keys {
			x, ok := info[k]
			binary.LittleEndian.PutUint64(t.Values[8*(i*nk+j):], math.Float64bits(x))
			t.Present[i*nk+j] = boolByte(ok)
			all = all && ok
		}
	}
	if all {
		t.Present = t.Present[:0]
	}
	return keys
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Close implements gympb.GymServer.
func (s *Server) Close(_ context.Context, req *gympb.CloseRequest) (*gympb.CloseResponse, error) {
	s.mu.Lock()
	v := s.vecs[req.GetHandle()]
	var err error
	if v != nil {
		s.drop(req.GetHandle(), v)
	} else {
		err = s.missing(req.GetHandle())
	}
	s.mu.Unlock()
	if v == nil {
		return nil, err
	}
	s.closeLane(req.GetHandle())
	return &gympb.CloseResponse{}, nil
}

// serialBelow is the cost of a whole vector's call below which parallel
// runs it on the calling goroutine alone: waking another worker and
// parking it again costs tens of microseconds of CPU (more on a loaded
// machine), more than it saves when the vector's environments take a few
// microseconds each (MARLIN: ~6 us a step, 8 of them ~50 us).
const serialBelow = 250 * time.Microsecond

// parallel runs f for every environment of v, spread over at most
// Workers goroutines (environment i on worker i mod w, the calling
// goroutine being one of them), or on the calling goroutine alone when
// the vector's last call cost less than serialBelow. Either way each
// environment runs on one goroutine at a time, so results do not depend
// on the choice. A panic in an environment breaks the vector (its state
// is unknown) and becomes codes.Internal. The caller holds v.mu.
func (s *Server) parallel(v *vector, f func(i int)) error {
	w := min(s.cfg.Workers, len(v.envs))
	if v.cost < serialBelow {
		w = 1
	}
	v.first = nil
	start := time.Now()
	for j := 1; j < w; j++ {
		v.wg.Add(1)
		go s.work(v, f, j, w)
	}
	s.share(v, f, 0, w)
	v.wg.Wait()
	v.cost = time.Since(start) * time.Duration(w)
	if v.first != nil {
		v.broken = v.first
		return status.Error(codes.Internal, v.first.Error())
	}
	return nil
}

func (s *Server) work(v *vector, f func(i int), j, w int) {
	defer v.wg.Done()
	s.share(v, f, j, w)
}

// share runs worker j's share of the environments, once a worker slot is
// free.
func (s *Server) share(v *vector, f func(i int), j, w int) {
	s.sem <- struct{}{}
	defer func() { <-s.sem }()
	for i := j; i < len(v.envs); i += w {
		s.runOne(v, f, i)
	}
}

func (s *Server) runOne(v *vector, f func(i int), i int) {
	defer func() {
		if p := recover(); p != nil {
			v.errMu.Lock()
			if v.first == nil {
				v.first = fmt.Errorf("environment %d of %s failed: %v", i, v.id, p)
			}
			v.errMu.Unlock()
		}
	}()
	f(i)
}

// put writes environment i's observation into the packed buffer.
func (v *vector) put(buf []byte, i int, obs []float32) {
	if len(obs) != v.obsDim {
		panic(fmt.Sprintf("observation has %d values, want %d", len(obs), v.obsDim))
	}
	b := buf[4*i*v.obsDim:]
	for k, x := range obs {
		binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(x))
	}
}

// decodeActions checks packed float32 actions against n copies of sp and
// decodes them into dst (len n x sp.Dim()).
func decodeActions(dst []float32, b []byte, n int, sp space.Space) error {
	d := sp.Dim()
	if len(b) != 4*n*d {
		return invalid("actions: %d bytes, want num_envs (%d) x action dim (%d) x 4 bytes of float32 = %d", len(b), n, d, 4*n*d)
	}
	for k := range dst {
		x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:]))
		i, j := k/d, k%d
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return invalid("actions: environment %d, element %d is %g, want a finite number", i, j, x)
		}
		if sp.Kind == space.KindDiscrete && (x < 0 || x >= float32(sp.N) || x != float32(math.Trunc(float64(x)))) {
			return invalid("actions: environment %d is %g, want an integer in [0, %d)", i, x, sp.N)
		}
		dst[k] = x
	}
	return nil
}

func infoProto(info env.Info) *gympb.Info {
	if len(info) == 0 {
		return &gympb.Info{}
	}
	m := make(map[string]float64, len(info))
	for k, x := range info {
		m[k] = x
	}
	return &gympb.Info{Values: m}
}
