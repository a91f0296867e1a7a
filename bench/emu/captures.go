package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/netsim/pcap"
)

// captures reads the two captures of a bottleneck that `cclab run` and
// `cclab emu` write with --pcap-arrivals and --pcap-drops, and says what
// happened to the senders' retransmissions: how often the queue dropped
// them against new data, and how each dropped one was repaired (sent again
// soon, or only a retransmission timeout or more later), with
// what the flow had sent after it. Both files stamp a packet when it
// reaches the queue (DropTail drops as packets arrive), so the order of a
// flow's transmissions and their fates are exact, for the kernel's TCP
// through the emulator as for the simulator's. With -departures (the
// run's --pcap) it also reads when each flow's ACKs reached its sender:
// the emulator stamps a reverse packet as it hands it to the sender, the
// simulator as the receiver sends it, so a simulator's capture needs
// -ack-delay, the reverse path's delay (the bottleneck's delay plus the
// flow's extra delay). With -path-delay too it measures the hosts'
// timing: how long after a segment leaves the queue, beyond the path's
// propagation, the ACK it triggers reaches the sender, for duplicate ACKs,
// ACKs filling a hole and ACKs of in-order data apart, and how long after
// an ACK the segment it releases reaches the queue.
func captures(args []string) error {
	fs := flag.NewFlagSet("captures", flag.ContinueOnError)
	after := fs.Duration("after", 0, "count only transmissions this long after the first arrival (e.g. 2s: leave out the start)")
	rto := fs.Duration("rto", 200*time.Millisecond, "a flow's silence this long or longer before a retransmission counts as a timeout (Linux's least RTO)")
	departures := fs.String("departures", "", "the run's --pcap file: also time the flows' ACKs at their senders")
	ackWindow := fs.Duration("ack-window", 200*time.Microsecond, "with -departures: a transmission this soon after one of its flow's ACKs counts as one the ACK released (through the emulator a kernel sender answers in 20-100 µs of the forwarder's time, the simulator's at once; keep it under the bottleneck's packet time)")
	ackDelay := fs.Duration("ack-delay", 0, "with -departures from cclab run: the reverse path's delay (the bottleneck's delay plus the flow's extra delay, plus an ACK's transmission time with bottleneck.serialize_acks), added to the ACKs' times; cclab emu's need none")
	pathDelay := fs.Duration("path-delay", 0, "with -departures: the propagation delay from the queue to the receivers and back to the senders (twice the sum of the bottleneck's delay and the flow's extra delay); also measure the hosts' timing: from a segment leaving the queue to the ACK it triggers reaching the sender, beyond this, by kind of ACK, and from an ACK to the segment it releases reaching the queue (bottleneck.ack_read_delay, ack_read_share and extra_delay model it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("usage: emu captures [-after D] [-rto D] [-departures FILE [-ack-delay D] [-path-delay D]] ARRIVALS.pcap DROPS.pcap")
	}
	if *ackDelay != 0 && *departures == "" {
		return fmt.Errorf("-ack-delay %v without -departures: the ACKs' times come from that file", *ackDelay)
	}
	if *pathDelay != 0 && *departures == "" {
		return fmt.Errorf("-path-delay %v without -departures: the departures and ACKs come from that file", *pathDelay)
	}
	r, err := readRun(experiment.Capture{Arrivals: fs.Arg(0), Drops: fs.Arg(1), Departures: *departures})
	if err != nil {
		return err
	}
	analyseFates(r.txs, r.start, *after, *rto).write(os.Stdout, *after, *rto)
	if *departures != "" {
		a, err := analyseAcks(r.txs, r.start, r.acks, *ackDelay, *ackWindow, *after)
		if err != nil {
			return err
		}
		a.write(os.Stdout)
		if *pathDelay != 0 {
			analyseHostTiming(r.txs, r.start, r.departed, r.acks, *ackDelay, *pathDelay, *ackWindow, *after).write(os.Stdout)
		}
	}
	return nil
}

