package marlin

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/scenarios"
)

// TestEvaluateAllOnTrainingTimelines: with EvalConfig.Timeline the loss
// levels' runs each get a drawn timeline (so their rows differ from the
// scenario's timeline, the same for every scheme, and the report says
// which), while the unseen conditions keep their own timelines: their rows
// are identical to an evaluation without it.
func TestEvaluateAllOnTrainingTimelines(t *testing.T) {
	base, err := scenarios.Load("satcom-uhf")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ShippedCompactPolicy()
	if err != nil {
		t.Fatal(err)
	}
	cfg := EvalConfig{Base: base, Runs: 3, Losses: []float64{0.03}, Policy: p, Jobs: 1}
	plain, err := EvaluateAll(context.Background(), cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeline = TrainingTimeline()
	drawn, err := EvaluateAll(context.Background(), cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Timeline != "" || drawn.Timeline != "switch 5s-15s, background x0.8-1.2" {
		t.Fatalf("report timelines %q and %q", plain.Timeline, drawn.Timeline)
	}
	differ := 0
	for i, r := range drawn.Results {
		if r.TransferTime != plain.Results[i].TransferTime {
			differ++
		}
	}
	// Every scheme runs into the switch (drawn from 5-15 s) or a changed
	// background on some of its three transfers.
	if differ < len(drawn.Results)-1 {
		t.Errorf("%d of %d rows changed with drawn timelines, want nearly all", differ, len(drawn.Results))
	}
	if len(drawn.Unseen) != len(plain.Unseen) || len(drawn.Unseen) == 0 {
		t.Fatalf("%d and %d unseen conditions", len(drawn.Unseen), len(plain.Unseen))
	}
	for i, u := range drawn.Unseen {
		for j, r := range u.Results {
			if r != plain.Unseen[i].Results[j] {
				t.Errorf("%s, %s: %+v with drawn loss-level timelines, %+v without", u.Name, r.Scheme, r, plain.Unseen[i].Results[j])
			}
		}
	}
}

// TestTimelineDelayScale: Timeline.DelayScale scales the first link's
// one-way delay and every scheduled change's by two independent factors
// drawn within its range, after the switch time and the background scale,
// which stay those the same stream gives without it; a seed reproduces the
// draws; Train refuses a range that is not positive, increasing and at
// most 10.
func TestTimelineDelayScale(t *testing.T) {
	base := base(t)
	satcom, uhf := base.Bottleneck.Delay.V, base.Bottleneck.Schedule[0].Delay.V
	plainTL := TrainingTimeline()
	delayTL := plainTL
	delayTL.DelayScale = [2]float64{0.5, 1.5}
	if !strings.Contains(delayTL.String(), "link delays x0.5-1.5") {
		t.Errorf("timeline described as %q", delayTL.String())
	}
	draw := func(tl Timeline, seed uint64) *scenario.Scenario {
		s := base.Clone()
		tl.apply(s, rand.New(rand.NewPCG(seed, 0x6d61726c696e)))
		return s
	}
	independent := 0
	for seed := uint64(1); seed <= 50; seed++ {
		p, d := draw(plainTL, seed), draw(delayTL, seed)
		if p.Bottleneck.Schedule[0].At != d.Bottleneck.Schedule[0].At || p.Background[0].Sequence[0].Rate != d.Background[0].Sequence[0].Rate {
			t.Fatalf("seed %d: the delay draws moved the switch (%v, %v) or the background (%v, %v)", seed,
				p.Bottleneck.Schedule[0].At.V, d.Bottleneck.Schedule[0].At.V, p.Background[0].Sequence[0].Rate.V, d.Background[0].Sequence[0].Rate.V)
		}
		if p.Bottleneck.Delay.V != satcom || p.Bottleneck.Schedule[0].Delay.V != uhf {
			t.Fatalf("seed %d: delays changed without DelayScale", seed)
		}
		k1 := float64(d.Bottleneck.Delay.V) / float64(satcom)
		k2 := float64(d.Bottleneck.Schedule[0].Delay.V) / float64(uhf)
		for _, k := range []float64{k1, k2} {
			if k < 0.5-1e-6 || k > 1.5+1e-6 {
				t.Fatalf("seed %d: delay factor %g outside [0.5, 1.5]", seed, k)
			}
		}
		if math.Abs(k1-k2) > 0.05 {
			independent++
		}
		if again := draw(delayTL, seed); again.Bottleneck.Delay != d.Bottleneck.Delay || again.Bottleneck.Schedule[0].Delay != d.Bottleneck.Schedule[0].Delay {
			t.Fatalf("seed %d: the delay draws do not reproduce", seed)
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	if independent < 30 {
		t.Errorf("the two links' factors differ by more than 0.05 in %d of 50 draws, want most", independent)
	}
	for _, r := range [][2]float64{{0, 1}, {1.5, 0.5}, {1, 11}, {-1, 1}} {
		_, err := Train(context.Background(), TrainConfig{Base: base, Steps: 1, Randomize: true, Timeline: Timeline{DelayScale: r}})
		if err == nil || !strings.Contains(err.Error(), "link-delay scale") {
			t.Errorf("delay range %v: %v", r, err)
		}
	}
}

// TestTimelineRateAndQueueScale: Timeline.RateScale scales the first
// link's rate and every scheduled change's by two independent factors
// within its range, QueueScale the queue limit by a third, after every
// earlier draw, which stay those the same stream gives without them; a
// seed reproduces the draws, every drawn scenario validates, and Train
// refuses ranges that are not positive, increasing and at most 10.
func TestTimelineRateAndQueueScale(t *testing.T) {
	base := base(t)
	satcom, uhf, limit := base.Bottleneck.Rate.V, base.Bottleneck.Schedule[0].Rate.V, base.Bottleneck.Queue.Limit.Packets
	if limit == 0 {
		t.Fatal("the base's queue limit is not a packet count")
	}
	before := TrainingTimeline()
	before.DelayScale = [2]float64{0.5, 1.5}
	tl := before
	tl.RateScale, tl.QueueScale = [2]float64{0.5, 2}, [2]float64{0.5, 2}
	if d := tl.String(); !strings.Contains(d, "link rates x0.5-2") || !strings.Contains(d, "queue limit x0.5-2") {
		t.Errorf("timeline described as %q", d)
	}
	draw := func(tl Timeline, seed uint64) *scenario.Scenario {
		s := base.Clone()
		tl.apply(s, rand.New(rand.NewPCG(seed, 0x6d61726c696e)))
		return s
	}
	independent, lo, hi := 0, 0, 0
	for seed := uint64(1); seed <= 50; seed++ {
		p, d := draw(before, seed), draw(tl, seed)
		if p.Bottleneck.Schedule[0].At != d.Bottleneck.Schedule[0].At || p.Background[0].Sequence[0].Rate != d.Background[0].Sequence[0].Rate ||
			p.Bottleneck.Delay != d.Bottleneck.Delay || p.Bottleneck.Schedule[0].Delay != d.Bottleneck.Schedule[0].Delay {
			t.Fatalf("seed %d: the rate and queue draws moved an earlier draw", seed)
		}
		if p.Bottleneck.Rate.V != satcom || p.Bottleneck.Schedule[0].Rate.V != uhf || p.Bottleneck.Queue.Limit.Packets != limit {
			t.Fatalf("seed %d: rates or queue changed without their ranges", seed)
		}
		k1 := float64(d.Bottleneck.Rate.V) / float64(satcom)
		k2 := float64(d.Bottleneck.Schedule[0].Rate.V) / float64(uhf)
		kq := float64(d.Bottleneck.Queue.Limit.Packets) / float64(limit)
		for _, k := range []float64{k1, k2, kq} {
			if k < 0.5-0.01 || k > 2+0.01 {
				t.Fatalf("seed %d: factor %g outside [0.5, 2]", seed, k)
			}
		}
		if kq < 1 {
			lo++
		} else {
			hi++
		}
		if math.Abs(k1-k2) > 0.05 {
			independent++
		}
		if again := draw(tl, seed); again.Bottleneck.Rate != d.Bottleneck.Rate || again.Bottleneck.Schedule[0].Rate != d.Bottleneck.Schedule[0].Rate || again.Bottleneck.Queue.Limit != d.Bottleneck.Queue.Limit {
			t.Fatalf("seed %d: the draws do not reproduce", seed)
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	if independent < 30 || lo < 10 || hi < 10 {
		t.Errorf("of 50 draws: the two rates' factors differ by more than 0.05 in %d (want most), queue factors below 1 in %d and above in %d (want both often)", independent, lo, hi)
	}
	for _, c := range []struct {
		tl   Timeline
		want string
	}{{Timeline{RateScale: [2]float64{0, 1}}, "link-rate scale"}, {Timeline{RateScale: [2]float64{2, 1}}, "link-rate scale"},
		{Timeline{QueueScale: [2]float64{1, 11}}, "queue-limit scale"}, {Timeline{QueueScale: [2]float64{-1, 1}}, "queue-limit scale"}} {
		_, err := Train(context.Background(), TrainConfig{Base: base, Steps: 1, Randomize: true, Timeline: c.tl})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c.tl, err)
		}
	}
}

// TestHeldOutConditions: EvalConfig.HeldOut appends the five held-out
// conditions after the unseen ones, marked as such, and each is the
// scenario docs/marlin.md describes: its rows equal those of an
// evaluation of the base scenario changed by hand (as `--set` changes it).
func TestHeldOutConditions(t *testing.T) {
	base := base(t)
	p, err := ShippedCompactPolicy()
	if err != nil {
		t.Fatal(err)
	}
	cfg := EvalConfig{Base: base, Runs: 2, Losses: []float64{0.03}, Policy: p, HeldOut: true}
	rep, err := EvaluateAll(context.Background(), cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, u := range rep.Unseen {
		names = append(names, u.Name)
		if u.HeldOut != (i >= 4) {
			t.Errorf("%s: held out %t", u.Name, u.HeldOut)
		}
	}
	want := []string{"switch at 5 s", "switch at 20 s", "background x1.5", "UHF back to SATCOM at 16 s",
		"switch at 3 s", "background x2", "SATCOM RTT 600 ms", "switch at 5 s, UHF 512 kbit/s", "switch at 5 s, UHF RTT 500 ms",
		"queue 50 packets", "switch at 5 s, UHF 128 kbit/s", "SATCOM 2 Mbit/s", "SATCOM RTT 1.6 s", "switch at 7 s, background x1.25",
		"mice x2", "UDP elephants 400 kbit/s", "SATCOM loss 1%", "switch at 12 s, UHF 384 kbit/s, RTT 400 ms", "queue 200 packets", "SATCOM 1.5 Mbit/s, RTT 1.4 s"}
	if strings.Join(names, "; ") != strings.Join(want, "; ") {
		t.Fatalf("conditions %q, want %q", names, want)
	}
	only, err := EvaluateAll(context.Background(), cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(only.Unseen) != 16 || !only.Unseen[0].HeldOut {
		t.Fatalf("held out without unseen: %d conditions", len(only.Unseen))
	}
	byHand := map[string]func(s *scenario.Scenario){
		"switch at 3 s":     func(s *scenario.Scenario) { s.Bottleneck.Schedule[0].At = scenario.Dur(3 * time.Second) },
		"SATCOM RTT 600 ms": func(s *scenario.Scenario) { s.Bottleneck.Delay = scenario.Dur(300 * time.Millisecond) },
		"switch at 5 s, UHF 512 kbit/s": func(s *scenario.Scenario) {
			s.Bottleneck.Schedule[0].At = scenario.Dur(5 * time.Second)
			s.Bottleneck.Schedule[0].Rate = scenario.RateOf(512 * units.Kbps)
		},
		"switch at 5 s, UHF RTT 500 ms": func(s *scenario.Scenario) {
			s.Bottleneck.Schedule[0].At = scenario.Dur(5 * time.Second)
			s.Bottleneck.Schedule[0].Delay = scenario.Dur(250 * time.Millisecond)
		},
		"background x2": func(s *scenario.Scenario) {
			for i := range s.Background[0].Sequence {
				if q := &s.Background[0].Sequence[i]; q.Type != "tcp" {
					q.Rate = scenario.RateOf(2 * q.Rate.V)
				}
			}
		},
		"queue 50 packets": func(s *scenario.Scenario) { s.Bottleneck.Queue.Limit = scenario.Size{Raw: "50", Packets: 50} },
		"switch at 5 s, UHF 128 kbit/s": func(s *scenario.Scenario) {
			s.Bottleneck.Schedule[0].At = scenario.Dur(5 * time.Second)
			s.Bottleneck.Schedule[0].Rate = scenario.RateOf(128 * units.Kbps)
		},
		"SATCOM 2 Mbit/s":  func(s *scenario.Scenario) { s.Bottleneck.Rate = scenario.RateOf(2 * units.Mbps) },
		"SATCOM RTT 1.6 s": func(s *scenario.Scenario) { s.Bottleneck.Delay = scenario.Dur(800 * time.Millisecond) },
		"switch at 7 s, background x1.25": func(s *scenario.Scenario) {
			s.Bottleneck.Schedule[0].At = scenario.Dur(7 * time.Second)
			for i := range s.Background[0].Sequence {
				if q := &s.Background[0].Sequence[i]; q.Type != "tcp" {
					q.Rate = scenario.RateOf(q.Rate.V * 5 / 4)
				}
			}
		},
		// The third set as `--set` writes it (docs/marlin.md).
		"mice x2": func(s *scenario.Scenario) {
			s.Background[0].Sequence[4].Rate = scenario.RateOf(1000 * units.Kbps)
			s.Background[0].Sequence[5].Rate = scenario.RateOf(1000 * units.Kbps)
		},
		"UDP elephants 400 kbit/s": func(s *scenario.Scenario) {
			s.Background[0].Sequence[0].Rate = scenario.RateOf(400 * units.Kbps)
			s.Background[0].Sequence[2].Rate = scenario.RateOf(400 * units.Kbps)
		},
		"SATCOM loss 1%": func(s *scenario.Scenario) { s.Bottleneck.Loss.P = 0.01 },
		"switch at 12 s, UHF 384 kbit/s, RTT 400 ms": func(s *scenario.Scenario) {
			s.Bottleneck.Schedule[0].At = scenario.Dur(12 * time.Second)
			s.Bottleneck.Schedule[0].Rate = scenario.RateOf(384 * units.Kbps)
			s.Bottleneck.Schedule[0].Delay = scenario.Dur(200 * time.Millisecond)
		},
		"queue 200 packets": func(s *scenario.Scenario) { s.Bottleneck.Queue.Limit = scenario.Size{Raw: "200", Packets: 200} },
		"SATCOM 1.5 Mbit/s, RTT 1.4 s": func(s *scenario.Scenario) {
			s.Bottleneck.Rate = scenario.RateOf(1500 * units.Kbps)
			s.Bottleneck.Delay = scenario.Dur(700 * time.Millisecond)
		},
	}
	for _, u := range only.Unseen {
		s := base.Clone()
		byHand[u.Name](s)
		c := cfg
		c.Base, c.HeldOut = s, false
		c.Schemes = conditionSchemes
		rows, _, err := Evaluate(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		for j, r := range rows {
			if r != u.Results[j] {
				t.Errorf("%s, %s: %+v as a held-out condition, %+v by hand", u.Name, r.Scheme, u.Results[j], r)
			}
		}
	}
}

// TestReportTablesNameConditions: report.html holds a table per
// condition, named as unseen or held out, with every scheme's row.
func TestReportTablesNameConditions(t *testing.T) {
	base := base(t)
	p, err := ShippedCompactPolicy()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := EvaluateAll(context.Background(), EvalConfig{Base: base, Runs: 1, Losses: []float64{0.03}, Policy: p, HeldOut: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := rep.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{"Every scheme and loss level", "Unseen condition: switch at 20 s", "Held-out condition: SATCOM RTT 600 ms", "mockets", "ideal"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if n, want := strings.Count(html, "condition: "), len(UnseenVariants())+len(HeldOutVariants()); n != want {
		t.Errorf("%d condition tables, want %d", n, want)
	}
}
