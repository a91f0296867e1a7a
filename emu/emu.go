// Package emu runs a scenario file on an emulated network: the sender and
// receiver namespaces of emu/netns joined through the userspace bottleneck
// of emu/link (the simulator's own link, queue, loss and trace code driven
// by the wall clock), with real endpoints (kernel TCP by default, UDP
// background sources) from emu/endpoint. It produces the simulator's
// summary (experiment.Result, the JSON schema of `cclab run`) plus the
// emulator's own accounting.
//
// The scenario is validated by experiment/scenario exactly as for the
// simulator; Supported then refuses what real endpoints cannot do (Mockets,
// TCP/NC, the fixed and external controllers, controllers the kernel
// lacks, kernel-TCP flows that disagree on transport.ecn); Unapplied lists
// the fields the kernel path runs without applying them, for warnings.
package emu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/rng"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/emu/endpoint"
	"github.com/cclab/cclab/emu/link"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
)

// Port ranges: the receiver-side port identifies each path's packets.
const (
	flowPort   = 5001 // measured flows
	tcpBGPort  = 5501 // background TCP sources (one port per source)
	udpBGPort  = 6001 // background UDP sources
	maxPerKind = 499
)

// Options adjusts a run.
type Options struct {
	// Pcap, if set, receives the bottleneck's packets (headers only) as a
	// pcap stream.
	Pcap io.Writer
	// PcapArrivals, if set, receives the packets reaching the bottleneck,
	// before its queue (headers only): what the senders sent, when.
	PcapArrivals io.Writer
	// PcapDrops, if set, receives the packets the bottleneck's queue drops
	// (headers only, at the drop): with the other two, every packet's
	// fate, retransmissions included.
	PcapDrops io.Writer
	// Record keeps every bottleneck packet's record in Run.Records.
	Record bool
	// Endpoints makes a measured flow's endpoints; nil means kernel TCP
	// with the flow's controller.
	Endpoints func(spec FlowSpec) (Endpoints, error)
	// NoRealtime keeps the forwarder at normal scheduling priority.
	NoRealtime bool
	// OnStart, if set, is called once the emulation is built, just before
	// it runs, with a Control to change the bottleneck while it runs.
	OnStart func(c *Control)
}

// Result is the summary of an emulated run: the simulator's fields plus
// the emulator's.
type Result struct {
	experiment.Result
	// Mode is "emu".
	Mode string `json:"mode"`
	// Kernel is the Linux release the endpoints ran on.
	Kernel string `json:"kernel"`
	// Emulator is the forwarder's own accounting.
	Emulator Accounting `json:"emulator"`
	// Agents holds, by flow, what the agents driving `stack: cclab` flows
	// reported (papers' live agents: steps, misses, tuner counters).
	Agents map[string]map[string]float64 `json:"agents,omitempty"`
	// KernelCounters are the kernels' TCP counters over the run; absent
	// when /proc could not be read in the namespaces.
	KernelCounters *KernelCounters `json:"kernel_counters,omitempty"`
}

