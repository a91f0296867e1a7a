package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
)

// mustParse parses an inline scenario.
func mustParse(t *testing.T, yml string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse([]byte(yml), "test.yaml")
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, yml)
	}
	return s
}

func run(t *testing.T, s *scenario.Scenario) (*Result, *network.Network) {
	t.Helper()
	r, n, err := Run(context.Background(), s)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return r, n
}

// checkConservation asserts that every packet taken from the pool is either
// back in it or still held by the network: none leaked, none freed twice.
func checkConservation(t *testing.T, n *network.Network) {
	t.Helper()
	if live, held := n.Pool.Live(), n.InFlight(); live != held {
		t.Errorf("packet conservation: %d packets alive, network holds %d", live, held)
	}
}

func lossyScenario(loss string, bytes string, n int, seed int) string {
	return fmt.Sprintf(`
name: lossy
seed: %d
duration: 600s
bottleneck:
  rate: 10Mbps
  delay: 20ms
  queue: {limit: 50}
  loss: %s
flows:
  - name: f
    cc: newreno
    bytes: %s
    count: %d
`, seed, loss, bytes, n)
}

// TestExactlyOnceUnderLoss checks that finite transfers deliver every byte
// exactly once and in order under heavy random and bursty loss, with packet
// conservation.
func TestExactlyOnceUnderLoss(t *testing.T) {
	losses := []string{
		"{model: bernoulli, p: 0.01}",
		"{model: bernoulli, p: 0.1}",
		"{model: bernoulli, p: 0.3}",
		"{model: gilbert-elliott, p: 0.02, r: 0.3}",
		"{model: gilbert-elliott, p: 0.05, r: 0.1, loss_good: 0.01, loss_bad: 0.8}",
	}
	for _, l := range losses {
		for _, cc := range []string{"newreno", "fixed"} {
			t.Run(cc+" "+l, func(t *testing.T) {
				s := mustParse(t, lossyScenario(l, "300KB", 3, 7))
				if err := s.Set("cc", cc); err != nil {
					t.Fatal(err)
				}
				if cc == "fixed" {
					s.Set("cc.window", "40000")
				}
				if err := s.Validate(); err != nil {
					t.Fatal(err)
				}
				r, n := run(t, s)
				for i, f := range n.Flows {
					if !f.Done() {
						t.Fatalf("flow %s did not finish in %v (delivered %d of %d)", f.Name, s.Duration.V, f.Receiver.DeliveredBytes, f.Bytes)
					}
					// rcvNxt only advances over contiguous data, so
					// delivered == size means every byte arrived, in order,
					// and was delivered once.
					if got, want := f.Receiver.DeliveredBytes, f.Bytes; got != want {
						t.Errorf("flow %d delivered %d bytes, want exactly %d", i, got, want)
					}
					if got := f.Receiver.RcvNxt(); got != int64(f.Bytes) {
						t.Errorf("flow %d rcvNxt %d, want %d", i, got, f.Bytes)
					}
					// The run ends when the last receiver completes, so a
					// sender may still await its final ACKs; it must never
					// have had more acknowledged than was sent.
					if st := f.Sender.State(); st.SndUna > st.SndNxt || st.SndNxt > int64(f.Bytes) {
						t.Errorf("flow %d sender una %d nxt %d beyond size %d", i, st.SndUna, st.SndNxt, f.Bytes)
					}
					if r.Flows[i].FCT == nil {
						t.Errorf("flow %d has no FCT", i)
					}
				}
				checkConservation(t, n)
			})
		}
	}
}

