// Package scenario defines cclab's experiment description, its YAML file
// format and its validation. A Scenario is plain data: the simulator builds a
// network from it, sweeps and tuners modify it with Set, and learning
// environments construct it in code.
//
// Quantities with units (rates, sizes, durations) are kept as the text the
// user wrote until Validate parses them, so that every error can name the
// file, line and field it comes from.
package scenario

import (
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/core/units"
)

// Scenario is one experiment: a dumbbell with a bottleneck, flows and
// background traffic.
type Scenario struct {
	// Name identifies the scenario in outputs.
	Name string `yaml:"name"`
	// Seed derives every random stream of the run.
	Seed uint64 `yaml:"seed"`
	// Duration ends the run; it also ends earlier once every finite flow
	// has completed and no bulk flow exists [60s].
	Duration Duration `yaml:"duration"`
	// Sample is the time-series interval; 0 disables time series unless an
	// output directory asks for them [0].
	Sample Duration `yaml:"sample"`
	// Bottleneck is the shared link.
	Bottleneck Link `yaml:"bottleneck"`
	// Transport holds defaults for every flow's transport.
	Transport Transport `yaml:"transport"`
	// Flows are the measured transport flows.
	Flows []Flow `yaml:"flows"`
	// Background are competing traffic sources (issue: background traffic).
	Background []Background `yaml:"background"`
	// Profile "linux" turns on, wherever the scenario leaves them unset,
	// the Linux 6.18 behaviours that the simulator offers as options
	// rather than defaults (WithProfile); "" or "default" changes nothing.
	Profile string `yaml:"profile"`

	// dir is the directory of the scenario file, for relative paths.
	dir string
}

// Link describes the bottleneck.
type Link struct {
	// Rate is the serialisation rate ("1Mbps"); exclusive with Trace.
	Rate Rate `yaml:"rate"`
	// Delay is the one-way propagation delay.
	Delay Duration `yaml:"delay"`
	// Queue is the queue discipline.
	Queue Queue `yaml:"queue"`
	// Loss is the random-loss model applied to packets leaving the link.
	Loss Loss `yaml:"loss"`
	// Trace is a Mahimahi trace file; relative paths are relative to the
	// scenario file.
	Trace string `yaml:"trace"`
	// TraceMode is "exact" (per-packet delivery opportunities) or "average"
	// (the rate averaged over TraceWindow, as the Vegas/NSGA-II paper does)
	// [exact].
	TraceMode string `yaml:"trace_mode"`
	// TraceWindow is the averaging window in average mode [100ms].
	TraceWindow Duration `yaml:"trace_window"`
	// TraceStart starts the trace this far into it [0s].
	TraceStart Duration `yaml:"trace_start"`
	// TraceLength, if set, cuts the trace to [TraceStart,
	// TraceStart+TraceLength) and loops that piece (the paper's 120 s
	// pieces).
	TraceLength Duration `yaml:"trace_length"`
	// Schedule changes the link at given times.
	Schedule []Change `yaml:"schedule"`
	// SerializeAcks gives each ACK its transmission time at the link's
	// current rate on the way back (no queueing: the reverse direction
	// stays uncongested), as on ns-3's full-duplex point-to-point link;
	// a zero rate (a trace in exact mode, an averaged window without
	// capacity) adds nothing [false].
	SerializeAcks bool `yaml:"serialize_acks"`
	// AckJitter delays each ACK on its way back by a further uniform
	// random time in [0, AckJitter), keeping each flow's ACKs in order:
	// the timing noise of real hosts and forwarders, which moves each
	// sender's transmissions off the instants the bottleneck's departures
	// clock them at. Without it many flows sharing a DropTail queue keep
	// a fixed phase against its departures (Floyd and Jacobson's phase
	// effects; ns-2's TCP overhead_ was added against them), and a flow
	// whose ACK freed a place in a full queue takes it [0: none]. The
	// emulator ignores it: its kernel paths have their own.
	AckJitter Duration `yaml:"ack_jitter"`
	// AckReadDelay delays each ACK of in-order data on its way back by
	// this much more, keeping each flow's ACKs in order: a Linux receiver
	// sends that ACK at once only if its advertised window can advance
	// (__tcp_ack_snd_check), and otherwise when its application has read
	// the data (tcp_recvmsg's tcp_cleanup_rbuf), tens of microseconds
	// later; an ACK of out-of-order data, which carries SACK blocks, the
	// one that fills the hole and the SYN-ACK leave at once. So the
	// segments a flow's in-order ACKs release reach a shared queue later,
	// against its departures, than the retransmissions its duplicate ACKs
	// release [0: none]. The emulator ignores it: its receivers are
	// Linux's own.
	AckReadDelay Duration `yaml:"ack_read_delay"`
	// AckReadShare is the share of ACKs of in-order data that wait
	// AckReadDelay, drawn from the scenario's seed for each: a receiver
	// whose application is already reading acknowledges at once. Through
	// the emulator here three quarters waited with 40 flows at 40 Mbit/s,
	// a third with 100 at 100 Mbit/s [1: all].
	AckReadShare *float64 `yaml:"ack_read_share"`

	// traceModeDefault is the TraceMode Validate filled in, derived again
	// by a later Validate while unchanged (see Loss.modelDefault).
	traceModeDefault string
}