// capSeg is one TCP data segment in a capture: when, which connection
// (addresses and ports), which bytes.
type capSeg struct {
	at      time.Time
	conn    conn
	seq     uint32
	payload uint32
}

// conn names a connection by its data's direction. A comparable value, not
// a formatted string: the captures hold hundreds of thousands of packets.
type conn struct{ src, dst netip.AddrPort }

func (c conn) String() string { return c.src.String() + ">" + c.dst.String() }

// readCapture reads a capture cclab wrote (pcap.ReadSegments) and returns
// its data segments and its pure ACKs (no payload, no SYN) in file order,
// and how many packets it holds. An ACK is named by the connection of the
// data it acknowledges (its own addresses and ports reversed), its seq
// holding its acknowledgement number.
func readCapture(path string) (segs, acks []capSeg, packets int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	all, packets, err := pcap.ReadSegments(f)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	for _, g := range all {
		switch {
		case g.Payload > 0:
			segs = append(segs, capSeg{g.At, conn{g.Src, g.Dst}, g.Seq, uint32(g.Payload)})
		case g.ACK && !g.SYN:
			acks = append(acks, capSeg{g.At, conn{g.Dst, g.Src}, g.Ack, 0})
		}
	}
	return segs, acks, packets, nil
}

// capturedRun is a run's captures, read back: the transmissions reaching
// the queue (each matched to its drop, if any) and the first one's time,
// the drops file's data segments and packets, and the departures file's
// data segments and ACKs if it was written.
type capturedRun struct {
	txs            map[conn][]flowTx
	start          time.Time
	dropped        []capSeg
	packets        int
	departed, acks []capSeg
}

// readRun reads the captures c names (Departures may be empty).
func readRun(c experiment.Capture) (*capturedRun, error) {
	var r capturedRun
	arrivals, _, _, err := readCapture(c.Arrivals)
	if err != nil {
		return nil, err
	}
	if r.dropped, _, r.packets, err = readCapture(c.Drops); err != nil {
		return nil, err
	}
	if c.Departures != "" {
		if r.departed, r.acks, _, err = readCapture(c.Departures); err != nil {
			return nil, err
		}
	}
	if r.txs, r.start, err = transmissions(arrivals, r.dropped); err != nil {
		return nil, err
	}
	return &r, nil
}

// fates is what analyseFates counts.
type fates struct {
	// Transmissions reaching the queue: new data and retransmissions, and
	// how many of each it dropped.
	New, Retx, NewDropped, RetxDropped int
	// Lost retransmissions (RetxDropped) by when their data was sent next:
	// within the timeout (Soon), the timeout or more later (Timeout), or
	// never (Never); those sent again the timeout or more later by what
	// the flow sent in between: nothing, only segments the queue dropped
	// too, or something that got through (which a SACK would report, so
	// that RACK could find the retransmission lost).
	Soon, Timeout, Never                       int
	NothingAfter, AllAfterDropped, SomeAfterIn int
	// Timeouts: retransmissions after a silence of at least the timeout,
	// and how many of them resend a lost retransmission's data.
	Timeouts, TimeoutsAfterLostRetx int
	// Transmissions and drops by position in a burst (a flow's packets
	// less than burstGap apart): first, second, third or later; and how
	// many retransmissions lead their burst.
	ByPosition, DroppedByPosition [3]int
	RetxFirst                     int
}

// burstGap separates a flow's bursts: packets an ACK releases together
// reach the queue microseconds apart, a round trip's next ones
// milliseconds later.
const burstGap = 500 * time.Microsecond

// flowTx is one transmission of a flow, its bytes as offsets from the
// flow's first sequence number (so that sequence numbers may wrap; the
// offsets themselves wrap after a flow's first 4 GiB, more than these
// captures hold).
type flowTx struct {
	at       time.Time
	from, to uint32
	retx     bool
	dropped  bool
}