// Accounting is what the forwarder saw: every packet that entered the
// bottleneck is delivered, dropped by the queue, lost by a loss model or
// still inside at the end.
type Accounting struct {
	Packets     int64 `json:"packets"`
	Delivered   int64 `json:"delivered"`
	QueueDrops  int64 `json:"queue_drops"`
	Lost        int64 `json:"lost"`
	InFlight    int64 `json:"in_flight"`
	Reverse     int64 `json:"reverse_packets"`
	Other       int64 `json:"other_packets"`
	WriteErrors int64 `json:"write_errors"`
	// CEMarked counts the packets the queue marked CE that left it with
	// their IP header rewritten to CE (the link's ecn_marks also counts
	// marked packets still queued at the end).
	CEMarked int64 `json:"ce_marked"`
	// SojournMeanMs and SojournP95Ms are the bottleneck queue's waiting
	// times over all packets it transmitted.
	SojournMeanMs float64 `json:"sojourn_mean_ms"`
	SojournP95Ms  float64 `json:"sojourn_p95_ms"`
	// Lateness* is how late the forwarder wrote packets relative to their
	// due time: the emulator's own timing error.
	LatenessP50Us float64 `json:"lateness_p50_us"`
	LatenessP99Us float64 `json:"lateness_p99_us"`
	LatenessMaxUs float64 `json:"lateness_max_us"`
	// Realtime says whether the forwarder ran at SCHED_FIFO priority.
	Realtime bool `json:"realtime"`
	// DeviceDrops counts the packets the namespaces' TUN devices dropped
	// before the forwarder read them (a sender's data, a receiver's
	// ACKs): losses outside the emulated path, which the endpoints repair
	// as any other. Zero unless a burst outran the devices' queues
	// (netns.TxQueueLen); -1 if the counters could not be read.
	DeviceDrops int64 `json:"device_drops"`
}

// DeviceDropWarning is what a run whose TUN devices dropped packets should
// say of it (cclab emu, cclab compare, bench/emu), or "" for a clean run.
func (a *Accounting) DeviceDropWarning() string {
	if a.DeviceDrops <= 0 {
		return ""
	}
	return fmt.Sprintf("the namespaces' TUN devices dropped %d packets before the forwarder read them: losses outside the emulated path, which the simulator does not have (a burst beyond their %d-packet queues)", a.DeviceDrops, netns.TxQueueLen)
}

// backgroundTCP calls fn for each background entry that opens kernel TCP
// connections (tcp sources and flow arrivals), sequences' included, with
// its path from prefix (background[2].sequence[0]).
func backgroundTCP(bs []scenario.Background, prefix string, fn func(path string, b *scenario.Background)) {
	for i := range bs {
		b := &bs[i]
		p := fmt.Sprintf("%s[%d]", prefix, i)
		switch b.Type {
		case "tcp", "arrivals":
			fn(p, b)
		case "sequence":
			backgroundTCP(b.Sequence, p+".sequence", fn)
		}
	}
}