// Queue describes a queue discipline.
type Queue struct {
	// Discipline is droptail, red or codel [droptail].
	Discipline string `yaml:"discipline"`
	// Limit is a packet count ("100") or a size ("150KB") [100 packets; for
	// codel and red 1000 packets].
	Limit Size `yaml:"limit"`
	// MinTh, MaxTh (packets), MaxP and Wq are RED's parameters (see
	// queue.REDConfig for defaults).
	MinTh float64 `yaml:"min_th"`
	MaxTh float64 `yaml:"max_th"`
	MaxP  float64 `yaml:"max_p"`
	Wq    float64 `yaml:"w_q"`
	// Target and Interval are CoDel's parameters [5ms, 100ms].
	Target   Duration `yaml:"target"`
	Interval Duration `yaml:"interval"`
	// ECN, with red or codel, marks ECN-capable packets CE where the
	// discipline would drop them early (RFC 3168; Linux's `ecn` option of
	// both) [false].
	ECN bool `yaml:"ecn"`
	// MarkThreshold, with droptail, marks ECN-capable packets CE when the
	// queue they join holds at least this many packets ("20") or bytes
	// ("30KB"): DCTCP's step marking (RFC 8257 §3.1) [none].
	MarkThreshold Size `yaml:"mark_threshold"`

	// limitDefault is the Limit Validate filled in from Discipline.
	limitDefault string
}

// Loss describes a random-loss model.
type Loss struct {
	// Model is none, bernoulli or gilbert-elliott [none, or bernoulli when
	// p is given].
	Model string `yaml:"model"`
	// P is Bernoulli's loss probability, or Gilbert-Elliott's Good->Bad
	// transition probability.
	P float64 `yaml:"p"`
	// R is Gilbert-Elliott's Bad->Good transition probability.
	R float64 `yaml:"r"`
	// LossGood and LossBad are Gilbert-Elliott's per-state loss
	// probabilities [0, 1].
	LossGood float64  `yaml:"loss_good"`
	LossBad  *float64 `yaml:"loss_bad"`

	// modelDefault is the Model Validate filled in (none, or bernoulli
	// from p). While Model still holds it, a later Validate derives it
	// again: a value set on a validated scenario (a sweep's grid and a
	// tuner's parameters modify clones of a validated base) must behave as
	// on the file, where bottleneck.loss.p=0.01 makes the default
	// bernoulli, as with run --set.
	modelDefault string
}

// Change is one entry of a link schedule; unset fields keep their value.
type Change struct {
	// At is when the change happens.
	At Duration `yaml:"at"`
	// Rate, Delay, Loss and Queue replace the link's.
	Rate  Rate     `yaml:"rate"`
	Delay Duration `yaml:"delay"`
	Loss  *Loss    `yaml:"loss"`
	Queue *Queue   `yaml:"queue"`
	// Window re-sets the window of flows using the fixed controller (the
	// Mockets baseline matched to the new link).
	Window Size `yaml:"window"`
	// ScaleBackground multiplies the rates of UDP background sources from
	// now on (background traffic adapting to the new link) [unchanged].
	ScaleBackground float64 `yaml:"scale_background"`
	// StopBackground names background sources that stop at this change.
	StopBackground []string `yaml:"stop_background"`
}

