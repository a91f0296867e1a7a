package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/transport/tcp"
	"github.com/cclab/cclab/transport/udp"
)

func init() {
	register(&command{name: "send", summary: "send a flow over UDP to cclab recv with any controller (iperf3-like)", args: "ADDR", run: runSend})
	register(&command{name: "recv", summary: "receive flows from cclab send on a UDP address", run: runRecv})
}

// liveParams is the repeatable --param NAME=VALUE flag.
type liveParams map[string]float64

func (p liveParams) String() string {
	if len(p) == 0 {
		return ""
	}
	return fmt.Sprint(map[string]float64(p))
}
func (p liveParams) Set(v string) error {
	name, val, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	x, err := strconv.ParseFloat(val, 64)
	if err != nil {
		return fmt.Errorf("parameter %s: %q is not a number", name, val)
	}
	p[name] = x
	return nil
}

func runSend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("send", stderr)
	ccName := fs.String("cc", "cubic", "congestion controller (any of cclab list), marlin (the MARLIN policy) deepcc[:g1..g5|:T,D,L] (the DeepCC policy from that goal; fixed unless --target or --mode tunes it) or dc-bbr[:static] (BBR with the data-centre policy setting its windows every 100 ms, or static: measured only; needs --link-rate)")
	params := liveParams{}
	fs.Var(params, "param", "controller parameter NAME=VALUE (repeatable)")
	bytesFlag := fs.String("bytes", "", "transfer size, e.g. 600KB, 10MB")
	dur := fs.Duration("time", 0, "transfer duration, e.g. 10s (bulk transfer)")
	mss := fs.Int("mss", udp.DefaultMSS, "payload bytes per datagram (the default makes 1500-byte IP packets)")
	ackInterval := fs.Duration("ack-interval", 0, "timer-driven SACKs every interval (Mockets style) instead of per-segment ACKs; 0 = off, else 1µs..1h11m34.967295s (the Syn carries a u32 of µs)")
	ncWindow := fs.Int("nc-window", 0, "TCP/NC coding window in packets (0 = no coding; at most 4096, less with a large --mss)")
	ncR := fs.Float64("nc-r", 1.1, "with --nc-window: TCP/NC redundancy, coded packets per segment (1..100)")
	ecn := fs.Bool("ecn", false, "ask for ECN (RFC 3168, as Linux's net.ipv4.tcp_ecn=1): new data leaves ECT(0), and CE marks on the path reduce the window without loss; controllers that need ECN (dctcp) ask whatever this says")
	retries := fs.Int("max-retries", 8, "give up at this many consecutive retransmission timeouts without an answer (0 = the default, 8)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	agentAddr := fs.String("agent", "", "drive the flow from the agent served at `ADDR` (cclab agent serve; host:port or unix:PATH)")
	policy := fs.String("policy", "", "with --cc marlin, deepcc or dc-bbr: a policy file instead of the shipped one (dc-bbr: static keeps the windows)")
	linkRate := fs.String("link-rate", "", "with --cc dc-bbr (or a dc-bbr --agent): the bottleneck's nominal `RATE`, e.g. 1Gbps")
	tuneFlags := addDeepCCTuneFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	set := flagsSet(fs)
	if len(pos) != 1 {
		return usagef("usage: cclab send ADDR --cc NAME [--bytes N | --time D] [--json]")
	}
	var size units.Bytes
	if *bytesFlag != "" {
		if size, err = units.ParseBytes(*bytesFlag); err != nil || size <= 0 {
			return usagef("--bytes %q: want a positive size such as 600KB or 10MB", *bytesFlag)
		}
	}
	if *dur < 0 || set["time"] && *dur == 0 {
		return usagef("--time %v: want a positive duration such as 10s", *dur)
	}
	if size == 0 && *dur == 0 {
		return usagef("give --bytes N or --time D (or both)")
	}
	if *mss < 64 || *mss > 8900 {
		return usagef("--mss %d: want 64..8900", *mss)
	}
	if a := *ackInterval; a != 0 && (a < time.Microsecond || a > udp.MaxAckIntervalUs*time.Microsecond) {
		return usagef("--ack-interval %v: want 0 (off) or 1µs..%v (the handshake carries it as a u32 of microseconds)", a, time.Duration(udp.MaxAckIntervalUs)*time.Microsecond)
	}
	if maxW := udp.MaxCodingWindow(*mss); *ncWindow < 0 || *ncWindow > maxW {
		return usagef("--nc-window %d: want 0 (no coding) or 1..%d with --mss %d (a coded datagram carries a coefficient per packet of the window)", *ncWindow, maxW, *mss)
	}
	if set["nc-r"] && *ncWindow == 0 {
		return usagef("--nc-r needs --nc-window: without a coding window there is no coding")
	}
	if math.IsNaN(*ncR) || *ncR < 1 || *ncR > 100 {
		return usagef("--nc-r %g: want 1..100 coded packets per segment", *ncR)
	}
	if *retries < 0 {
		return usagef("--max-retries %d: want a positive count of timeouts (0 = the default, 8)", *retries)
	}
	o := live.SendOptions{
		Addr: pos[0], CC: *ccName, Params: params, Bytes: size, Duration: *dur, MaxRetries: *retries,
	}
	o.TCP.MSS = units.Bytes(*mss)
	o.TCP.AckInterval = *ackInterval
	if *ecn {
		if *ncWindow > 0 {
			return usagef("--ecn with --nc-window: TCP/NC's coded datagrams carry no ECN")
		}
		o.TCP.ECN = tcp.ECNRFC3168
	}
	if *ncWindow > 0 {
		o.Coding = &udp.Coding{Window: *ncWindow, Redundancy: *ncR}
	}
	tune, err := tuneFlags.tuning()
	if err != nil {
		return err
	}
	ao := agentOptions{addr: *agentAddr, policy: *policy, tune: tune}
	if *linkRate != "" {
		if ao.linkRate, err = units.ParseBandwidth(*linkRate); err != nil || ao.linkRate <= 0 {
			return usagef("--link-rate %q: want a positive rate such as 1Gbps or 100Mbps", *linkRate)
		}
	}
	finish, err := attachAgent(ctx, &o, ao)
	if err != nil {
		return err
	}
	res, err := live.Send(ctx, o)
	finish(res)
	// Nothing answered, or the port was refused before the handshake (a
	// refusal after it is also ErrPeerVanished): there was no connection,
	// and an all-zero table would only bury the error.
	if errors.Is(err, udp.ErrNoAnswer) || errors.Is(err, udp.ErrRefused) && !errors.Is(err, udp.ErrPeerVanished) {
		res = nil
	}
	if res != nil {
		if perr := emit(stdout, *asJSON, res, func(w io.Writer) { printLive(w, res) }); perr != nil {
			return perr
		}
	}
	if errors.Is(err, context.Canceled) {
		return nil // interrupted: the result so far was printed
	}
	return err
}