func TestDeterministic(t *testing.T) {
	yml := lossyScenario("{model: bernoulli, p: 0.02}", "2MB", 4, 3)
	var outs [2][]byte
	for i := range outs {
		r, _ := run(t, mustParse(t, yml))
		r.WallSeconds = 0
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = b
	}
	if string(outs[0]) != string(outs[1]) {
		t.Errorf("same scenario and seed gave different results:\n%s\n%s", outs[0], outs[1])
	}
	// A different seed must change the random losses.
	r, _ := run(t, mustParse(t, lossyScenario("{model: bernoulli, p: 0.02}", "2MB", 4, 4)))
	r.WallSeconds = 0
	b, _ := json.Marshal(r)
	if string(b) == string(outs[0]) {
		t.Errorf("seeds 3 and 4 gave identical results")
	}
}

// TestFlowResultRecoveryCounters: each flow's loss probes, fast
// recoveries and lost retransmissions in the result are its sender's, and
// a lossy run has some of each, so a study can read them from `cclab run
// --json`.
func TestFlowResultRecoveryCounters(t *testing.T) {
	// Twenty flows of about three segments' window each through a short
	// queue: drops, recoveries and tail probes.
	r, n := run(t, mustParse(t, `
name: probes
seed: 2
duration: 5s
bottleneck: {rate: 20Mbps, delay: 10ms, queue: {discipline: droptail, limit: 20}}
flows:
  - {name: bulk, cc: newreno, count: 20, start_spread: 0.5s}
`))
	if len(r.Flows) != len(n.Flows) {
		t.Fatalf("%d results for %d flows", len(r.Flows), len(n.Flows))
	}
	var probes, recoveries, lostRetx int64
	for i, f := range r.Flows {
		st := n.Flows[i].Sender.Stats()
		if f.LossProbes == nil || f.FastRecoveries == nil || f.LostRetransmits == nil {
			t.Fatalf("flow %d: loss_probes, fast_recoveries or lost_retransmits missing", i)
		}
		if got := n.Flows[i].Sender.LostRetransmits(); *f.LostRetransmits != got {
			t.Errorf("flow %d: %d lost retransmissions in the result, the sender's %d", i, *f.LostRetransmits, got)
		}
		lostRetx += *f.LostRetransmits
		if *f.LossProbes != st.TLPs || *f.FastRecoveries != st.FastRecoveries {
			t.Errorf("flow %d: %d loss probes and %d fast recoveries in the result, the sender's %d and %d", i, *f.LossProbes, *f.FastRecoveries, st.TLPs, st.FastRecoveries)
		}
		probes += *f.LossProbes
		recoveries += *f.FastRecoveries
	}
	if probes == 0 || recoveries == 0 || lostRetx == 0 {
		t.Errorf("%d loss probes, %d fast recoveries and %d lost retransmissions: the run does not exercise them", probes, recoveries, lostRetx)
	}
}

// TestFlowResultAcksCompressed: acks_compressed is each receiver's count
// when it compresses SACKs, and absent otherwise, so results without the
// option are unchanged.
func TestFlowResultAcksCompressed(t *testing.T) {
	const body = `
name: compress
seed: 2
duration: 5s
bottleneck: {rate: 20Mbps, delay: 20ms, queue: {discipline: droptail, limit: 30}}
flows:
  - {name: bulk, cc: cubic, count: 10, start_spread: 0.2s}
`
	r, n := run(t, mustParse(t, "transport: {sack_compression: true}\n"+body))
	var total int64
	for i, f := range r.Flows {
		if f.AcksCompressed == nil {
			t.Fatalf("flow %d: acks_compressed missing with sack_compression on", i)
		}
		if got := n.Flows[i].Receiver.AcksCompressed(); *f.AcksCompressed != got {
			t.Errorf("flow %d: acks_compressed %d, the receiver's %d", i, *f.AcksCompressed, got)
		}
		total += *f.AcksCompressed
	}
	if total == 0 {
		t.Error("no ACK compressed: the run does not exercise the compression")
	}
	r, _ = run(t, mustParse(t, body))
	for i, f := range r.Flows {
		if f.AcksCompressed != nil {
			t.Errorf("flow %d: acks_compressed %d without sack_compression", i, *f.AcksCompressed)
		}
	}
}