// Transport holds transport settings; zero values mean the tcp package's
// defaults (MSS 1448, delayed ACKs, min RTO 200 ms).
type Transport struct {
	MSS Size `yaml:"mss"`
	// Header is the bytes each packet carries besides its payload: TCP/IP
	// headers and any link framing [52B]. ns-3's point-to-point links add
	// a 2-byte PPP header (54B mirrors them).
	Header Size `yaml:"header"`
	// SynOptions is the bytes a SYN or SYN-ACK carries beyond Header [8B:
	// Linux's MSS, SACK-permitted and window-scale options; ns-3's SYN has
	// no MSS option, 4B].
	SynOptions    Size     `yaml:"syn_options"`
	DelayedAck    *bool    `yaml:"delayed_ack"`
	DelAckTimeout Duration `yaml:"delack_timeout"`
	MinRTO        Duration `yaml:"min_rto"`
	InitialRTO    Duration `yaml:"initial_rto"`
	MaxRTO        Duration `yaml:"max_rto"`
	// TimeoutMin is Linux's TCP_TIMEOUT_MIN, two ticks of the kernel's
	// clock, which the tail loss probe's timeout adds to 2 SRTT when more
	// than one segment is out (tcp.Config.TimeoutMin) [2ms: HZ=1000; 8ms
	// at HZ=250, this machine's kernel].
	TimeoutMin Duration `yaml:"timeout_min"`
	// KernelHZ, if positive, makes the retransmission, loss-probe,
	// reordering and delayed-ACK timers expire as on Linux's timer wheel
	// with that many ticks a second (tcp.Sender.UseKernelTimers; this
	// machine's kernel: 250), with TimeoutMin best left at 2ms then
	// (Linux 6.18 adds 2 ms and the wheel the ticks); 0 keeps exact
	// deadlines, also against profile linux-host's wheel and, in a flow,
	// against the scenario's [unset: exact deadlines unless a profile or
	// the scenario sets it].
	KernelHZ *int `yaml:"kernel_hz"`
	// KernelPhase is where the wheel's jiffy counter stood at the run's
	// time zero, as a time (jiffies times the tick): a host's jiffies at
	// an experiment's start are arbitrary, and where the start falls in a
	// granule moves timeouts armed together (docs/fidelity.md, "The
	// wheel's phase"). One host's endpoints share it, so it is the
	// scenario's only [unset: drawn from the run's seed, uniform over
	// [0s, KernelPhaseMax); 0s: the counter at 0, as every run before 6
	// December 2026 had].
	KernelPhase Duration `yaml:"kernel_phase"`
	// SACKCompression true makes the receiver compress SACKs as Linux
	// does by default (net.ipv4.tcp_comp_sack_*; tcp.Receiver.
	// UseSACKCompression): while a hole persists, the first three
	// out-of-order segments are acknowledged at once, later ones by one
	// ACK after min(1 ms, RTT/20) or 44 of them [false: every
	// out-of-order segment at once, as RFC 5681 asks; profile linux-host:
	// true].
	SACKCompression *bool `yaml:"sack_compression"`
	DupThresh       int   `yaml:"dupthresh"`
	// SACKTimeout makes the receiver acknowledge on a timer only (the
	// Mockets policy); flows with protocol mockets default to 20ms.
	SACKTimeout Duration `yaml:"sack_timeout"`
	RecvWindow  Size     `yaml:"recv_window"`
	// PendingQueue bounds the bytes the sender holds, unacknowledged plus
	// not yet sent, as a send buffer [unlimited]; see docs/scenarios.md
	// for how it relates to Mockets' pending packet queue.
	PendingQueue Size `yaml:"pending_queue"`
	// SendBuffer "linux" bounds the bytes the sender holds unacknowledged
	// by Linux 6.18's autotuned send buffer (tcp_sndbuf_expand) instead of
	// a fixed pending_queue (tcp.Config.SendBufferLinux) ["none": no
	// bound].
	SendBuffer string `yaml:"send_buffer"`
	// SACK false turns selective acknowledgements off: cumulative ACKs and
	// NewReno recovery (RFC 6582), the Reno-style TCP of the TCP/NC
	// paper's analysis [true].
	SACK *bool `yaml:"sack"`
	// QuickAck false turns off Linux's quick-ACK mode (every segment
	// acknowledged at a connection's start) [true].
	QuickAck *bool `yaml:"quick_ack"`
	// AckFirst true acknowledges a connection's first data segment at
	// once even with quick_ack false, as ns-3.37's receiver does [false].
	AckFirst *bool `yaml:"ack_first"`
	// HandshakeAck true makes the sender send the handshake's final ACK, a
	// header-only packet, before its first data segment, as TCP does, so it
	// takes its turn on the bottleneck [false: data completes the
	// handshake].
	HandshakeAck *bool `yaml:"handshake_ack"`
	// TLP false turns off Tail Loss Probes (RFC 8985 §7) [true].
	TLP *bool `yaml:"tlp"`
	// RTO "rfc6298" floors the whole RTO at min_rto (RFC 6298 §2.4)
	// instead of Linux's SRTT + max(4 RTTVAR, min_rto) ["linux"].
	RTO string `yaml:"rto"`
	// ECN true makes the flow ECN-capable (RFC 3168), as Linux's
	// net.ipv4.tcp_ecn = 1: its new data segments carry ECT, its receiver
	// echoes CE marks with ECE until the sender's CWR, and the sender
	// reduces its window once per window of data on ECE (Linux's CWR
	// state: the controller's reduction, paced by PRR, no retransmission).
	// A controller that needs ECN (dctcp) turns it on whatever this says
	// [false: Linux's default, which answers ECN but does not ask for it].
	ECN *bool `yaml:"ecn"`
	// FRTO false turns off F-RTO's spurious-timeout detection and undo
	// (RFC 5682) [true].
	FRTO *bool `yaml:"frto"`
	// RACK false turns off RACK's time-based loss detection of original
	// transmissions (RFC 8985 §6) [true].
	RACK *bool `yaml:"rack"`
	// LostRetransmissions is how a lost retransmission is found: "gap", a
	// segment sent a quarter of the minimum RTT after it is delivered, or
	// "rack", Linux's RACK time rule with the reordering timer ["gap"].
	LostRetransmissions string `yaml:"lost_retransmissions"`
	// SRTTSample is which segment an ACK's RTT sample for the RTO
	// estimator times: "newest", the most recently sent one it newly
	// acknowledges, or "oldest", Linux's (tcp.Config.OldestRTTSample)
	// ["newest"].
	SRTTSample string `yaml:"srtt_sample"`
	// PRR is how fast recovery paces its window reduction: "rfc6937", as
	// the RFC writes it, or "linux", as Linux 6.18's tcp_cwnd_reduction
	// does (tcp.Config.LinuxPRR) ["rfc6937"].
	PRR string `yaml:"prr"`
	// RACKTimer is when RACK's reordering timer fires: "earliest", at the
	// first waiting segment's deadline, re-arming for the next, or
	// "linux", at the latest one plus timeout_min, at most an RTO ahead,
	// without re-arming itself, as Linux 6.18's tcp_rack_mark_lost and
	// tcp_rack_reo_timeout (tcp.Config.LinuxRACKTimer) ["earliest"].
	RACKTimer string `yaml:"rack_timer"`
	// Pacing is how a controller Linux paces inside TCP (BBR; the fixed
	// and external controllers' rates are always paced per segment)
	// spaces its sends: "segment", each segment after the previous one's
	// whole packet at the pacing rate, or "linux", as Linux 6.18's
	// internal pacing, in
	// sends of tcp_tso_segs segments spaced by their payload's time less
	// up to half of it for lateness, the first ten segments unpaced and a
	// short send deferred to the next ACK while the window is nearly
	// full (tcp.Config.LinuxPacing) ["segment"].
	Pacing string `yaml:"pacing"`
	// RecoveryStart is when fast recovery starts: "new_loss", on an ACK
	// in the open state that marks a segment lost, or "linux", on any ACK
	// in the open state while a segment marked lost is not yet delivered,
	// so a recovery that ends with segments lost while it ran starts the
	// next on the same ACK, as Linux 6.18's tcp_time_to_recover, and a
	// timeout's loss state turns into recovery when RACK finds a
	// retransmission lost or its reordering timer marks a segment
	// (tcp.Config.LinuxRecoveryStart) ["new_loss"].
	RecoveryStart string `yaml:"recovery_start"`
	// WindowGrowth is which ACKs may grow the congestion window:
	// "delivered", any ACK that delivers data, cumulatively or by SACK, or
	// "linux", as Linux 6.18's tcp_cong_control, only one that newly
	// acknowledges data cumulatively (an ACK that only SACKs leaves the
	// window), with the open state's Disorder reported to the controllers
	// that follow Linux's set_state hook (Hybla grows by Reno's rule
	// there, Vegas pauses) (tcp.Config.LinuxWindowGrowth) ["delivered"].
	WindowGrowth string `yaml:"window_growth"`
	// CwndLimited is how the sender decides that the window was used,
	// which the controllers' growth rules require: "last_send", by why
	// its latest send stopped (the congestion window, or the peer's
	// window in slow start while the window was below twice the data in
	// flight), or "linux", as Linux 6.18's tcp_cwnd_validate and
	// tcp_is_cwnd_limited, a send that filled the window counting for
	// the window of data sent by then whatever stops the sends after it,
	// and slow start's window counting as used while below twice the
	// packets out (tcp.Config.LinuxCwndLimited) ["last_send"].
	CwndLimited string `yaml:"cwnd_limited"`
	// TLPTimer is when the tail loss probe goes if the RTO would come
	// first: "rto_first", not at all (the RTO fires), or "linux", in the
	// RTO's place, as Linux 6.18's one retransmission timer arms it (the
	// earlier of the PTO and the RTO, the RTO counted after a send from
	// the first unacknowledged segment's transmission), the RTO armed
	// afresh after the probe (tcp.Config.LinuxTLPTimer) ["rto_first"].
	TLPTimer string `yaml:"tlp_timer"`
	// ReceiveWindow "linux" models Linux 6.18's receive window on the
	// receiver: autotuning raises the window clamp once per RTT, the window
	// grows by two segments per segment up to it, and every segment that
	// grows it is acknowledged at once (tcp.Config.LinuxReceiveWindow)
	// ["none": no receive-window model].
	ReceiveWindow string `yaml:"receive_window"`
	// Nagle true models a sending application that leaves Nagle's
	// algorithm on (no TCP_NODELAY): with receive_window linux, a send
	// that reaches the peer's window edge keeps its partial segment back
	// while another short segment is unacknowledged (Linux's
	// tcp_nagle_check with Minshall's rule; tcp.Sender.UseNagle); the
	// emulator's kernel senders then clear TCP_NODELAY [false: the partial
	// segment goes, as with TCP_NODELAY, which Go sets on every TCP socket
	// and so on the emulator's kernel senders].
	Nagle *bool `yaml:"nagle"`
	// PacketTimers gives every unacknowledged packet its own retransmission
	// timeout and turns off SACK-based loss detection, as Mockets does;
	// flows with protocol mockets default to true, tcp flows to false.
	PacketTimers *bool `yaml:"packet_timers"`
}