// carries reports whether the transmission holds the byte at offset off.
func (t flowTx) carries(off uint32) bool { return t.from <= off && off < t.to }

// transmissions matches each drop to its arrival (the latest arrival of
// the same bytes at or before it) and returns each flow's transmissions in
// time order, and the first arrival's time.
func transmissions(arrivals, drops []capSeg) (map[conn][]flowTx, time.Time, error) {
	if len(arrivals) == 0 {
		return nil, time.Time{}, errors.New("the arrivals capture holds no TCP data segment")
	}
	start := arrivals[0].at
	for _, a := range arrivals {
		if a.at.Before(start) {
			start = a.at
		}
	}
	type key struct {
		conn     conn
		seq, len uint32
	}
	at := map[key][]int{} // arrival indices by bytes, in time order
	for i, a := range arrivals {
		k := key{a.conn, a.seq, a.payload}
		at[k] = append(at[k], i)
	}
	dropped := make([]bool, len(arrivals))
	for _, d := range drops {
		idx := at[key{d.conn, d.seq, d.payload}]
		j := sort.Search(len(idx), func(j int) bool { return arrivals[idx[j]].at.After(d.at) }) - 1
		for j >= 0 && dropped[idx[j]] {
			j--
		}
		if j < 0 {
			return nil, time.Time{}, fmt.Errorf("the drop of %s seq %d at %v matches no arrival before it: are the two files from one run?", d.conn, d.seq, d.at.Sub(start))
		}
		dropped[idx[j]] = true
	}
	byConn := map[conn][]flowTx{}
	isn := map[conn]uint32{}
	high := map[conn]uint32{}
	order := make([]int, len(arrivals))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return arrivals[order[a]].at.Before(arrivals[order[b]].at) })
	for _, i := range order {
		a := arrivals[i]
		base, ok := isn[a.conn]
		if !ok {
			base = a.seq
			isn[a.conn] = base
		}
		from := a.seq - base
		to := from + a.payload
		byConn[a.conn] = append(byConn[a.conn], flowTx{a.at, from, to, from < high[a.conn], dropped[i]})
		high[a.conn] = max(high[a.conn], to)
	}
	return byConn, start, nil
}

// analyseFates counts each flow's transmissions (transmissions) from
// after on.
func analyseFates(byConn map[conn][]flowTx, start time.Time, after, rto time.Duration) *fates {
	f := &fates{}
	for _, txs := range byConn {
		pos := 0
		for i, t := range txs {
			if i > 0 && t.at.Sub(txs[i-1].at) < burstGap {
				pos++
			} else {
				pos = 0
			}
			if t.at.Sub(start) < after {
				continue
			}
			f.ByPosition[min(pos, 2)]++
			if t.dropped {
				f.DroppedByPosition[min(pos, 2)]++
			}
			if t.retx {
				f.Retx++
				if pos == 0 {
					f.RetxFirst++
				}
				if t.dropped {
					f.RetxDropped++
				}
				if i > 0 && t.at.Sub(txs[i-1].at) >= rto {
					f.Timeouts++
					if lostRetxBefore(txs[:i], t.from) {
						f.TimeoutsAfterLostRetx++
					}
				}
			} else {
				f.New++
				if t.dropped {
					f.NewDropped++
				}
			}
			if !t.retx || !t.dropped {
				continue
			}
			next := -1
			for j := i + 1; j < len(txs); j++ {
				if txs[j].carries(t.from) {
					next = j
					break
				}
			}
			switch {
			case next < 0:
				f.Never++
			case txs[next].at.Sub(t.at) < rto:
				f.Soon++
			default:
				f.Timeout++
				in, sent := false, next-i-1
				for _, u := range txs[i+1 : next] {
					in = in || !u.dropped
				}
				switch {
				case sent == 0:
					f.NothingAfter++
				case in:
					f.SomeAfterIn++
				default:
					f.AllAfterDropped++
				}
			}
		}
	}
	return f
}

