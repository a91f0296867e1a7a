package nc

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// scenario drives an encoder and a decoder through a lossy FIFO network with
// a TCP-like sender on top: at most cwnd unseen packets, new packets clocked
// by time, and a "retransmission" of the oldest unseen packet when no
// acknowledgement arrives for rto ticks. A twin encoder/decoder pair in the
// fast mode, seeded identically, must make exactly the same decisions.
type scenario struct {
	window, payload int
	redundancy      float64
	loss            float64 // erasure probability of each coded packet
	cwnd            int     // TCP's window, in packets
	packets         int     // packets TCP sends
	delay, ackDelay int     // one-way delays, in ticks
	rto             int     // ticks without an acknowledgement before TCP retransmits
	seed            uint64
	reorder         bool // add random jitter to coded packets' delays
}

func (s scenario) String() string {
	return fmt.Sprintf("W=%d payload=%d R=%g p=%g cwnd=%d n=%d delay=%d/%d seed=%d reorder=%v",
		s.window, s.payload, s.redundancy, s.loss, s.cwnd, s.packets, s.delay, s.ackDelay, s.seed, s.reorder)
}

type inflight struct {
	due       int
	pkt, fast Coded
}

type ackMsg struct {
	due         int
	seen, limit uint64
}

type result struct {
	coded, innovative, stale int
	ticks                    int
	// backlog is the largest number of packets seen but not yet decoded;
	// limited counts combinations cut short by the decoder's limit.
	backlog, limited int
}