// Flow is a measured transport flow (or Count identical ones).
type Flow struct {
	// Name labels the flow; with Count > 1, flows are named name-1, ...
	Name string `yaml:"name"`
	// CC is the congestion controller, a name or {name: ..., param: value}.
	CC CC `yaml:"cc"`
	// Bytes is the transfer size; unset means a bulk flow.
	Bytes Size `yaml:"bytes"`
	// Start and Stop bound the flow's activity [0s, end of run].
	Start Duration `yaml:"start"`
	Stop  Duration `yaml:"stop"`
	// Count replicates the flow [1].
	Count int `yaml:"count"`
	// StartSpread spreads the replicas' start times uniformly at random
	// over [Start, Start+StartSpread] [0: all start together]. Replicas
	// that start in the same nanosecond send their SYNs and initial
	// windows in one burst and then time out in lockstep, which real
	// hosts never do.
	StartSpread Duration `yaml:"start_spread"`
	// ExtraDelay is added to the flow's one-way delay in each direction (a
	// receiver-side access link), so flows can have different RTTs.
	ExtraDelay Duration `yaml:"extra_delay"`
	// Loss is a random-loss model on the flow's last hop (after the
	// bottleneck), e.g. wireless erasures.
	Loss *Loss `yaml:"loss"`
	// LossHops applies Loss independently on this many lossy hops in
	// series after the bottleneck (a daisy chain of wireless links
	// without re-encoding, TCP/NC's 4-hop example: end-to-end loss
	// 1-(1-q)^hops) [1].
	LossHops int `yaml:"loss_hops"`
	// Transport overrides the scenario's transport defaults.
	Transport *Transport `yaml:"transport"`
	// Coding enables TCP/NC (network coding below TCP).
	Coding *Coding `yaml:"coding"`
	// Protocol is "tcp" (default) or "mockets": the MARLIN partnering
	// protocol, a message transport whose receiver sends selective
	// acknowledgements on a timeout (transport.sack_timeout, default 20ms)
	// and whose window is set by its controller (fixed or external), never
	// by slow start.
	Protocol string `yaml:"protocol"`
	// Stack chooses the flow's endpoints under `cclab emu`: "kernel" (the
	// default there: Linux TCP with the flow's controller) or "cclab"
	// (cclab's own transport over UDP, transport/udp, with any registered
	// controller, Mockets or TCP/NC). The simulator ignores it.
	Stack string `yaml:"stack"`
	// Agent, with stack cclab, drives the flow from a policy: "marlin"
	// (the shipped MARLIN policy in process) or the address of `cclab
	// agent serve` (host:port or unix:PATH). The simulator ignores it.
	Agent string `yaml:"agent"`
	// Target and Mode, with agent deepcc[:GOAL], run DeepCC's online goal
	// tuner, as `cclab send --target/--mode` do: Target is the
	// requirement "MBPS,DELAY_MS,LOSS" (minimum throughput, maximum
	// queueing delay p95, maximum loss fraction; 0 = no bound), Mode a
	// preference, low-delay or high-throughput (one of the two). The
	// simulator ignores them.
	Target string `yaml:"target"`
	Mode   string `yaml:"mode"`
}