// lostRetxBefore reports whether the last transmission in txs carrying the
// byte at offset from was a retransmission the queue dropped.
func lostRetxBefore(txs []flowTx, from uint32) bool {
	for j := len(txs) - 1; j >= 0; j-- {
		if txs[j].carries(from) {
			return txs[j].retx && txs[j].dropped
		}
	}
	return false
}

// pct is a as a percentage of b (0 when b is).
func pct(a, b int) float64 { return 100 * float64(a) / float64(max(b, 1)) }

func (f *fates) write(w io.Writer, after, rto time.Duration) {
	fmt.Fprintf(w, "data segments reaching the queue from %v on: %d new, %d retransmissions\n", after, f.New, f.Retx)
	fmt.Fprintf(w, "dropped: new %d (%.2f%%), retransmissions %d (%.2f%%)\n", f.NewDropped, pct(f.NewDropped, f.New), f.RetxDropped, pct(f.RetxDropped, f.Retx))
	fmt.Fprintf(w, "lost retransmissions: %d; their data sent again within %v: %d, %v or more later: %d, never: %d\n",
		f.RetxDropped, rto, f.Soon, rto, f.Timeout, f.Never)
	fmt.Fprintf(w, "  of those sent again later: %d with nothing sent between, %d with all sent between dropped, %d with something between delivered\n",
		f.NothingAfter, f.AllAfterDropped, f.SomeAfterIn)
	fmt.Fprintf(w, "timeouts (a retransmission after a silence of %v or more): %d, of which %d resend a lost retransmission\n", rto, f.Timeouts, f.TimeoutsAfterLostRetx)
	fmt.Fprintf(w, "dropped by position in a flow's burst (packets under %v apart): first %.2f%% of %d, second %.2f%% of %d, third or later %.2f%% of %d; retransmissions first in theirs: %.1f%%\n",
		burstGap, pct(f.DroppedByPosition[0], f.ByPosition[0]), f.ByPosition[0], pct(f.DroppedByPosition[1], f.ByPosition[1]), f.ByPosition[1],
		pct(f.DroppedByPosition[2], f.ByPosition[2]), f.ByPosition[2], pct(f.RetxFirst, f.Retx))
}

// ackGapBins are the upper bounds of ackFates.Gaps' bins; the last bin
// holds the rest.
var ackGapBins = [...]time.Duration{100 * time.Microsecond, 250 * time.Microsecond, 350 * time.Microsecond, 700 * time.Microsecond, 2 * time.Millisecond}

// ackFates is what analyseAcks counts from after on.
type ackFates struct {
	// Window is how soon after an ACK a transmission counts as one it
	// released. Acks reaching the senders; Released[k] those followed
	// within Window by k of the flow's transmissions (4 and more in the
	// last).
	Window   time.Duration
	Acks     int
	Released [5]int
	// Gaps between a flow's consecutive ACKs, by ackGapBins.
	Gaps [len(ackGapBins) + 1]int
	// Transmissions, those sent within Window of an ACK, and the
	// retransmissions among each kind with how many the queue dropped.
	Tx, TxAfterAck                                                 int
	RetxAfterAck, RetxAfterAckDropped, RetxOther, RetxOtherDropped int
}

// ackTimes returns each connection's ACK times at its sender (their
// capture time plus delay), in order.
func ackTimes(acks []capSeg, delay time.Duration) map[conn][]time.Time {
	at := map[conn][]time.Time{}
	for _, a := range acks {
		at[a.conn] = append(at[a.conn], a.at.Add(delay))
	}
	for _, as := range at {
		slices.SortFunc(as, time.Time.Compare)
	}
	return at
}