// run executes the scenario and checks, at every step, the properties the
// coding layer promises. It returns counters for further checks.
func (s scenario) run(t *testing.T) result {
	t.Helper()
	cfg := Config{Window: s.window, PayloadSize: s.payload}
	fastCfg := Config{Window: s.window}
	enc, err := NewEncoder(EncoderConfig{Config: cfg, Redundancy: s.redundancy}, rand.NewPCG(s.seed, 1))
	if err != nil {
		t.Fatalf("%v: NewEncoder: %v", s, err)
	}
	fastEnc, err := NewEncoder(EncoderConfig{Config: fastCfg, Redundancy: s.redundancy}, rand.NewPCG(s.seed, 1))
	if err != nil {
		t.Fatalf("%v: NewEncoder (fast): %v", s, err)
	}
	dec, err := NewDecoder(cfg)
	if err != nil {
		t.Fatalf("%v: NewDecoder: %v", s, err)
	}
	fastDec, err := NewDecoder(fastCfg)
	if err != nil {
		t.Fatalf("%v: NewDecoder (fast): %v", s, err)
	}
	net := rand.New(rand.NewPCG(s.seed, 2))

	payloads := make([][]byte, s.packets)
	for i := range payloads {
		p := make([]byte, net.IntN(s.payload+1))
		for j := range p {
			p[j] = byte(net.Uint32())
		}
		payloads[i] = p
	}

	var (
		fwd       []inflight
		acks      []ackMsg
		res       result
		lastAck   uint64
		lastLimit uint64
		delivered uint64 // next index expected in order
		tcpSeen   uint64 // TCP's view: packets below are acknowledged
		lastProg  int
	)
	send := func(now int, index uint64) {
		t.Helper()
		n, err := enc.Add(index, payloads[index])
		if err != nil {
			t.Fatalf("%v: Add(%d): %v", s, index, err)
		}
		fn, err := fastEnc.Add(index, nil)
		if err != nil || fn != n {
			t.Fatalf("%v: fast Add(%d) = %d, %v; payload mode gave %d", s, index, fn, err, n)
		}
		for range n {
			var f inflight
			if st := enc.State(); st.Limit < st.End {
				res.limited++
			}
			if err := enc.Next(&f.pkt); err != nil {
				t.Fatalf("%v: Next: %v", s, err)
			}
			if err := fastEnc.Next(&f.fast); err != nil {
				t.Fatalf("%v: fast Next: %v", s, err)
			}
			if f.pkt.Start != f.fast.Start || !bytes.Equal(f.pkt.Coeffs, f.fast.Coeffs) {
				t.Fatalf("%v: fast and payload encoders diverge: start %d/%d coeffs %x/%x", s, f.pkt.Start, f.fast.Start, f.pkt.Coeffs, f.fast.Coeffs)
			}
			for i, c := range f.pkt.Coeffs {
				if c == 0 {
					t.Fatalf("%v: zero coefficient for packet %d", s, f.pkt.Start+uint64(i))
				}
			}
			res.coded++
			if net.Float64() < s.loss {
				continue
			}
			f.due = now + s.delay
			if s.reorder {
				f.due += net.IntN(6) // jitter: later packets can overtake
			}
			fwd = append(fwd, f)
		}
	}

	now := 0
	for ; delivered < uint64(s.packets); now++ {
		if now > 1_000_000 {
			t.Fatalf("%v: no progress after %d ticks: delivered %d of %d, decoder %+v", s, now, delivered, s.packets, dec.State())
		}
		// Acknowledgements due now.
		for len(acks) > 0 && acks[0].due <= now {
			a := acks[0]
			acks = acks[1:]
			for _, e := range []*Encoder{enc, fastEnc} {
				if err := e.OnAck(a.seen, a.limit); err != nil {
					t.Fatalf("%v: OnAck(%d, %d): %v", s, a.seen, a.limit, err)
				}
			}
			if a.seen > tcpSeen {
				tcpSeen = a.seen
				lastProg = now
			}
		}
		// Coded packets due now, in sending order unless jittered.
		var due []inflight
		kept := fwd[:0]
		for _, f := range fwd {
			if f.due <= now {
				due = append(due, f)
			} else {
				kept = append(kept, f)
			}
		}
		fwd = kept
		for i := range due {
			r, err := dec.Receive(&due[i].pkt)
			fr, ferr := fastDec.Receive(&due[i].fast)
			if (err == nil) != (ferr == nil) || r != fr {
				t.Fatalf("%v: fast decoder diverges: %+v, %v vs %+v, %v", s, fr, ferr, r, err)
			}
			if err != nil {
				if s.reorder && errors.Is(err, ErrStale) {
					res.stale++
					continue
				}
				t.Fatalf("%v: Receive: %v", s, err)
			}
			if r.Ack < lastAck {
				t.Fatalf("%v: acknowledgement moved backwards: %d after %d", s, r.Ack, lastAck)
			}
			if r.Limit < lastLimit {
				t.Fatalf("%v: limit moved backwards: %d after %d", s, r.Limit, lastLimit)
			}
			if r.Innovative {
				res.innovative++
				if r.NewlySeen < lastAck || r.NewlySeen >= dec.State().Highest {
					t.Fatalf("%v: newly seen packet %d outside [%d, %d)", s, r.NewlySeen, lastAck, dec.State().Highest)
				}
			}
			lastAck, lastLimit = r.Ack, r.Limit
			if r.DeliverFrom != delivered {
				t.Fatalf("%v: delivery resumes at %d, want %d", s, r.DeliverFrom, delivered)
			}
			if r.DeliverTo > r.Ack {
				t.Fatalf("%v: delivered up to %d but only packets below %d are seen", s, r.DeliverTo, r.Ack)
			}
			for k := r.DeliverFrom; k < r.DeliverTo; k++ {
				got, ok := dec.Payload(k)
				if !ok {
					t.Fatalf("%v: packet %d reported decoded but has no payload", s, k)
				}
				if !bytes.Equal(got, payloads[k]) {
					t.Fatalf("%v: packet %d decoded as %x, want %x", s, k, got, payloads[k])
				}
				if _, ok := fastDec.Payload(k); ok {
					t.Fatalf("%v: fast decoder returned a payload", s)
				}
			}
			delivered = r.DeliverTo
			res.backlog = max(res.backlog, int(r.Ack-r.DeliverTo))
			// Sundararajan et al.: acknowledge every received packet.
			acks = append(acks, ackMsg{due: now + s.ackDelay, seen: r.Ack, limit: r.Limit})
		}
		// TCP: send a new packet per tick while its window allows, or
		// retransmit the oldest unacknowledged one after a timeout.
		end := enc.State().End
		switch {
		case end < uint64(s.packets) && end-tcpSeen < uint64(s.cwnd) && !enc.Full():
			send(now, end)
			lastProg = max(lastProg, now-s.rto/2)
		case now-lastProg >= s.rto && tcpSeen < end:
			send(now, tcpSeen)
			lastProg = now
		}
	}
	// Drain the remaining acknowledgements, as the sender would.
	for _, a := range acks {
		for _, e := range []*Encoder{enc, fastEnc} {
			if err := e.OnAck(a.seen, a.limit); err != nil {
				t.Fatalf("%v: OnAck(%d, %d): %v", s, a.seen, a.limit, err)
			}
		}
	}
	res.ticks = now

	// Bookkeeping frees every packet: nothing is left in either window.
	if n := enc.Len(); n != 0 {
		t.Errorf("%v: encoder still holds %d packets after every packet was acknowledged", s, n)
	}
	st := dec.State()
	if st.Decoded != uint64(s.packets) || st.Seen != uint64(s.packets) || st.Rank != 0 {
		t.Errorf("%v: final decoder state %+v, want Decoded = Seen = %d, Rank = 0", s, st, s.packets)
	}
	checkDecoder(t, dec)
	checkDecoder(t, fastDec)
	return res
}