// Coding configures the TCP/NC layer.
type Coding struct {
	// Redundancy is R, coded packets sent per packet from TCP (>= 1).
	Redundancy float64 `yaml:"redundancy"`
	// Window is the coding window's maximum size in packets [1000].
	Window int `yaml:"window"`
	// Payload makes the coding layer code real bytes and check the decoded
	// bytes (slower; for tests).
	Payload bool `yaml:"payload"`
}

// Background is a competing traffic source.
type Background struct {
	// Name labels the source.
	Name string `yaml:"name"`
	// Type is cbr, poisson, onoff, mice, tcp, arrivals or sequence.
	Type string `yaml:"type"`
	// Rate is the sending rate of cbr and poisson sources, or the "on"
	// rate of onoff.
	Rate Rate `yaml:"rate"`
	// Size is the packet size for UDP sources [1500B], or the burst size of
	// mice, or the flow size of arrivals when no distribution is given.
	Size Size `yaml:"size"`
	// Start and Stop bound the source's activity; inside a sequence they
	// are offsets within the period.
	Start Duration `yaml:"start"`
	Stop  Duration `yaml:"stop"`
	// On and Off are the durations of an onoff cycle.
	On  Duration `yaml:"on"`
	Off Duration `yaml:"off"`
	// Interval is the mean time between mice bursts or flow arrivals.
	Interval Duration `yaml:"interval"`
	// Burst is the duration of a mice burst (sent at Rate).
	Burst Duration `yaml:"burst"`
	// CC is the controller of tcp and arrivals sources.
	CC CC `yaml:"cc"`
	// Bytes is the transfer size of a tcp source (unset: bulk).
	Bytes Size `yaml:"bytes"`
	// Count replicates the source [1].
	Count int `yaml:"count"`
	// ExtraDelay is as for flows.
	ExtraDelay Duration `yaml:"extra_delay"`
	// Sizes names a flow-size distribution for arrivals: a file with an
	// empirical CDF ("size_bytes cdf" per line) or "websearch"/"datamining".
	Sizes string `yaml:"sizes"`
	// Load is the offered load of arrivals as a fraction of the bottleneck
	// rate; it sets Interval from the mean flow size.
	Load float64 `yaml:"load"`
	// Period repeats a sequence source every Period.
	Period Duration `yaml:"period"`
	// Sequence lists the parts of a repeating pattern.
	Sequence []Background `yaml:"sequence"`
}