// analyseAcks times each flow's ACKs at its sender (their capture time
// plus delay) against its transmissions, counting a transmission within
// window of an ACK as one the ACK released.
func analyseAcks(byConn map[conn][]flowTx, start time.Time, acks []capSeg, delay, window, after time.Duration) (*ackFates, error) {
	ackAt := ackTimes(acks, delay)
	matched := false
	for c := range byConn {
		matched = matched || len(ackAt[c]) > 0
	}
	if !matched {
		return nil, errors.New("the departures capture holds no ACK of the arrivals' flows: are the files from one run?")
	}
	const slack = time.Microsecond // times rounded to the nanosecond on both sides
	f := &ackFates{Window: window}
	for c, txs := range byConn {
		as := ackAt[c]
		for i, a := range as {
			if a.Sub(start) < after {
				continue
			}
			f.Acks++
			lo := sort.Search(len(txs), func(j int) bool { return !txs[j].at.Before(a.Add(-slack)) })
			hi := sort.Search(len(txs), func(j int) bool { return !txs[j].at.Before(a.Add(window)) })
			f.Released[min(hi-lo, len(f.Released)-1)]++
			if i > 0 {
				g := a.Sub(as[i-1])
				b := sort.Search(len(ackGapBins), func(k int) bool { return g < ackGapBins[k] })
				f.Gaps[b]++
			}
		}
		for _, t := range txs {
			if t.at.Sub(start) < after {
				continue
			}
			f.Tx++
			k := sort.Search(len(as), func(j int) bool { return as[j].After(t.at.Add(slack)) }) - 1
			released := k >= 0 && t.at.Sub(as[k]) < window
			if released {
				f.TxAfterAck++
			}
			switch {
			case !t.retx:
			case released:
				f.RetxAfterAck++
				if t.dropped {
					f.RetxAfterAckDropped++
				}
			default:
				f.RetxOther++
				if t.dropped {
					f.RetxOtherDropped++
				}
			}
		}
	}
	return f, nil
}