// Supported reports why a validated scenario cannot run on real endpoints,
// or nil. custom says measured flows use custom Endpoints (their
// controller is then theirs to check).
func Supported(s *scenario.Scenario, custom bool) error {
	var errs []error
	check := func(where string, c scenario.CC) {
		if cclabOnly(c.Name) {
			hint := "background TCP sources run on kernel TCP only: give them a kernel controller"
			if strings.HasPrefix(where, "flows[") {
				set := strings.NewReplacer("[", ".", "]", "").Replace(where)
				hint = fmt.Sprintf("run the flow on cclab's own transport over UDP, which takes every cclab controller, with stack: cclab (--set %s.stack=cclab)", set)
			}
			errs = append(errs, fmt.Errorf("%s.cc: %s is one of cclab's own controllers, not the kernel's (no module or BPF program provides it); %s", where, c.Name, hint))
			return
		}
		if len(c.Params) > 0 {
			errs = append(errs, fmt.Errorf("%s.cc: kernel controllers take no parameters, got %s; --cc %s runs the kernel's %s with its own defaults (cclab compare's --sim-set gives the simulator's side parameters)", where, c, c.Name, c.Name))
			return
		}
		if _, err := endpoint.KernelCC(c.Name); err != nil {
			errs = append(errs, fmt.Errorf("%s.cc: %w", where, err))
		}
	}
	for i, f := range s.Flows {
		p := fmt.Sprintf("flows[%d]", i)
		if f.Stack != "" && f.Stack != "kernel" {
			// Another stack checks its own flows when it makes them.
			if _, err := lookupStack(f.Stack); err != nil {
				errs = append(errs, fmt.Errorf("%s.stack: %w", p, err))
			}
			continue
		}
		if f.Protocol != "" && f.Protocol != "tcp" {
			errs = append(errs, fmt.Errorf("%s.protocol: the emulator runs kernel TCP only, got %q", p, f.Protocol))
		}
		if f.Coding != nil {
			errs = append(errs, fmt.Errorf("%s.coding: TCP/NC is simulator-only", p))
		}
		if !custom {
			check(p, f.CC)
		}
	}
	total := 0
	for _, f := range s.Flows {
		total += max(f.Count, 1)
	}
	if total > maxPerKind {
		errs = append(errs, tooManyFlows(s))
	}
	backgroundTCP(s.Background, "background", func(p string, b *scenario.Background) { check(p, b.CC) })
	if _, err := kernelECN(s); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// KernelRelease returns uname's release string.
func KernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// Details is a finished emulation's state, for outputs beyond the summary.
type Details struct {
	// Records holds every bottleneck packet's record when
	// Options.Record is set.
	Records []link.Record
	// Samples holds each measured flow's TCP_INFO readings, by flow.
	Samples map[string][]endpoint.Sample
	// Paths are the forwarder's paths (flows first, then background TCP
	// sources, then UDP sources) with their counters.
	Paths []*link.Path
	// Received is, for each path, what its receiving application got:
	// payload bytes for TCP, IP bytes for UDP.
	Received []int64
}

// emulation is one run in progress.
type emulation struct {
	s    *scenario.Scenario
	opt  Options
	pair *netns.Pair
	f    *link.Forwarder
	rnd  rng.Source
	end  clock.Time

	flows    []*flow
	sources  []*source
	spawners []*spawner
	segments []segment
	segIdx   int
	pending  int
	bulk     int
	bgScale  float64

	trRates  []float64
	trWindow time.Duration
	trIdx    int

	// stopWG waits for endpoint stops started on the loop.
	stopWG sync.WaitGroup

	// ctlChanges numbers Control's loss changes (their random streams);
	// ctlQueue is the queue limit Control set, if any.
	ctlChanges int
	ctlQueue   units.Bytes

	// ecn says the sending namespace asks for ECN (net.ipv4.tcp_ecn = 1).
	ecn bool
}

// flow is a measured flow.
type flow struct {
	name, group string
	cc          scenario.CC
	bytes       int64
	start, stop clock.Time
	path        *link.Path
	ep          Endpoints
	env         Env
	segMax      []time.Duration
	// ecn says the flow's kernel TCP asks for ECN (transport.ecn).
	ecn bool

	mu      sync.Mutex
	doneAt  clock.Time
	stopped bool
	stats   FlowStats
	err     error
}

func (fl *flow) stopOnce(e *emulation) {
	fl.mu.Lock()
	if fl.stopped {
		fl.mu.Unlock()
		return
	}
	fl.stopped = true
	fl.mu.Unlock()
	e.stopWG.Add(1)
	go func() {
		defer e.stopWG.Done()
		st, err := fl.ep.Stop()
		fl.mu.Lock()
		fl.stats, fl.err = st, err
		fl.mu.Unlock()
	}()
}

// Run emulates a validated scenario and summarises it. Cancelling ctx
// ends the run early (the summary covers the time run); the namespaces are
// removed in every case.
func Run(ctx context.Context, s *scenario.Scenario, opt Options) (*Result, *Details, error) {
	if err := Supported(s, opt.Endpoints != nil); err != nil {
		return nil, nil, err
	}
	if err := netns.Check(); err != nil {
		return nil, nil, err
	}
	if _, _, err := netns.CleanStale(); err != nil {
		return nil, nil, fmt.Errorf("removing stale namespaces: %w", err)
	}
	pair, err := netns.NewPair()
	if err != nil {
		return nil, nil, err
	}
	defer pair.Close()
	if t := s.Transport.SACK; t != nil && !*t {
		// tcp_sack is per network namespace, so this reaches only the
		// emulation's own kernels; both ends, as the simulator's option.
		for _, ns := range []*netns.NS{pair.Snd, pair.Rcv} {
			if err := ns.Sysctl("net.ipv4.tcp_sack", "0"); err != nil {
				return nil, nil, err
			}
		}
	}
	ecn, _ := kernelECN(s)
	if ecn {
		// tcp_ecn is per network namespace: 1 makes the sending kernel
		// ask for ECN on its connections (ECT on new data, the window
		// reduced on ECE). The receiving namespace keeps Linux's default,
		// 2, which accepts ECN when asked and echoes CE with ECE.
		if err := pair.Snd.Sysctl("net.ipv4.tcp_ecn", "1"); err != nil {
			return nil, nil, fmt.Errorf("transport.ecn: %w", err)
		}
	}
	e := &emulation{s: s, opt: opt, pair: pair, rnd: rng.New(s.Seed), end: clock.Time(s.Duration.V), bgScale: 1, ecn: ecn}
	f, err := link.New(pair.SndTUN, pair.RcvTUN, e.buildBottleneck)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	e.f = f
	f.Record = opt.Record
	f.NoRealtime = opt.NoRealtime
	type capture struct {
		name string
		pw   *pcapWriter
	}
	var captures []capture
	for _, c := range []struct {
		name string
		out  io.Writer
		hook *func(clock.Time, []byte)
	}{{"Pcap", opt.Pcap, &f.Capture}, {"PcapArrivals", opt.PcapArrivals, &f.CaptureArrival}, {"PcapDrops", opt.PcapDrops, &f.CaptureDrop}} {
		if c.out == nil {
			continue
		}
		pw, err := newPcap(c.out)
		if err != nil {
			return nil, nil, fmt.Errorf("the capture of Options.%s: %w", c.name, err)
		}
		*c.hook = pw.write
		captures = append(captures, capture{c.name, pw})
		defer pw.close() // on an early return; the run's end reports its error
	}
	f.OnRTT = e.onRTT
	defer e.closeAll()
	if err := e.build(); err != nil {
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, f.Stop)
	defer stop()
	ctl := &Control{e: e, ended: make(chan struct{})}
	if opt.OnStart != nil {
		opt.OnStart(ctl)
	}
	// The kernels' counters from here to the end of the run, before the
	// flows' sockets close (which counts aborts, not the run's work).
	kBefore, kErr := readPairCounters(pair)
	wallStart := time.Now()
	runErr := f.Run(e.end)
	close(ctl.ended)
	now := f.Now()
	var kc *KernelCounters
	if kErr == nil {
		if after, err := readPairCounters(pair); err == nil {
			kc = after.since(kBefore)
		}
	}
	e.stopEverything()
	e.stopWG.Wait()
	// Packets still propagating towards endpoints are counted in flight.
	inFlight := f.Drain()
	res := e.summarize(now, time.Since(wallStart), int64(inFlight))
	res.KernelCounters = kc
	res.Emulator.DeviceDrops = -1
	if d, err := readDeviceDrops(pair); err == nil {
		res.Emulator.DeviceDrops = d
	}
	run := &Details{Records: f.Records, Samples: map[string][]endpoint.Sample{}, Paths: f.Paths, Received: make([]int64, len(f.Paths))}
	for _, fl := range e.flows {
		run.Received[fl.path.Index] = fl.stats.Received
	}
	for _, sp := range e.spawners {
		run.Received[sp.path.Index] = sp.sink.Received()
	}
	for _, src := range e.sources {
		run.Received[src.path.Index] = src.sink.Bytes()
	}
	var errs []error
	for _, fl := range e.flows {
		run.Samples[fl.name] = fl.stats.Samples
		if fl.stats.Agent != nil {
			if res.Agents == nil {
				res.Agents = map[string]map[string]float64{}
			}
			res.Agents[fl.name] = fl.stats.Agent
		}
		if fl.err != nil {
			errs = append(errs, fmt.Errorf("flow %s: %w", fl.name, fl.err))
		}
	}
	if runErr != nil {
		errs = append(errs, runErr)
	}
	for _, c := range captures {
		if err := c.pw.close(); err != nil {
			errs = append(errs, fmt.Errorf("writing the capture of Options.%s: %w", c.name, err))
		}
	}
	return res, run, errors.Join(errs...)
}

// build registers every path, opens the receiving ends and schedules the
// run's events.
func (e *emulation) build() error {
	s := e.s
	for i := range s.Flows {
		if err := e.addFlows(&s.Flows[i]); err != nil {
			return err
		}
	}
	if err := e.addBackground(); err != nil {
		return err
	}
	e.buildSegments()
	for _, fl := range e.flows {
		fl.segMax = make([]time.Duration, len(e.segments))
	}
	e.scheduleChanges()
	return nil
}

func (e *emulation) addFlows(sf *scenario.Flow) error {
	spread := e.rnd.Stream("flows/" + sf.Name + "/start")
	for k := range sf.Count {
		name := sf.Name
		if sf.Count > 1 {
			name = fmt.Sprintf("%s-%d", sf.Name, k+1)
		}
		start := sf.Start.V
		if sf.StartSpread.V > 0 {
			start += time.Duration(spread.Int64N(int64(sf.StartSpread.V) + 1))
		}
		if len(e.flows) >= maxPerKind {
			return tooManyFlows(e.s)
		}
		spec := FlowSpec{Name: name, CC: sf.CC.Name, Bytes: int64(sf.Bytes.V), Flow: sf, LinkRate: e.s.Bottleneck.Rate.V, ECN: e.s.FlowECN(sf), Nagle: e.s.FlowNagle(sf)}
		var ep Endpoints
		if sf.Stack != "" && sf.Stack != "kernel" {
			mk, err := lookupStack(sf.Stack)
			if err != nil {
				return fmt.Errorf("flow %s: %w", name, err)
			}
			if ep, err = mk(spec); err != nil {
				return fmt.Errorf("flow %s: %w", name, err)
			}
		} else if e.opt.Endpoints != nil {
			var err error
			if ep, err = e.opt.Endpoints(spec); err != nil {
				return fmt.Errorf("flow %s: %w", name, err)
			}
		} else {
			kcc, err := endpoint.KernelCC(sf.CC.Name)
			if err != nil {
				return fmt.Errorf("flow %s: %w", name, err)
			}
			spec.CC = kcc
			ep = KernelTCP(spec)
		}
		port := uint16(flowPort + len(e.flows))
		path, err := e.f.AddPath(ep.Proto(), port, sf.ExtraDelay.V)
		if err != nil {
			return err
		}
		if sf.Loss != nil {
			if path.LastHop, err = buildLoss(e.rnd, *sf.Loss, "flow/"+name+"/lasthop"); err != nil {
				return fmt.Errorf("flow %s: %w", name, err)
			}
			// Further lossy hops in series (loss_hops), with the
			// simulator's stream names.
			if sf.LossHops > 1 {
				hops := lossHops{path.LastHop}
				for h := 2; h <= sf.LossHops; h++ {
					m, err := buildLoss(e.rnd, *sf.Loss, fmt.Sprintf("flow/%s/lasthop/%d", name, h))
					if err != nil {
						return fmt.Errorf("flow %s: %w", name, err)
					}
					hops = append(hops, m)
				}
				path.LastHop = hops
			}
		}
		fl := &flow{
			name: name, group: sf.Name, cc: sf.CC, bytes: int64(sf.Bytes.V),
			ecn:   (sf.Stack == "" || sf.Stack == "kernel") && ep.Proto() == link.TCP && (e.ecn || cc.NeedsECN(sf.CC.Name)),
			start: clock.Time(start), stop: clock.Never, path: path, ep: ep, doneAt: clock.Never,
		}
		if sf.Stop.V > 0 {
			fl.stop = clock.Time(sf.Stop.V)
		}
		fl.env = Env{
			Snd: e.pair.Snd, Rcv: e.pair.Rcv, Dst: netip.AddrPortFrom(netns.RcvAddr, port),
			Clock: e.f, Sample: e.s.Sample.V, Done: e.doneFunc(fl),
			OnRTT: func(rtt time.Duration) {
				e.f.Post(func(now clock.Time) {
					path.RTT.Add(rtt)
					e.onRTT(path, now, rtt)
				})
			},
		}
		if err := ep.Listen(fl.env); err != nil {
			return fmt.Errorf("flow %s: %w", name, err)
		}
		e.flows = append(e.flows, fl)
		if fl.bytes > 0 {
			e.pending++
		} else {
			e.bulk++
		}
		e.f.S.Timer(func(clock.Time) { ep.Start(fl.env) }).Reset(fl.start)
		if fl.stop != clock.Never {
			e.f.S.Timer(func(clock.Time) { fl.stopOnce(e) }).Reset(fl.stop)
		}
	}
	return nil
}

// doneFunc records a finite flow's completion and ends the run when every
// measured finite flow is done and there is no bulk flow, as the simulator
// does.
func (e *emulation) doneFunc(fl *flow) func(at clock.Time) {
	return func(at clock.Time) {
		fl.mu.Lock()
		first := fl.doneAt == clock.Never
		if first {
			fl.doneAt = at
		}
		fl.mu.Unlock()
		if !first {
			return
		}
		e.f.Post(func(clock.Time) {
			e.pending--
			if e.pending == 0 && e.bulk == 0 {
				e.f.Stop()
			}
		})
	}
}

func (e *emulation) onRTT(p *link.Path, now clock.Time, rtt time.Duration) {
	if int(p.Index) >= len(e.flows) {
		return
	}
	fl := e.flows[p.Index]
	if fl.path != p {
		return
	}
	if rtt > fl.segMax[e.segIdx] {
		fl.segMax[e.segIdx] = rtt
	}
}

// stopEverything stops every endpoint and source after the run.
func (e *emulation) stopEverything() {
	for _, fl := range e.flows {
		fl.stopOnce(e)
	}
	for _, sp := range e.spawners {
		sp.stopAll()
	}
}

// closeAll releases sockets (idempotent; deferred for error paths).
func (e *emulation) closeAll() {
	for _, fl := range e.flows {
		fl.stopOnce(e)
	}
	for _, src := range e.sources {
		src.close()
	}
	for _, sp := range e.spawners {
		sp.stopAll()
		sp.close()
	}
	e.stopWG.Wait()
}

// cclabOnly reports whether a controller is cclab's own, one no kernel
// has: fixed and external take their window from cclab (a schedule, an
// agent).
func cclabOnly(name string) bool { return name == "fixed" || name == "external" }

// tooManyFlows is the error for a scenario with more measured flows than
// the emulator has receiver ports for, naming the flows' count fields.
func tooManyFlows(s *scenario.Scenario) error {
	total := 0
	var fields []string
	for i, f := range s.Flows {
		n := max(f.Count, 1)
		total += n
		if f.Count > 1 {
			fields = append(fields, fmt.Sprintf("flows[%d].count (%d)", i, f.Count))
		} else {
			fields = append(fields, fmt.Sprintf("flows[%d] (1)", i))
		}
	}
	if len(fields) > 4 {
		fields = append(fields[:4], "...")
	}
	return fmt.Errorf("%s: the emulator runs at most %d measured flows, got %d: the forwarder tells flows apart by their receiver ports, %d-%d", strings.Join(fields, ", "), maxPerKind, total, flowPort, flowPort+maxPerKind-1)
}

// OwnNamespaces returns the cclab namespaces this process made that still
// exist: none once Run has returned, unless removing them failed.
func OwnNamespaces() ([]string, error) {
	names, err := netns.List()
	if err != nil {
		return nil, err
	}
	var own []string
	for _, n := range names {
		if pid, ok := netns.Owner(n); ok && pid == os.Getpid() {
			own = append(own, n)
		}
	}
	return own, nil
}