// flagsSet returns the names of the flags given on the command line.
func flagsSet(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// minIdle is the shortest --idle: a sender that lost a window is silent
// for a retransmission timeout, at least its 200 ms minimum RTO and 1 s
// before its first RTT sample (and backed off, longer), so a shorter
// idle timeout drops healthy connections at their first loss.
const minIdle = time.Second

func runRecv(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("recv", stderr)
	listen := fs.String("listen", "127.0.0.1:5201", "UDP address to listen on")
	once := fs.Bool("once", false, "serve one connection, then exit")
	maxWin := fs.String("max-window", "16MiB", "largest receive window accepted (memory per connection), 1500B..2GiB")
	idle := fs.Duration("idle", 10*time.Second, "give up on a sender silent this long, at least 1s (0 = never: a receiver whose sender died then waits until interrupted)")
	asJSON := fs.Bool("json", false, "print each result as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("usage: cclab recv --listen ADDR [--once] [--json]")
	}
	w, err := units.ParseBytes(*maxWin)
	if err != nil {
		return usagef("--max-window %q: %v", *maxWin, err)
	}
	if w < 1500 || w > 1<<31 {
		return usagef("--max-window %s: want 1500B..2GiB", *maxWin)
	}
	cfg := udp.ListenConfig{MaxWindow: w, Idle: *idle}
	switch {
	case *idle == 0:
		cfg.Idle = udp.NeverIdle
	case *idle < minIdle:
		return usagef("--idle %v: want at least %v (a sender is silent for a whole retransmission timeout), or 0 for never", *idle, minIdle)
	}
	cfg.OnRefuse = func(peer netip.AddrPort, id uint64, why string) {
		fmt.Fprintf(stderr, "cclab recv: refused %s (connection %016x): %s\n", peer, id, why)
	}
	l, err := udp.Listen(*listen, cfg)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", *listen, err)
	}
	defer l.Close()
	fmt.Fprintf(stderr, "cclab recv: listening on %s\n", l.Addr())
	for {
		res, err := live.Receive(ctx, l)
		if ctx.Err() != nil {
			// Interrupted: a connection in progress was reset (its sender
			// stops at once) and its statistics so far are still worth
			// printing.
			if res != nil && res.Peer != "" {
				fmt.Fprintf(stderr, "cclab recv: interrupted: connection %016x from %s reset\n", res.ConnID, res.Peer)
				return emit(stdout, *asJSON, res, func(w io.Writer) { printLive(w, res) })
			}
			return nil
		}
		if perr := emit(stdout, *asJSON, res, func(w io.Writer) { printLive(w, res) }); perr != nil {
			return perr
		}
		if *once {
			return err // Main prints it
		}
		if err != nil {
			fmt.Fprintf(stderr, "cclab recv: %v\n", err)
		}
	}
}