func (a *ackFates) write(w io.Writer) {
	fmt.Fprintf(w, "ACKs at the senders: %d; followed within %v by 0, 1, 2, 3, 4+ transmissions: %.1f%%, %.1f%%, %.1f%%, %.1f%%, %.1f%%\n", a.Acks, a.Window,
		pct(a.Released[0], a.Acks), pct(a.Released[1], a.Acks), pct(a.Released[2], a.Acks), pct(a.Released[3], a.Acks), pct(a.Released[4], a.Acks))
	gaps := 0
	for _, g := range a.Gaps {
		gaps += g
	}
	fmt.Fprintf(w, "gaps between a flow's ACKs:")
	lo := time.Duration(0)
	for i, g := range a.Gaps {
		if i < len(ackGapBins) {
			fmt.Fprintf(w, " %v-%v %.1f%%", lo, ackGapBins[i], pct(g, gaps))
			lo = ackGapBins[i]
		} else {
			fmt.Fprintf(w, " %v or more %.1f%%", lo, pct(g, gaps))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "transmissions within %v of an ACK: %.1f%% of %d; retransmissions so sent dropped %.2f%% of %d, the others (timers) %.2f%% of %d\n",
		a.Window, pct(a.TxAfterAck, a.Tx), a.Tx, pct(a.RetxAfterAckDropped, a.RetxAfterAck), a.RetxAfterAck, pct(a.RetxOtherDropped, a.RetxOther), a.RetxOther)
}

// hostLimit bounds the delays hostDelays counts: an ACK later than this
// after its flow's last departure (beyond the path) is a timer's, not one
// the departure triggered.
const hostLimit = 500 * time.Microsecond

// ackKinds name hostDelays' kinds of ACK.
var ackKinds = [3]string{"duplicate", "filling the hole", "in-order data"}

// hostDelays is what analyseHostTiming measures from after on.
type hostDelays struct {
	// Receiver[k] holds, for ACKs of kind ackKinds[k], the time from
	// the flow's latest segment leaving the queue to the ACK reaching the
	// sender, beyond the path's propagation; Timer the ACKs later than
	// hostLimit.
	Receiver [3][]time.Duration
	Timer    int
	// Sender holds the time from an ACK to the first segment it
	// released reaching the queue (within the window), for new data and
	// for retransmissions.
	Sender [2][]time.Duration
}

// analyseHostTiming measures the hosts' timing. An ACK is a duplicate if
// it acknowledges what its flow's previous ACK did, fills the hole if it
// follows a duplicate, and is of in-order data otherwise (ACKs carry no
// SACK option in the capture's reading, so this is the kernel's
// distinction seen from outside).
func analyseHostTiming(byConn map[conn][]flowTx, start time.Time, departed, acks []capSeg, delay, path, window, after time.Duration) *hostDelays {
	const slack = time.Microsecond
	left := map[conn][]time.Time{}
	for _, d := range departed {
		left[d.conn] = append(left[d.conn], d.at)
	}
	h := &hostDelays{}
	last := map[conn]uint32{}
	dup := map[conn]bool{}
	for _, a := range acks {
		ds, ok := left[a.conn]
		if !ok {
			continue
		}
		prev, seen := last[a.conn]
		kind := 2
		switch {
		case seen && prev == a.seq:
			kind = 0
		case dup[a.conn]:
			kind = 1
		}
		last[a.conn], dup[a.conn] = a.seq, kind == 0
		at := a.at.Add(delay)
		if at.Sub(start) < after {
			continue
		}
		trig := at.Add(-path)
		j := sort.Search(len(ds), func(i int) bool { return ds[i].After(trig.Add(slack)) }) - 1
		if j < 0 {
			continue
		}
		switch d := max(trig.Sub(ds[j]), 0); {
		case d > hostLimit:
			h.Timer++
		default:
			h.Receiver[kind] = append(h.Receiver[kind], d)
		}
	}
	ackAt := ackTimes(acks, delay)
	for c, txs := range byConn {
		for _, a := range ackAt[c] {
			if a.Sub(start) < after {
				continue
			}
			i := sort.Search(len(txs), func(j int) bool { return !txs[j].at.Before(a.Add(-slack)) })
			if i < len(txs) && txs[i].at.Sub(a) < window {
				k := 0
				if txs[i].retx {
					k = 1
				}
				h.Sender[k] = append(h.Sender[k], max(txs[i].at.Sub(a), 0))
			}
		}
	}
	return h
}

// quantiles formats the 10th, 50th and 90th percentiles of ds in µs.
func quantiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(f float64) float64 { return float64(s[int(f*float64(len(s)-1))]) / 1e3 }
	return fmt.Sprintf("p10 %.1f, median %.1f, p90 %.1f µs (%d)", q(0.1), q(0.5), q(0.9), len(s))
}

func (h *hostDelays) write(w io.Writer) {
	fmt.Fprintf(w, "hosts' timing: from a segment leaving the queue to the ACK it triggers reaching the sender, beyond the path:\n")
	for k, name := range ackKinds {
		fmt.Fprintf(w, "  %-16s %s\n", name, quantiles(h.Receiver[k]))
	}
	if in := h.Receiver[2]; len(in) > 0 {
		// The share that waited for a read: in-order ACKs slower than
		// the duplicates' median by more than 40 µs.
		s := slices.Clone(h.Receiver[0])
		slices.Sort(s)
		if len(s) > 0 {
			cut := s[len(s)/2] + 40*time.Microsecond
			waited := 0
			for _, d := range in {
				if d > cut {
					waited++
				}
			}
			fmt.Fprintf(w, "  in-order ACKs more than 40 µs slower than the duplicates' median: %.0f%%\n", pct(waited, len(in)))
		}
	}
	fmt.Fprintf(w, "  later than %v (timers): %d\n", hostLimit, h.Timer)
	fmt.Fprintf(w, "from an ACK to the first segment it releases reaching the queue: new data %s; retransmissions %s\n", quantiles(h.Sender[0]), quantiles(h.Sender[1]))
}