// CC names a congestion controller with optional parameters. In YAML it is
// either a string ("cubic") or a mapping ({name: vegas, alpha: 2}).
type CC struct {
	Name   string
	Params map[string]float64
}

// Rate is a bandwidth written with a unit ("256kbps").
type Rate struct {
	Raw string
	V   units.Bandwidth
}

// Size is a byte count ("150KB") or, where a field allows it, a bare
// packet count ("100").
type Size struct {
	Raw string
	V   units.Bytes
	// Packets is set instead of V when the field accepts packet counts
	// and the value had no unit.
	Packets int
}

// Duration is a Go-style duration ("500ms").
type Duration struct {
	Raw string
	V   time.Duration
}

// IsSet reports whether a value was given.
func (r Rate) IsSet() bool { return r.Raw != "" }

// IsSet reports whether a value was given.
func (s Size) IsSet() bool { return s.Raw != "" }

// IsSet reports whether a value was given.
func (d Duration) IsSet() bool { return d.Raw != "" }

// Dur returns a Duration holding d, for scenarios built in code.
func Dur(d time.Duration) Duration { return Duration{Raw: d.String(), V: d} }

// RateOf returns a Rate holding r.
func RateOf(r units.Bandwidth) Rate { return Rate{Raw: r.String(), V: r} }