// printLive prints a live result with the per-flow columns of `cclab run`.
func printLive(w io.Writer, r *live.Result) {
	fmt.Fprintf(w, "%s  peer %s  connection %016x  %.3f s\n", r.Role, r.Peer, r.ConnID, r.WallSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "flow\tcc\tdelivered\tgoodput Mbit/s\tFCT s\tretx\tRTOs\tRTT mean ms\tRTT p95 ms\tRTT max ms\tqdelay mean ms\tqdelay p95 ms\t")
	f := r.Flow
	fct := "-"
	if f.FCT != nil {
		fct = strconv.FormatFloat(*f.FCT, 'f', 3, 64)
	}
	rtt := []string{f2(f.RTTMeanMs), f2(f.RTTP95Ms), f2(f.RTTMaxMs), f2(f.QdelayMeanMs), f2(f.QdelayP95Ms)}
	if r.Role == "receiver" {
		// The receiver takes no RTT samples: 0.00 would read as measured.
		rtt = []string{"-", "-", "-", "-", "-"}
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n",
		f.Name, f.CC, experiment.HumanBytes(f.BytesDelivered), f2(f.GoodputMbps), fct, f.Retransmissions, f.RTOs,
		rtt[0], rtt[1], rtt[2], rtt[3], rtt[4])
	tw.Flush()
	if d := r.Drops; d.Total() > 0 {
		fmt.Fprintf(w, "dropped datagrams: %d truncated, %d oversized, %d bad version, %d malformed, %d stray, %d beyond the window\n",
			d.Truncated, d.Oversized, d.Version, d.Malformed, d.Stray, d.OutOfWindow)
	}
	switch {
	case r.ECN == "refused":
		fmt.Fprintln(w, "ECN: asked for, not negotiated (this platform cannot set the IP header's ECN field, or the receiver cannot read it); the flow ran without it")
	case r.ECN == "on" && r.Flow.ECNReductions != nil:
		fmt.Fprintf(w, "ECN: on, %d window reductions for CE marks\n", *r.Flow.ECNReductions)
	case r.ECN == "on" && r.ECTSegments != nil && r.CESegments != nil:
		fmt.Fprintf(w, "ECN: on, %d data segments arrived ECN-capable, %d of them CE-marked\n", *r.ECTSegments, *r.CESegments)
	}
	if r.Role == "receiver" && r.CorruptBytes > 0 {
		fmt.Fprintf(w, "CORRUPT: %d delivered bytes differ from the sent ones\n", r.CorruptBytes)
	}
	for _, k := range sortedKeys(r.Extra) {
		fmt.Fprintf(w, "%s %g\n", k, r.Extra[k])
	}
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