// checkDecoder verifies the decoder's internal invariants: RREF rows at their
// pivot positions, all other rows and the scratch vector zero.
func checkDecoder(t *testing.T, d *Decoder) {
	t.Helper()
	for i, v := range d.vec {
		if v != 0 {
			t.Fatalf("scratch vector not zero at position %d", i)
		}
	}
	pivots := 0
	for col := d.dec; col < d.dec+d.window; col++ {
		p := col & d.mask
		row := d.rows[p]
		if !d.pivot[p] {
			if !isZeroRange(row, 0, d.mask+1, d.mask) {
				t.Fatalf("row at free position %d (column %d) is not zero", p, col)
			}
			continue
		}
		pivots++
		if col >= d.hi {
			t.Fatalf("pivot at column %d beyond highest column %d", col, d.hi)
		}
		if row[p] != 1 {
			t.Fatalf("row %d has %#x at its pivot, want 1", col, row[p])
		}
		if !isZeroRange(row, col+1-(d.mask+1), col, d.mask) {
			t.Fatalf("row %d has entries before its pivot", col)
		}
		for other := d.dec; other < d.hi; other++ {
			if other != col && d.pivot[other&d.mask] && row[other&d.mask] != 0 {
				t.Fatalf("row %d has an entry in pivot column %d: not reduced", col, other)
			}
		}
	}
	if pivots != d.rank {
		t.Fatalf("rank %d but %d pivots", d.rank, pivots)
	}
}

// TestDecodesUnderRandomErasures is the property test of the issue: under
// random erasure patterns, random redundancy, windows and payloads, every
// packet is decoded exactly once, in order, with the original bytes;
// acknowledgements and limits never move backwards; the fast mode makes the
// same decisions; and the windows end empty.
func TestDecodesUnderRandomErasures(t *testing.T) {
	cases := 150
	if testing.Short() {
		cases = 30
	}
	gen := rand.New(rand.NewPCG(7, 7))
	var total result
	for i := range cases {
		s := scenario{
			window:     1 + gen.IntN(48),
			payload:    1 + gen.IntN(64),
			redundancy: 1 + math.Round(gen.Float64()*100)/100,
			loss:       []float64{0, 0.01, 0.1, 0.3, 0.5}[gen.IntN(5)],
			packets:    1 + gen.IntN(300),
			delay:      gen.IntN(8),
			ackDelay:   gen.IntN(8),
			seed:       uint64(i),
		}
		s.cwnd = 1 + gen.IntN(s.window)
		s.rto = 2*(s.delay+s.ackDelay) + 4
		r := s.run(t)
		total.coded += r.coded
		total.innovative += r.innovative
		total.backlog = max(total.backlog, r.backlog)
		total.limited += r.limited
	}
	// The cases must exercise what they claim to: packets seen long before
	// they decode, and the decoder's limit holding the encoder back.
	if total.backlog < 10 || total.limited == 0 {
		t.Errorf("weak test cases: largest seen-but-undecoded backlog %d (want >= 10), %d limited combinations (want > 0)", total.backlog, total.limited)
	}
	t.Logf("%d coded packets, %d innovative, largest backlog %d, %d limited", total.coded, total.innovative, total.backlog, total.limited)
}