// SizeOf returns a Size holding b bytes.
func SizeOf(b units.Bytes) Size { return Size{Raw: b.String(), V: b} }

// PacketsOf returns a Size holding a count of n packets, as a queue limit
// written without a unit.
func PacketsOf(n int) Size { return Size{Raw: strconv.Itoa(n), Packets: n} }

// rawScalar turns a YAML scalar's bytes into the text the user wrote.
func rawScalar(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		s = s[1 : len(s)-1]
	}
	return s
}

// UnmarshalYAML keeps the raw text; Validate parses it.
func (r *Rate) UnmarshalYAML(b []byte) error { r.Raw = rawScalar(b); return nil }

// UnmarshalYAML keeps the raw text; Validate parses it.
func (s *Size) UnmarshalYAML(b []byte) error { s.Raw = rawScalar(b); return nil }

// UnmarshalYAML keeps the raw text; Validate parses it.
func (d *Duration) UnmarshalYAML(b []byte) error { d.Raw = rawScalar(b); return nil }

// IsZero reports an unset value, so that the resolved scenario written
// next to a run's results leaves it out instead of writing "".
func (r Rate) IsZero() bool { return r.Raw == "" }

// IsZero reports an unset value (see Rate.IsZero).
func (s Size) IsZero() bool { return s.Raw == "" }

// IsZero reports an unset value (see Rate.IsZero).
func (d Duration) IsZero() bool { return d.Raw == "" }

// MarshalYAML writes the raw text back.
func (r Rate) MarshalYAML() (any, error) { return r.Raw, nil }

// MarshalYAML writes the raw text back.
func (s Size) MarshalYAML() (any, error) { return s.Raw, nil }

// MarshalYAML writes the raw text back.
func (d Duration) MarshalYAML() (any, error) { return d.Raw, nil }

// MarshalYAML writes a bare name when there are no parameters.
func (c CC) MarshalYAML() (any, error) {
	if len(c.Params) == 0 {
		return c.Name, nil
	}
	m := map[string]any{"name": c.Name}
	for k, v := range c.Params {
		m[k] = v
	}
	return m, nil
}

// String formats the controller as "name" or "name(k=v,...)".
func (c CC) String() string {
	if len(c.Params) == 0 {
		return c.Name
	}
	keys := make([]string, 0, len(c.Params))
	for k := range c.Params {
		keys = append(keys, k)
	}
	sortStrings(keys)
	var b strings.Builder
	b.WriteString(c.Name)
	b.WriteByte('(')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(formatFloat(c.Params[k]))
	}
	b.WriteByte(')')
	return b.String()
}
