package scenario

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/trace"
)

// Error is a validation error at a field path such as "flows[0].cc". Load
// turns the path into a file position.
type Error struct {
	// Path is the field's location in goccy/go-yaml path syntax without the
	// leading "$.".
	Path string
	// Msg says what is wrong and what is accepted.
	Msg string
	// File, Line and Column are set when the scenario came from a file.
	File         string
	Line, Column int
	// Origin, when set, names the override that put the value there
	// ("--set bottleneck.loss.p=2"): the file's line would point at the
	// value it replaced.
	Origin string
}

func (e *Error) Error() string {
	switch {
	case e.Origin != "":
		return fmt.Sprintf("%s: %s: %s", e.Origin, e.Path, e.Msg)
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Column, e.Path, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s: %s", e.File, e.Path, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

func errf(path, format string, args ...any) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Defaults used when a field is absent.
const (
	DefaultDuration    = 60 * time.Second
	DefaultQueueLimit  = 100
	DefaultTraceWindow = 100 * time.Millisecond
	// DefaultMSS and DefaultHeader are the transport's segment payload and
	// per-packet overhead when transport.mss and header are absent (the
	// transport's own defaults, transport/tcp's Config.WithDefaults).
	DefaultMSS    units.Bytes = 1448
	DefaultHeader units.Bytes = 52
)

// Validate parses every unit-bearing field, fills in defaults and checks
// every value, returning the first problem as an *Error. It must be called
// (again) after any modification with Set.
func (s *Scenario) Validate() error {
	if s.Name == "" {
		s.Name = "unnamed"
	}
	if err := parseDuration(&s.Duration, "duration", false); err != nil {
		return err
	}
	if !s.Duration.IsSet() {
		s.Duration = Dur(DefaultDuration)
	}
	if s.Duration.V <= 0 {
		return errf("duration", "must be positive, got %q", s.Duration.Raw)
	}
	if err := parseDuration(&s.Sample, "sample", false); err != nil {
		return err
	}
	if err := s.validateLink(); err != nil {
		return err
	}
	if err := validateTransport(&s.Transport, "transport"); err != nil {
		return err
	}
	if !KnownProfile(s.Profile) {
		return errf("profile", "must be %s, got %q", ProfileNames, s.Profile)
	}
	if len(s.Flows) == 0 && len(s.Background) == 0 {
		return errf("flows", "a scenario needs at least one flow")
	}
	names := map[string]string{}
	for i := range s.Flows {
		p := fmt.Sprintf("flows[%d]", i)
		f := &s.Flows[i]
		if err := s.validateFlow(f, p); err != nil {
			return err
		}
		if prev, dup := names[f.Name]; dup {
			return errf(p+".name", "%q is already the name of %s", f.Name, prev)
		}
		names[f.Name] = p
	}
	for i := range s.Background {
		p := fmt.Sprintf("background[%d]", i)
		if err := s.validateBackground(&s.Background[i], p, 0); err != nil {
			return err
		}
		b := &s.Background[i]
		if prev, dup := names[b.Name]; dup {
			return errf(p+".name", "%q is already the name of %s", b.Name, prev)
		}
		names[b.Name] = p
	}
	if err := s.checkStopBackground(); err != nil {
		return err
	}
	if err := s.checkQueueBytes(); err != nil {
		return err
	}
	return s.CheckBudget()
}

// checkQueueBytes refuses a queue limited in bytes below one full-size
// data packet: drop-tail would drop every such packet, and the run would
// deliver nothing without saying why. The smallest packet any flow sends
// (its own transport's mss and header, or the scenario's) is the bound.
func (s *Scenario) checkQueueBytes() error {
	packet := func(t *Transport) units.Bytes {
		mss, hdr := DefaultMSS, DefaultHeader
		if s.Transport.MSS.IsSet() {
			mss = s.Transport.MSS.V
		}
		if s.Transport.Header.IsSet() {
			hdr = s.Transport.Header.V
		}
		if t != nil && t.MSS.IsSet() {
			mss = t.MSS.V
		}
		if t != nil && t.Header.IsSet() {
			hdr = t.Header.V
		}
		return mss + hdr
	}
	least := packet(nil)
	for i := range s.Flows {
		if s.Flows[i].Transport != nil {
			least = min(least, packet(s.Flows[i].Transport))
		}
	}
	check := func(q *Queue, p string) error {
		if q == nil || q.Limit.V <= 0 || q.Limit.V >= least {
			return nil
		}
		return errf(p+".limit", "%q holds no full-size packet (%d bytes with its header): give at least that, or a packet count such as 100", q.Limit.Raw, least)
	}
	if err := check(&s.Bottleneck.Queue, "bottleneck.queue"); err != nil {
		return err
	}
	for i := range s.Bottleneck.Schedule {
		if err := check(s.Bottleneck.Schedule[i].Queue, fmt.Sprintf("bottleneck.schedule[%d].queue", i)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Scenario) validateLink() error {
	l := &s.Bottleneck
	const p = "bottleneck"
	if err := parseRate(&l.Rate, p+".rate"); err != nil {
		return err
	}
	if l.Trace != "" && l.Rate.IsSet() {
		return errf(p+".rate", "give either rate or trace, not both")
	}
	if l.Trace == "" && !l.Rate.IsSet() {
		return errf(p+".rate", "the bottleneck needs a rate (e.g. 10Mbps) or a trace file")
	}
	if l.Trace == "" && l.Rate.V <= 0 {
		return errf(p+".rate", "must be positive, got %q", l.Rate.Raw)
	}
	if err := parseDuration(&l.Delay, p+".delay", true); err != nil {
		return err
	}
	if err := parseDuration(&l.AckJitter, p+".ack_jitter", true); err != nil {
		return err
	}
	if err := parseDuration(&l.AckReadDelay, p+".ack_read_delay", true); err != nil {
		return err
	}
	if v := l.AckReadShare; v != nil && (math.IsNaN(*v) || *v < 0 || *v > 1) {
		return errf(p+".ack_read_share", "must be in [0, 1] (the share of ACKs of in-order data that wait ack_read_delay), got %g", *v)
	}
	if err := validateQueue(&l.Queue, p+".queue"); err != nil {
		return err
	}
	if err := validateLoss(&l.Loss, p+".loss"); err != nil {
		return err
	}
	switch l.TraceMode {
	case "", "exact", "average":
	default:
		return errf(p+".trace_mode", "unknown mode %q (accepted: exact, average)", l.TraceMode)
	}
	if l.traceModeDefault != "" && l.TraceMode == l.traceModeDefault {
		l.TraceMode = ""
	}
	if l.Trace != "" && l.TraceMode == "" {
		l.TraceMode, l.traceModeDefault = "exact", "exact"
	}
	if l.Trace != "" {
		// Only whether it exists: the network parses it (cached).
		if _, err := trace.Find(s.Path(l.Trace)); err != nil {
			return errf(p+".trace", "%v", err)
		}
	}
	for _, d := range []struct {
		v    *Duration
		name string
	}{{&l.TraceWindow, "trace_window"}, {&l.TraceStart, "trace_start"}, {&l.TraceLength, "trace_length"}} {
		if err := parseDuration(d.v, p+"."+d.name, false); err != nil {
			return err
		}
	}
	if !l.TraceWindow.IsSet() {
		l.TraceWindow = Dur(DefaultTraceWindow)
	}
	if l.TraceWindow.V < time.Millisecond || l.TraceWindow.V%time.Millisecond != 0 {
		return errf(p+".trace_window", "must be a positive whole number of milliseconds, got %q", l.TraceWindow.Raw)
	}
	var prev time.Duration
	for i := range l.Schedule {
		c := &l.Schedule[i]
		cp := fmt.Sprintf("%s.schedule[%d]", p, i)
		if !c.At.IsSet() {
			return errf(cp+".at", "every schedule entry needs a time (at: 10s)")
		}
		if err := parseDuration(&c.At, cp+".at", false); err != nil {
			return err
		}
		if c.At.V < prev {
			return errf(cp+".at", "schedule times must not decrease (%v after %v)", c.At.V, prev)
		}
		prev = c.At.V
		if err := parseRate(&c.Rate, cp+".rate"); err != nil {
			return err
		}
		if c.Rate.IsSet() && l.Trace != "" {
			return errf(cp+".rate", "a trace-driven bottleneck's rate comes from the trace")
		}
		if err := parseDuration(&c.Delay, cp+".delay", true); err != nil {
			return err
		}
		if c.Loss != nil {
			if err := validateLoss(c.Loss, cp+".loss"); err != nil {
				return err
			}
		}
		if c.Queue != nil {
			if err := validateQueue(c.Queue, cp+".queue"); err != nil {
				return err
			}
		}
		if err := parseSize(&c.Window, cp+".window", false); err != nil {
			return err
		}
		if math.IsNaN(c.ScaleBackground) || math.IsInf(c.ScaleBackground, 0) || c.ScaleBackground < 0 {
			return errf(cp+".scale_background", "must be a factor >= 0 (0 or absent: unchanged), got %g", c.ScaleBackground)
		}
		if c.At.V > s.Duration.V {
			return errf(cp+".at", "%v is after the end of the run (duration %v): the change would never happen", c.At.V, s.Duration.V)
		}
	}
	return nil
}

// checkStopBackground checks that schedule entries stop background
// sources that exist: an entry, a part of a sequence, or a replica
// (name-2 of an entry with count 2 or more).
func (s *Scenario) checkStopBackground() error {
	known := map[string]bool{}
	var list []string
	var add func(b *Background)
	add = func(b *Background) {
		known[b.Name] = true
		list = append(list, b.Name)
		for i := 1; i <= b.Count && b.Count > 1; i++ {
			known[fmt.Sprintf("%s-%d", b.Name, i)] = true
		}
		for i := range b.Sequence {
			add(&b.Sequence[i])
		}
	}
	for i := range s.Background {
		add(&s.Background[i])
	}
	for i, c := range s.Bottleneck.Schedule {
		for j, name := range c.StopBackground {
			if !known[name] {
				return errf(fmt.Sprintf("bottleneck.schedule[%d].stop_background[%d]", i, j), "no background source is named %q (background sources: %s)", name, strings.Join(list, ", "))
			}
		}
	}
	return nil
}

func validateQueue(q *Queue, p string) error {
	switch q.Discipline {
	case "":
		q.Discipline = "droptail"
	case "droptail", "red", "codel":
	default:
		return errf(p+".discipline", "unknown queue discipline %q (accepted: droptail, red, codel)", q.Discipline)
	}
	if q.limitDefault != "" && q.Limit.Raw == q.limitDefault {
		q.Limit = Size{}
	}
	if err := parseSize(&q.Limit, p+".limit", true); err != nil {
		return err
	}
	if !q.Limit.IsSet() {
		n := DefaultQueueLimit
		if q.Discipline != "droptail" {
			n = 1000
		}
		q.Limit = Size{Raw: strconv.Itoa(n), Packets: n}
		q.limitDefault = q.Limit.Raw
	}
	if q.Limit.Packets <= 0 && q.Limit.V <= 0 {
		return errf(p+".limit", "must be a positive packet count (100) or size (150KB), got %q", q.Limit.Raw)
	}
	if err := parseSize(&q.MarkThreshold, p+".mark_threshold", true); err != nil {
		return err
	}
	if q.MarkThreshold.IsSet() && q.Discipline != "droptail" {
		return errf(p+".mark_threshold", "is droptail's step marking; %s marks with ecn: true", q.Discipline)
	}
	if q.ECN && q.Discipline == "droptail" {
		return errf(p+".ecn", "droptail marks at a threshold: give mark_threshold (packets or a size) instead; ecn: true is for red and codel")
	}
	for _, d := range []struct {
		v    *Duration
		name string
	}{{&q.Target, "target"}, {&q.Interval, "interval"}} {
		if err := parseDuration(d.v, p+"."+d.name, false); err != nil {
			return err
		}
	}
	if q.Discipline == "codel" {
		// Checked here, where the error can name the file and line, as
		// well as where the queue is built; 0 is CoDel's default.
		target, interval := cmp.Or(q.Target.V, 5*time.Millisecond), cmp.Or(q.Interval.V, 100*time.Millisecond)
		if target >= interval {
			return errf(p+".target", "must be below interval (%v), got %v", interval, target)
		}
	}
	for _, f := range []struct {
		v    float64
		name string
	}{{q.MinTh, "min_th"}, {q.MaxTh, "max_th"}, {q.MaxP, "max_p"}, {q.Wq, "w_q"}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return errf(p+"."+f.name, "must be a finite number, got %g", f.v)
		}
	}
	if q.Discipline == "red" {
		if q.MinTh < 0 || q.MaxTh < 0 || q.MaxTh != 0 && q.MaxTh <= q.MinTh {
			return errf(p, "red needs 0 <= min_th < max_th, got min_th=%g max_th=%g", q.MinTh, q.MaxTh)
		}
		if q.MaxP < 0 || q.MaxP > 1 || q.Wq < 0 || q.Wq > 1 {
			return errf(p, "red max_p and w_q must be in [0, 1]")
		}
	}
	return nil
}

func validateLoss(l *Loss, p string) error {
	if l.modelDefault != "" && l.Model == l.modelDefault {
		l.Model = ""
	}
	switch l.Model {
	case "":
		if l.P != 0 {
			l.Model = "bernoulli"
		} else {
			l.Model = "none"
		}
		l.modelDefault = l.Model
	case "none", "bernoulli", "gilbert-elliott":
	default:
		return errf(p+".model", "unknown loss model %q (accepted: none, bernoulli, gilbert-elliott)", l.Model)
	}
	check := func(name string, v float64, hi float64, openHi bool) error {
		if math.IsNaN(v) || v < 0 || v > hi || openHi && v == hi {
			br := "]"
			if openHi {
				br = ")"
			}
			return errf(p+"."+name, "must be in [0, %g%s, got %g", hi, br, v)
		}
		return nil
	}
	switch l.Model {
	case "bernoulli":
		return check("p", l.P, 1, true)
	case "gilbert-elliott":
		if err := check("p", l.P, 1, false); err != nil {
			return err
		}
		if err := check("r", l.R, 1, false); err != nil {
			return err
		}
		if l.P > 0 && l.R == 0 {
			return errf(p+".r", "must be positive when p > 0 (the Bad state would never end)")
		}
		if err := check("loss_good", l.LossGood, 1, true); err != nil {
			return err
		}
		if l.LossBad != nil {
			return check("loss_bad", *l.LossBad, 1, false)
		}
	case "none":
		if l.P != 0 {
			return errf(p+".p", "model none takes no p")
		}
	}
	return nil
}

// KernelPhaseMax bounds transport.kernel_phase: 2^24 ticks of the slowest
// wheel kernel_hz accepts (one tick a second), 194 days.
const KernelPhaseMax = 1 << 24 * time.Second

func validateTransport(t *Transport, p string) error {
	if err := parseSize(&t.MSS, p+".mss", false); err != nil {
		return err
	}
	if t.MSS.IsSet() && (t.MSS.V < 1 || t.MSS.V > 65535) {
		return errf(p+".mss", "must be in [1B, 65535B], got %q", t.MSS.Raw)
	}
	if err := parseSize(&t.Header, p+".header", false); err != nil {
		return err
	}
	if t.Header.IsSet() && (t.Header.V < 1 || t.Header.V > 1024) {
		return errf(p+".header", "must be in [1B, 1024B], got %q", t.Header.Raw)
	}
	if err := parseSize(&t.SynOptions, p+".syn_options", false); err != nil {
		return err
	}
	if t.SynOptions.IsSet() && (t.SynOptions.V < 1 || t.SynOptions.V > 40) {
		return errf(p+".syn_options", "must be in [1B, 40B] (TCP's option space), got %q", t.SynOptions.Raw)
	}
	for _, d := range []struct {
		v    *Duration
		name string
	}{{&t.DelAckTimeout, "delack_timeout"}, {&t.MinRTO, "min_rto"}, {&t.InitialRTO, "initial_rto"}, {&t.MaxRTO, "max_rto"}, {&t.SACKTimeout, "sack_timeout"}, {&t.TimeoutMin, "timeout_min"}} {
		if err := parseDuration(d.v, p+"."+d.name, false); err != nil {
			return err
		}
	}
	for _, d := range []struct {
		v    Duration
		name string
	}{{t.DelAckTimeout, "delack_timeout"}, {t.MinRTO, "min_rto"}, {t.InitialRTO, "initial_rto"}, {t.MaxRTO, "max_rto"}, {t.SACKTimeout, "sack_timeout"}, {t.TimeoutMin, "timeout_min"}} {
		if d.v.IsSet() && d.v.V < MinTimer {
			return errf(p+"."+d.name, "must be at least %v, got %q", MinTimer, d.v.Raw)
		}
	}
	if t.TimeoutMin.IsSet() && t.TimeoutMin.V > time.Second {
		return errf(p+".timeout_min", "must be at most 1s (two ticks of a kernel clock: 2ms at HZ=1000, 8ms at HZ=250), got %q", t.TimeoutMin.Raw)
	}
	// Unset bounds take the transport's defaults (200ms, 60s).
	minRTO, maxRTO := 200*time.Millisecond, 60*time.Second
	if t.MinRTO.IsSet() {
		minRTO = t.MinRTO.V
	}
	if t.MaxRTO.IsSet() {
		maxRTO = t.MaxRTO.V
	}
	if maxRTO < minRTO {
		path := p + ".max_rto"
		if !t.MaxRTO.IsSet() {
			path = p + ".min_rto"
		}
		return errf(path, "need min_rto <= max_rto, got %v and %v (unset: 200ms and 60s)", minRTO, maxRTO)
	}
	if t.RTO != "" && t.RTO != "linux" && t.RTO != "rfc6298" {
		return errf(p+".rto", "must be linux or rfc6298, got %q", t.RTO)
	}
	if t.LostRetransmissions != "" && t.LostRetransmissions != "gap" && t.LostRetransmissions != "rack" {
		return errf(p+".lost_retransmissions", "must be gap or rack, got %q", t.LostRetransmissions)
	}
	if t.SRTTSample != "" && t.SRTTSample != "newest" && t.SRTTSample != "oldest" {
		return errf(p+".srtt_sample", "must be newest or oldest, got %q", t.SRTTSample)
	}
	if t.Pacing != "" && t.Pacing != "segment" && t.Pacing != "linux" {
		return errf(p+".pacing", "must be segment or linux, got %q", t.Pacing)
	}
	if t.RecoveryStart != "" && t.RecoveryStart != "new_loss" && t.RecoveryStart != "linux" {
		return errf(p+".recovery_start", "must be new_loss or linux, got %q", t.RecoveryStart)
	}
	if t.WindowGrowth != "" && t.WindowGrowth != "delivered" && t.WindowGrowth != "linux" {
		return errf(p+".window_growth", "must be delivered or linux, got %q", t.WindowGrowth)
	}
	if t.CwndLimited != "" && t.CwndLimited != "last_send" && t.CwndLimited != "linux" {
		return errf(p+".cwnd_limited", "must be last_send or linux, got %q", t.CwndLimited)
	}
	if t.TLPTimer != "" && t.TLPTimer != "rto_first" && t.TLPTimer != "linux" {
		return errf(p+".tlp_timer", "must be rto_first or linux, got %q", t.TLPTimer)
	}
	if t.PRR != "" && t.PRR != "rfc6937" && t.PRR != "linux" {
		return errf(p+".prr", "must be rfc6937 or linux, got %q", t.PRR)
	}
	if err := parseDuration(&t.KernelPhase, p+".kernel_phase", false); err != nil {
		return err
	}
	if t.KernelPhase.IsSet() && (t.KernelPhase.V < 0 || t.KernelPhase.V > KernelPhaseMax) {
		return errf(p+".kernel_phase", "must be between 0s and %v (the jiffy counter's reading at time zero, as a time), got %q", KernelPhaseMax, t.KernelPhase.Raw)
	}
	if t.KernelHZ != nil && (*t.KernelHZ < 0 || *t.KernelHZ > 10000) {
		return errf(p+".kernel_hz", "must be between 0 (exact timers) and 10000 ticks a second (Linux: 100, 250, 300 or 1000), got %d", *t.KernelHZ)
	}
	if t.RACKTimer != "" && t.RACKTimer != "earliest" && t.RACKTimer != "linux" {
		return errf(p+".rack_timer", "must be earliest or linux, got %q", t.RACKTimer)
	}
	if t.ReceiveWindow != "" && t.ReceiveWindow != "none" && t.ReceiveWindow != "linux" {
		return errf(p+".receive_window", "must be none or linux, got %q", t.ReceiveWindow)
	}
	if t.DupThresh < 0 || t.DupThresh > maxDupThresh {
		return errf(p+".dupthresh", "must be between 1 and %d, got %d", maxDupThresh, t.DupThresh)
	}
	if t.SendBuffer != "" && t.SendBuffer != "none" && t.SendBuffer != "linux" {
		return errf(p+".send_buffer", "must be none or linux, got %q", t.SendBuffer)
	}
	if err := parseSize(&t.RecvWindow, p+".recv_window", false); err != nil {
		return err
	}
	if err := parseSize(&t.PendingQueue, p+".pending_queue", false); err != nil {
		return err
	}
	// One MSS at least, or no new segment would ever fit.
	mss := DefaultMSS
	if t.MSS.IsSet() {
		mss = t.MSS.V
	}
	if t.RecvWindow.IsSet() && t.RecvWindow.V < mss {
		return errf(p+".recv_window", "must be at least one MSS (%d bytes; omit it for an unlimited window), got %q", mss, t.RecvWindow.Raw)
	}
	if t.PendingQueue.IsSet() && t.PendingQueue.V < mss {
		return errf(p+".pending_queue", "must be at least one MSS (%d bytes; omit it for an unlimited queue), got %q", mss, t.PendingQueue.Raw)
	}
	if t.PendingQueue.IsSet() && t.SendBuffer == "linux" {
		return errf(p+".send_buffer", "linux sizes the send buffer itself; it cannot be combined with pending_queue %q (set one of them)", t.PendingQueue.Raw)
	}
	return nil
}

func (s *Scenario) validateFlow(f *Flow, p string) error {
	if f.Name == "" {
		f.Name = strings.ReplaceAll(strings.ReplaceAll(p, "[", "-"), "]", "")
	}
	if err := validateCC(&f.CC, p+".cc"); err != nil {
		return err
	}
	if err := parseSize(&f.Bytes, p+".bytes", false); err != nil {
		return err
	}
	if f.Bytes.IsSet() && f.Bytes.V <= 0 {
		return errf(p+".bytes", "a finite transfer needs a positive size, got %q (omit bytes for a bulk flow)", f.Bytes.Raw)
	}
	for _, d := range []struct {
		v    *Duration
		name string
	}{{&f.Start, "start"}, {&f.Stop, "stop"}, {&f.ExtraDelay, "extra_delay"}, {&f.StartSpread, "start_spread"}} {
		if err := parseDuration(d.v, p+"."+d.name, false); err != nil {
			return err
		}
	}
	if f.Stop.IsSet() && f.Stop.V <= f.Start.V {
		return errf(p+".stop", "must be after start (%v), got %v", f.Start.V, f.Stop.V)
	}
	if f.Start.V >= s.Duration.V {
		return errf(p+".start", "%v is not before the end of the run (duration %v): the flow would never send", f.Start.V, s.Duration.V)
	}
	if f.Count == 0 {
		f.Count = 1
	}
	if f.Count < 0 || f.Count > 100000 {
		return errf(p+".count", "must be in [1, 100000], got %d", f.Count)
	}
	if f.Loss != nil {
		if err := validateLoss(f.Loss, p+".loss"); err != nil {
			return err
		}
	}
	if f.LossHops < 0 || f.LossHops > 64 || (f.LossHops > 1 && f.Loss == nil) {
		return errf(p+".loss_hops", "must be in [0, 64] and needs a loss model, got %d", f.LossHops)
	}
	if f.Transport != nil {
		if err := validateTransport(f.Transport, p+".transport"); err != nil {
			return err
		}
		if f.Transport.KernelPhase.IsSet() {
			return errf(p+".transport.kernel_phase", "is the host's clock, which every flow shares: set it in the scenario's transport section")
		}
	}
	switch f.Protocol {
	case "", "tcp", "mockets":
	default:
		return errf(p+".protocol", "unknown protocol %q (accepted: tcp, mockets)", f.Protocol)
	}
	switch f.Stack {
	case "", "kernel", "cclab":
	default:
		return errf(p+".stack", "unknown stack %q (accepted: kernel, cclab)", f.Stack)
	}
	if f.Agent != "" && f.Stack != "cclab" {
		return errf(p+".agent", "an agent drives a flow only with stack: cclab, got stack %q", f.Stack)
	}
	if err := validateTuning(f, p); err != nil {
		return err
	}
	if c := f.Coding; c != nil {
		if math.IsNaN(c.Redundancy) || c.Redundancy < 1 || c.Redundancy > 10 {
			return errf(p+".coding.redundancy", "R must be in [1, 10], got %g", c.Redundancy)
		}
		if c.Window == 0 {
			c.Window = 1000
		}
		if c.Window < 1 || c.Window > 4096 {
			return errf(p+".coding.window", "must be in [1, 4096] packets, got %d", c.Window)
		}
		// The coding layer sends coded packets of its own, not the
		// sender's segments, and acknowledges for the receiver: no ECT
		// and no echo, so ECN would be silently off.
		if s.FlowECN(f) || cc.NeedsECN(f.CC.Name) {
			return errf(p+".coding", "TCP/NC's coded packets carry no ECN and its decoder echoes none: give this flow transport: {ecn: false} and a controller that does not need ECN")
		}
	}
	return nil
}

func validateCC(c *CC, p string) error {
	if c.Name == "" {
		return errf(p, "each flow needs a congestion controller (accepted: %s)", strings.Join(cc.Names(), ", "))
	}
	spec, err := cc.Lookup(c.Name)
	if err != nil {
		return errf(p, "%v", err)
	}
	if _, err := spec.Resolve(c.Params); err != nil {
		return errf(p, "%v", err)
	}
	return nil
}

// Dir returns the directory relative paths in the scenario are resolved
// against.
func (s *Scenario) Dir() string { return s.dir }

// SetDir sets the directory for relative paths (Load sets it to the file's).
func (s *Scenario) SetDir(d string) { s.dir = d }

// Path resolves a path given in the scenario.
func (s *Scenario) Path(p string) string {
	if p == "" || filepath.IsAbs(p) || s.dir == "" {
		return p
	}
	return filepath.Join(s.dir, p)
}

func parseRate(r *Rate, path string) error {
	if !r.IsSet() {
		r.V = 0
		return nil
	}
	v, err := units.ParseBandwidth(r.Raw)
	if err != nil {
		return errf(path, "%v", err)
	}
	r.V = v
	return nil
}

func parseDuration(d *Duration, path string, _ bool) error {
	if !d.IsSet() {
		d.V = 0
		return nil
	}
	v, err := units.ParseDuration(d.Raw)
	if err != nil {
		return errf(path, "%v", err)
	}
	d.V = v
	return nil
}

// parseSize parses a size; when packets is true a bare integer is a packet
// count.
func parseSize(s *Size, path string, packets bool) error {
	s.V, s.Packets = 0, 0
	if !s.IsSet() {
		return nil
	}
	if packets {
		raw := strings.TrimSpace(s.Raw)
		if n, err := strconv.Atoi(raw); err == nil {
			if n <= 0 {
				return errf(path, "must be positive, got %d", n)
			}
			s.Packets = n
			return nil
		}
		// A bare number is a packet count here, so "42.0" or "1e2" is one
		// that is not whole: read as bytes it would hold no packet.
		if _, err := strconv.ParseFloat(raw, 64); err == nil {
			return errf(path, "a bare number is a packet count and must be a whole number, got %q (or give a size with a unit, such as 150KB)", s.Raw)
		}
	}
	v, err := units.ParseBytes(s.Raw)
	if err != nil {
		if packets {
			return errf(path, "%v (or give a packet count such as 100)", err)
		}
		return errf(path, "%v", err)
	}
	s.V = v
	return nil
}

// validateTuning checks a flow's DeepCC tuner keys (target, mode): the
// agent must be DeepCC, one key at most, a target of three numbers. The
// agent checks the values' meaning when it starts (papers/deepcc).
func validateTuning(f *Flow, p string) error {
	key, val := "target", f.Target
	if val == "" {
		key, val = "mode", f.Mode
	}
	if val == "" {
		return nil
	}
	if name, _, _ := strings.Cut(f.Agent, ":"); name != "deepcc" {
		return errf(p+"."+key, "%s tunes DeepCC's goal online: it needs agent: deepcc or deepcc:GOAL (with stack: cclab), got agent %q", key, f.Agent)
	}
	if f.Target != "" && f.Mode != "" {
		return errf(p+".mode", "give target or mode, not both")
	}
	if f.Target != "" {
		if _, err := ParseTarget(f.Target); err != nil {
			return errf(p+".target", "%v", err)
		}
	}
	return nil
}

// ParseTarget reads a DeepCC tuner requirement "MBPS,DELAY_MS,LOSS" (the
// form of `cclab send --target` and of a flow's target key): three
// finite, non-negative numbers.
func ParseTarget(s string) ([3]float64, error) {
	var v [3]float64
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return v, fmt.Errorf("target %q: want MBPS,DELAY_MS,LOSS, e.g. 8,70,0.01 (0 = no bound)", s)
	}
	for i, part := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return v, fmt.Errorf("target %q: %q is not a finite non-negative number", s, part)
		}
		v[i] = x
	}
	return v, nil
}

// maxDupThresh bounds transport.dupthresh: a threshold is a count of
// segments, and beyond a million no recovery would ever start.
const maxDupThresh = 1 << 20