// TestReorderingKeepsAcknowledgementsMonotone delivers coded packets out of
// order: acknowledgements still never move backwards and data is intact.
func TestReorderingKeepsAcknowledgementsMonotone(t *testing.T) {
	stale := 0
	for seed := range uint64(20) {
		s := scenario{window: 8, payload: 16, redundancy: 1.3, loss: 0.1, cwnd: 8,
			packets: 400, delay: 3, ackDelay: 2, rto: 14, seed: seed, reorder: true}
		stale += s.run(t).stale
	}
	t.Logf("%d stale packets rejected", stale)
}

// TestNoLossUnitRedundancyIsPlainTCP checks that with R = 1 and no loss the
// coding layer is transparent: one coded packet per packet from TCP, every
// packet innovative, the acknowledgement of packet k is k+1 (as TCP's
// cumulative ACK would be), and each packet is delivered on arrival.
func TestNoLossUnitRedundancyIsPlainTCP(t *testing.T) {
	for _, ackDelay := range []int{0, 1, 5} {
		cfg := Config{Window: 16, PayloadSize: 8}
		enc, _ := NewEncoder(EncoderConfig{Config: cfg, Redundancy: 1}, rand.NewPCG(3, 3))
		dec, _ := NewDecoder(cfg)
		var acks []Receipt
		var pkt Coded
		for k := range uint64(200) {
			for len(acks) > ackDelay {
				if err := enc.OnAck(acks[0].Ack, acks[0].Limit); err != nil {
					t.Fatal(err)
				}
				acks = acks[1:]
			}
			n, err := enc.Add(k, []byte{byte(k), byte(k >> 8)})
			if err != nil || n != 1 {
				t.Fatalf("Add(%d) = %d, %v, want 1, nil", k, n, err)
			}
			if err := enc.Next(&pkt); err != nil {
				t.Fatal(err)
			}
			r, err := dec.Receive(&pkt)
			if err != nil {
				t.Fatal(err)
			}
			want := Receipt{Innovative: true, NewlySeen: k, Ack: k + 1, Limit: k + 1 + 16, DeliverFrom: k, DeliverTo: k + 1}
			if r != want {
				t.Fatalf("ackDelay %d, packet %d: receipt %+v, want %+v", ackDelay, k, r, want)
			}
			if got, _ := dec.Payload(k); !bytes.Equal(got, []byte{byte(k), byte(k >> 8)}) {
				t.Fatalf("packet %d decoded as %x", k, got)
			}
			acks = append(acks, r)
		}
	}
}

// TestCreditRule checks Sundararajan et al.'s rule: after k packets from
// TCP, floor(k*R) coded packets have been sent, exactly, for decimal R.
func TestCreditRule(t *testing.T) {
	tests := []struct {
		r       float64
		pattern []int // coded packets for the first packets
	}{
		{1, []int{1, 1, 1, 1, 1}},
		{1.2, []int{1, 1, 1, 1, 2, 1, 1, 1, 1, 2}},
		{1.5, []int{1, 2, 1, 2}},
		{2, []int{2, 2, 2}},
		{1.107, nil},
		{1.12, nil},
		{3.333333, nil},
	}
	for _, tt := range tests {
		cfg := EncoderConfig{Config: Config{Window: 4096}, Redundancy: tt.r}
		enc, err := NewEncoder(cfg, rand.NewPCG(1, 2))
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for k := range 4000 {
			n, err := enc.Add(uint64(k), nil)
			if err != nil {
				t.Fatalf("R=%g: Add(%d): %v", tt.r, k, err)
			}
			if k < len(tt.pattern) && n != tt.pattern[k] {
				t.Errorf("R=%g: packet %d sends %d coded packets, want %d", tt.r, k, n, tt.pattern[k])
			}
			total += n
			// floor((k+1)*R) in exact decimal arithmetic (R has <= 6 decimals).
			want := int(int64(k+1) * int64(math.Round(tt.r*1e6)) / 1e6)
			if total != want {
				t.Fatalf("R=%g: after %d packets %d coded packets sent, want floor(%d*R) = %d", tt.r, k+1, total, k+1, want)
			}
			if k%1000 == 999 {
				if err := enc.OnAck(uint64(k+1), uint64(k+1)+4096); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestRetransmissionOfSeenPacketSendsNothing: with an empty window there is
// nothing to code, so a retransmission earns no credit.
func TestRetransmissionOfSeenPacketSendsNothing(t *testing.T) {
	enc, _ := NewEncoder(EncoderConfig{Config: Config{Window: 4}, Redundancy: 1.5}, rand.NewPCG(1, 1))
	if n, _ := enc.Add(0, nil); n != 1 {
		t.Fatalf("first Add sends %d, want 1", n)
	}
	if err := enc.OnAck(1, 5); err != nil {
		t.Fatal(err)
	}
	if n, err := enc.Add(0, nil); n != 0 || err != nil {
		t.Fatalf("retransmission of a seen packet: %d, %v, want 0, nil", n, err)
	}
	if c := enc.State().Credit; c != 0.5 {
		t.Fatalf("credit = %g, want 0.5 (unchanged)", c)
	}
	var pkt Coded
	if err := enc.Next(&pkt); !errors.Is(err, ErrEmptyWindow) {
		t.Fatalf("Next on an empty window: %v, want ErrEmptyWindow", err)
	}
}

// TestCoefficientsUniformNonZero checks by counting that coefficients are
// uniform over the 255 non-zero elements.
func TestCoefficientsUniformNonZero(t *testing.T) {
	enc, _ := NewEncoder(EncoderConfig{Config: Config{Window: 255}, Redundancy: 1}, rand.NewPCG(9, 9))
	for k := range uint64(255) {
		if _, err := enc.Add(k, nil); err != nil {
			t.Fatal(err)
		}
	}
	var counts [256]int
	var pkt Coded
	const rounds = 400 // 255*400 draws, 400 expected per value
	for range rounds {
		if err := enc.Next(&pkt); err != nil {
			t.Fatal(err)
		}
		for _, c := range pkt.Coeffs {
			counts[c]++
		}
	}
	if counts[0] != 0 {
		t.Fatalf("zero drawn %d times", counts[0])
	}
	// Each count is Binomial(102000, 1/255): mean 400, sd about 20. A
	// 5-sd band fails a correct generator with probability ~1e-4 over all
	// 255 values; the seed is fixed anyway.
	for v := 1; v < 256; v++ {
		if counts[v] < 300 || counts[v] > 500 {
			t.Errorf("coefficient %#x drawn %d times, want 400 +- 100", v, counts[v])
		}
	}
}

// TestSameSeedSameCoding checks reproducibility: equal seeds give equal
// coded packets, different seeds different ones.
func TestSameSeedSameCoding(t *testing.T) {
	gen := func(seed uint64) []byte {
		cfg := EncoderConfig{Config: Config{Window: 8, PayloadSize: 4}, Redundancy: 1.25}
		enc, _ := NewEncoder(cfg, rand.NewPCG(seed, 0))
		var out []byte
		var pkt Coded
		for k := range uint64(40) {
			n, _ := enc.Add(k, []byte{byte(k)})
			for range n {
				if err := enc.Next(&pkt); err != nil {
					t.Fatal(err)
				}
				out = append(out, pkt.Coeffs...)
				out = append(out, pkt.Payload...)
			}
			_ = enc.OnAck(k-min(k, 4), k-min(k, 4)+8)
		}
		return out
	}
	a, b, c := gen(1), gen(1), gen(2)
	if !bytes.Equal(a, b) {
		t.Error("two runs with seed 1 differ")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 1 and 2 give identical coding")
	}
}

// referenceRREF computes the reduced row echelon form of vectors over
// columns [0, n) from scratch (not incrementally), and returns which columns
// are pivots and which pivot rows are unit vectors.
func referenceRREF(vectors [][]byte, n int) (pivot, unit []bool) {
	var rows [][]byte
	for _, v := range vectors {
		rows = append(rows, append([]byte(nil), v...))
	}
	pivot, unit = make([]bool, n), make([]bool, n)
	r := 0
	rowOf := make([]int, n)
	for col := 0; col < n && r < len(rows); col++ {
		sel := -1
		for i := r; i < len(rows); i++ {
			if rows[i][col] != 0 {
				sel = i
				break
			}
		}
		if sel < 0 {
			continue
		}
		rows[r], rows[sel] = rows[sel], rows[r]
		inv := Inv(rows[r][col])
		for j := range rows[r] {
			rows[r][j] = slowMul(rows[r][j], inv)
		}
		for i := range rows {
			if i != r && rows[i][col] != 0 {
				f := rows[i][col]
				for j := range rows[i] {
					rows[i][j] ^= slowMul(f, rows[r][j])
				}
			}
		}
		pivot[col], rowOf[col] = true, r
		r++
	}
	for col := range n {
		if !pivot[col] {
			continue
		}
		unit[col] = true
		for j, v := range rows[rowOf[col]] {
			if j != col && v != 0 {
				unit[col] = false
			}
		}
	}
	return pivot, unit
}

// TestSeenAndDecodedMatchReference feeds arbitrary combinations (sparse, with
// zero coefficients and arbitrary windows, so that pivots can land past the
// oldest unseen packet) and compares the decoder's acknowledgement and
// deliveries with a from-scratch RREF of everything received.
func TestSeenAndDecodedMatchReference(t *testing.T) {
	const n = 12
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 5))
		dec, err := NewDecoder(Config{Window: 16})
		if err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		lastAck := uint64(0)
		for step := 0; step < 40; step++ {
			start := uint64(rng.IntN(n))
			width := 1 + rng.IntN(n-int(start))
			pkt := Coded{Start: start, Coeffs: make([]byte, width)}
			for i := range pkt.Coeffs {
				if rng.IntN(3) == 0 { // sparse: many zeros
					pkt.Coeffs[i] = byte(1 + rng.IntN(3))
				}
			}
			// Columns already delivered are known: the reference treats
			// them as unit rows the receiver holds.
			r, err := dec.Receive(&pkt)
			if err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			full := make([]byte, n)
			copy(full[start:], pkt.Coeffs)
			got = append(got, full)
			pivot, unit := referenceRREF(got, n)
			wantAck := uint64(0)
			for wantAck < n && pivot[wantAck] {
				wantAck++
			}
			wantDelivered := uint64(0)
			for wantDelivered < n && pivot[wantDelivered] && unit[wantDelivered] {
				wantDelivered++
			}
			if r.Ack != wantAck {
				t.Fatalf("seed %d step %d: Ack = %d, want %d (first non-pivot column)", seed, step, r.Ack, wantAck)
			}
			if r.DeliverTo != wantDelivered {
				t.Fatalf("seed %d step %d: delivered up to %d, want %d", seed, step, r.DeliverTo, wantDelivered)
			}
			if r.Ack < lastAck {
				t.Fatalf("seed %d step %d: Ack moved backwards %d -> %d", seed, step, lastAck, r.Ack)
			}
			lastAck = r.Ack
			rank := 0
			for _, p := range pivot {
				if p {
					rank++
				}
			}
			if st := dec.State(); uint64(st.Rank)+st.Decoded != uint64(rank) {
				t.Fatalf("seed %d step %d: rank %d + decoded %d, want rank %d", seed, step, st.Rank, st.Decoded, rank)
			}
			checkDecoder(t, dec)
		}
	}
}

// TestLimitBackPressure: a decoder that cannot decode holds the encoder at
// its limit instead of growing; once the missing degree of freedom arrives,
// everything decodes and the limit moves on.
func TestLimitBackPressure(t *testing.T) {
	cfg := Config{Window: 8, PayloadSize: 2}
	enc, _ := NewEncoder(EncoderConfig{Config: cfg, Redundancy: 1}, rand.NewPCG(4, 4))
	dec, _ := NewDecoder(cfg)
	var pkt Coded
	var first Coded
	// Packet 0's only combination is lost; packets 1..7 each bring one
	// combination, so the receiver sees 0..6 but decodes nothing.
	for k := range uint64(8) {
		if _, err := enc.Add(k, []byte{byte(k), 0xaa}); err != nil {
			t.Fatal(err)
		}
		if err := enc.Next(&pkt); err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			first = Coded{Start: pkt.Start, Coeffs: append([]byte(nil), pkt.Coeffs...), Payload: append([]byte(nil), pkt.Payload...)}
			continue
		}
		r, err := dec.Receive(&pkt)
		if err != nil {
			t.Fatal(err)
		}
		if r.DeliverTo != 0 || r.Ack != k || r.Limit != 8 {
			t.Fatalf("packet %d: receipt %+v, want nothing delivered, Ack %d, Limit 8", k, r, k)
		}
		if err := enc.OnAck(r.Ack, r.Limit); err != nil {
			t.Fatal(err)
		}
	}
	// The encoder's window [7, 8) is not full, so TCP can hand packet 8,
	// but the decoder's limit keeps it out of the combinations.
	if _, err := enc.Add(8, []byte{8}); err != nil {
		t.Fatal(err)
	}
	if err := enc.Next(&pkt); err != nil {
		t.Fatal(err)
	}
	if pkt.Start != 7 || len(pkt.Coeffs) != 1 {
		t.Fatalf("combination spans [%d, +%d), want [7, +1): the limit 8 must exclude packet 8", pkt.Start, len(pkt.Coeffs))
	}
	// A packet that ignores the limit is refused.
	bad := Coded{Start: 7, Coeffs: []byte{1, 1}, Payload: make([]byte, 4)}
	if _, err := dec.Receive(&bad); !errors.Is(err, ErrWindowFull) {
		t.Fatalf("packet beyond the limit: %v, want ErrWindowFull", err)
	}
	// The late combination of packet 0 makes the system full rank: all of
	// 0..7 decode at once.
	r, err := dec.Receive(&first)
	if err != nil {
		t.Fatal(err)
	}
	if r.DeliverFrom != 0 || r.DeliverTo != 8 || r.Limit != 16 {
		t.Fatalf("after the missing combination: %+v, want delivery [0, 8) and Limit 16", r)
	}
	for k := range uint64(8) {
		if got, _ := dec.Payload(k); !bytes.Equal(got, []byte{byte(k), 0xaa}) {
			t.Fatalf("packet %d decoded as %x", k, got)
		}
	}
	// The combination of packet 7 is now redundant.
	if r, err := dec.Receive(&pkt); err != nil || r.Innovative {
		t.Fatalf("redundant combination: %+v, %v, want not innovative", r, err)
	}
}

func TestBadInput(t *testing.T) {
	src := rand.NewPCG(1, 1)
	encTests := []struct {
		name string
		cfg  EncoderConfig
		src  rand.Source
		want string
	}{
		{"zero window", EncoderConfig{Config: Config{Window: 0}, Redundancy: 1}, src, "Window must be in [1, 4096]"},
		{"negative window", EncoderConfig{Config: Config{Window: -3}, Redundancy: 1}, src, "Window must be in [1, 4096]"},
		{"huge window", EncoderConfig{Config: Config{Window: 5000}, Redundancy: 1}, src, "Window must be in [1, 4096]"},
		{"R below 1", EncoderConfig{Config: Config{Window: 4}, Redundancy: 0.99}, src, "Redundancy R must be in [1, 100]"},
		{"R zero", EncoderConfig{Config: Config{Window: 4}}, src, "Redundancy R must be in [1, 100]"},
		{"R NaN", EncoderConfig{Config: Config{Window: 4}, Redundancy: math.NaN()}, src, "Redundancy R must be in [1, 100]"},
		{"R Inf", EncoderConfig{Config: Config{Window: 4}, Redundancy: math.Inf(1)}, src, "Redundancy R must be in [1, 100]"},
		{"negative payload", EncoderConfig{Config: Config{Window: 4, PayloadSize: -1}, Redundancy: 1}, src, "PayloadSize must be in [0, 65535]"},
		{"nil source", EncoderConfig{Config: Config{Window: 4}, Redundancy: 1}, nil, "random source"},
	}
	for _, tt := range encTests {
		_, err := NewEncoder(tt.cfg, tt.src)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewEncoder error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := NewDecoder(Config{}); err == nil || !strings.Contains(err.Error(), "Window must be in [1, 4096]") {
		t.Errorf("NewDecoder(Config{}) error %v, want a Window range error", err)
	}

	enc, _ := NewEncoder(EncoderConfig{Config: Config{Window: 2, PayloadSize: 4}, Redundancy: 1}, src)
	if _, err := enc.Add(1, nil); err == nil || !strings.Contains(err.Error(), "skips ahead") {
		t.Errorf("Add with a gap: %v, want a skip-ahead error", err)
	}
	if _, err := enc.Add(0, make([]byte, 5)); err == nil || !strings.Contains(err.Error(), "exceeds PayloadSize 4") {
		t.Errorf("Add of an oversized payload: %v", err)
	}
	_, _ = enc.Add(0, nil)
	_, _ = enc.Add(1, nil)
	if _, err := enc.Add(2, nil); !errors.Is(err, ErrWindowFull) || !enc.Full() {
		t.Errorf("Add to a full window: %v (Full=%v), want ErrWindowFull", err, enc.Full())
	}
	if err := enc.OnAck(3, 10); err == nil {
		t.Error("OnAck beyond the newest packet accepted")
	}
	fast, _ := NewEncoder(EncoderConfig{Config: Config{Window: 2}, Redundancy: 1}, src)
	if _, err := fast.Add(0, []byte{1}); err == nil || !strings.Contains(err.Error(), "fast mode") {
		t.Errorf("payload in the fast mode: %v", err)
	}

	dec, _ := NewDecoder(Config{Window: 4, PayloadSize: 4})
	decTests := []struct {
		name string
		pkt  *Coded
		want string
	}{
		{"nil", nil, "nil packet"},
		{"no coefficients", &Coded{Payload: make([]byte, 6)}, "no coefficients"},
		{"short payload", &Coded{Coeffs: []byte{1}, Payload: make([]byte, 5)}, "want PayloadSize+2 = 6"},
		{"beyond limit", &Coded{Start: 2, Coeffs: []byte{1, 1, 1}, Payload: make([]byte, 6)}, "accepts indices below 4"},
		{"overflow", &Coded{Start: math.MaxUint64, Coeffs: []byte{1, 1}, Payload: make([]byte, 6)}, "overflows"},
	}
	for _, tt := range decTests {
		_, err := dec.Receive(tt.pkt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Receive(%s): %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	fastDec, _ := NewDecoder(Config{Window: 4})
	if _, err := fastDec.Receive(&Coded{Coeffs: []byte{1}, Payload: []byte{1}}); err == nil || !strings.Contains(err.Error(), "fast mode") {
		t.Errorf("payload to a fast decoder: %v", err)
	}
	if st := dec.State(); st.Received != 0 || st.Seen != 0 {
		t.Errorf("rejected packets changed the decoder: %+v", st)
	}
}

// TestStalePacketRejected: a combination that involves a packet delivered
// more than a window ago cannot be used and is rejected without effect.
func TestStalePacketRejected(t *testing.T) {
	dec, _ := NewDecoder(Config{Window: 2})
	for k := range uint64(5) {
		if r, err := dec.Receive(&Coded{Start: k, Coeffs: []byte{1}}); err != nil || r.DeliverTo != k+1 {
			t.Fatalf("packet %d: %+v, %v", k, r, err)
		}
	}
	// Delivered 0..4, kept 3..4.
	_, err := dec.Receive(&Coded{Start: 2, Coeffs: []byte{7, 1, 1, 1}})
	if !errors.Is(err, ErrStale) {
		t.Fatalf("combination over forgotten packet 2: %v, want ErrStale", err)
	}
	if st := dec.State(); st.Stale != 1 || st.Received != 5 {
		t.Fatalf("state after a stale packet: %+v, want Stale 1, Received 5", st)
	}
	// A zero coefficient on the forgotten packet is harmless.
	if r, err := dec.Receive(&Coded{Start: 2, Coeffs: []byte{0, 1, 1, 1}}); err != nil || !r.Innovative || r.NewlySeen != 5 {
		t.Fatalf("combination with a zero coefficient on the forgotten packet: %+v, %v", r, err)
	}
}

// FuzzCoding runs the scenario with fuzzed parameters; the seed corpus runs
// as part of the ordinary tests.
func FuzzCoding(f *testing.F) {
	f.Add(uint64(1), uint8(10), uint8(20), uint8(8), uint16(100), uint8(3))
	f.Add(uint64(2), uint8(0), uint8(0), uint8(1), uint16(50), uint8(0))
	f.Add(uint64(3), uint8(40), uint8(100), uint8(30), uint16(200), uint8(5))
	f.Fuzz(func(t *testing.T, seed uint64, lossPct, extraR, window uint8, packets uint16, delay uint8) {
		s := scenario{
			window:     1 + int(window%64),
			payload:    8,
			redundancy: 1 + float64(extraR%200)/100,
			loss:       float64(lossPct%60) / 100,
			packets:    1 + int(packets%500),
			delay:      int(delay % 10),
			ackDelay:   int(delay % 7),
			seed:       seed,
		}
		s.cwnd = s.window
		s.rto = 2*(s.delay+s.ackDelay) + 4
		s.run(t)
	})
}
