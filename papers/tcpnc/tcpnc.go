// Package tcpnc reproduces the experiments of Kim, Médard and Barros,
// "Modeling Network Coded TCP Throughput: A Simple Model and its
// Validation" in simulation, next to the analytical models: TCP
// and TCP/NC throughput against the erasure probability, the redundancy
// sweep at p = 0.0963, and two TCP/NC flows sharing a bottleneck.
//
// The slides' ns-2 setup is only partly described: erasures on the last hop
// only, a per-flow maximum of 0.5 Mbit/s, 1000 s runs averaged over 100
// runs. cclab uses a 0.5 Mbit/s bottleneck with a 50 ms one-way delay, a
// 50-packet DropTail queue and NewReno with ns-2's default window of 20
// packets (window_ = 20), all parameters of Config.
package tcpnc

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/cclab/cclab/analysis/model"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/par"
)

// Config sets up the study. Zero values take the defaults in brackets.
type Config struct {
	// Rate is the per-flow bottleneck [0.5 Mbit/s]; SharedRate the shared
	// bottleneck of the two-flow experiment [0.9 Mbit/s].
	Rate, SharedRate units.Bandwidth
	// Delay is the one-way propagation delay [50 ms].
	Delay time.Duration
	// Queue is the bottleneck queue in packets [50].
	Queue int
	// Window is TCP's maximum window in packets [20, ns-2's default].
	Window int
	// CC is TCP's controller [newreno].
	CC string
	// NoSACK runs TCP without selective acknowledgements, as ns-2's TCP
	// and the paper's Reno-style analysis have it: loss is repaired by
	// duplicate ACKs and NewReno partial ACKs, one hole per RTT. The coded
	// flows get the same TCP so the comparison stays like for like.
	NoSACK bool
	// Duration is each run's length [200 s]; Seeds the runs per point [10].
	Duration time.Duration
	Seeds    int
	// Losses are the erasure probabilities of the loss sweep.
	Losses []float64
	// SweepLoss is the loss of the redundancy sweep and the sharing
	// experiment [0.0963]; Redundancies the R values swept.
	SweepLoss    float64
	Redundancies []float64
	// SharedR is the redundancy of the sharing experiment [1.2].
	SharedR float64
	// Jobs is the number of parallel runs [GOMAXPROCS].
	Jobs int
	// Progress, if set, is called after each run.
	Progress func(done, total int)
}

func (c *Config) defaults() {
	if c.Rate == 0 {
		c.Rate = 500 * units.Kbps
	}
	if c.SharedRate == 0 {
		c.SharedRate = 900 * units.Kbps
	}
	if c.Delay == 0 {
		c.Delay = 50 * time.Millisecond
	}
	if c.Queue == 0 {
		c.Queue = 50
	}
	if c.Window == 0 {
		c.Window = 20
	}
	if c.CC == "" {
		c.CC = "newreno"
	}
	if c.Duration == 0 {
		c.Duration = 200 * time.Second
	}
	if c.Seeds == 0 {
		c.Seeds = 10
	}
	if c.Losses == nil {
		c.Losses = []float64{0, 0.01, 0.02, 0.03, 0.05, 0.0963, 0.15, 0.2, 0.25}
	}
	if c.SweepLoss == 0 {
		c.SweepLoss = 0.0963
	}
	if c.Redundancies == nil {
		for r := 1.0; r < 1.305; r += 0.01 {
			c.Redundancies = append(c.Redundancies, math.Round(r*100)/100)
		}
	}
	if c.SharedR == 0 {
		c.SharedR = 1.2
	}
	if c.Jobs <= 0 {
		c.Jobs = runtime.GOMAXPROCS(0)
	}
}

// Validate reports the first parameter outside its accepted range.
func (c *Config) Validate() error {
	c.defaults()
	switch {
	case c.Seeds < 1:
		return fmt.Errorf("seeds must be at least 1, got %d", c.Seeds)
	case c.Duration < time.Second:
		return fmt.Errorf("duration must be at least 1s, got %v", c.Duration)
	case !(c.SweepLoss >= 0 && c.SweepLoss < 1):
		return fmt.Errorf("loss must be in [0, 1), got %g", c.SweepLoss)
	case !(c.SharedR >= 1 && c.SharedR <= 10):
		return fmt.Errorf("shared redundancy (SharedR) must be in [1, 10], got %g", c.SharedR)
	case c.Window < 1 || c.Window > 4096:
		return fmt.Errorf("window must be in [1, 4096] packets, got %d", c.Window)
	}
	for _, p := range c.Losses {
		if !(p >= 0 && p < 1) {
			return fmt.Errorf("loss must be in [0, 1), got %g", p)
		}
	}
	for _, r := range c.Redundancies {
		if !(r >= 1 && r <= 10) {
			return fmt.Errorf("redundancy R must be in [1, 10], got %g", r)
		}
	}
	return nil
}

// WellChosenR is the redundancy the loss sweep gives TCP/NC: just above the
// theoretical optimum 1/(1-p) (Kim et al.), rounded up to 0.01, plus 0.01
// to absorb the randomness of erasures over a window.
func WellChosenR(p float64) float64 {
	return math.Ceil(100/(1-p))/100 + 0.01
}

// LossRow is one point of the loss sweep (throughputs in Mbit/s of payload,
// means over seeds with their 95% confidence half-widths).
type LossRow struct {
	P          float64 `json:"p"`
	R          float64 `json:"R"`
	TCP        float64 `json:"tcp_mbps"`
	TCPCI      float64 `json:"tcp_ci95"`
	TCPNC      float64 `json:"tcpnc_mbps"`
	TCPNCCI    float64 `json:"tcpnc_ci95"`
	Padhye     float64 `json:"padhye_mbps"`
	Mathis     float64 `json:"mathis_mbps"`
	ModelTCPNC float64 `json:"tcpnc_model_mbps"`
}

// RRow is one point of the redundancy sweep.
type RRow struct {
	R       float64 `json:"R"`
	TCPNC   float64 `json:"tcpnc_mbps"`
	TCPNCCI float64 `json:"tcpnc_ci95"`
	Model   float64 `json:"model_mbps"`
}

// Share is one flow of the sharing experiment.
type Share struct {
	Name string  `json:"name"`
	Mbps float64 `json:"mbps"`
	CI   float64 `json:"ci95"`
}

// Sharing is the two-flow experiment.
type Sharing struct {
	CapacityMbps float64 `json:"capacity_mbps"`
	P            float64 `json:"p"`
	R            float64 `json:"R"`
	Flows        []Share `json:"flows"`
	Jain         float64 `json:"jain"`
}

// Agreement summarises model against simulation over the loss sweep: the
// mean and largest relative difference |model-sim|/sim.
type Agreement struct {
	Model   string  `json:"model"`
	Mean    float64 `json:"mean_rel_diff"`
	Max     float64 `json:"max_rel_diff"`
	WorstAt float64 `json:"worst_p"`
	Points  int     `json:"points"`
}

// Result is the whole study.
type Result struct {
	Config          Config      `json:"-"`
	LossSweep       []LossRow   `json:"loss_sweep"`
	RedundancySweep []RRow      `json:"redundancy_sweep"`
	KneeR           float64     `json:"knee_R"`
	OptimalR        float64     `json:"optimal_R"`
	Sharing         Sharing     `json:"sharing"`
	Agreement       []Agreement `json:"agreement"`
	Runs            int         `json:"runs"`
	NoSACK          bool        `json:"no_sack"`
	WallSeconds     float64     `json:"wall_seconds"`
}

// point is one simulation to run: a scenario and where its results go.
type point struct {
	s    *scenario.Scenario
	out  *[]float64 // goodput of flow 0 per seed (or of each flow)
	out2 *[]float64
	rtt  *[]float64
	rto  *[]float64
}

func (c *Config) scenario(name string, rate units.Bandwidth, flows int, loss, r float64, seed int) (*scenario.Scenario, error) {
	s := &scenario.Scenario{
		Name:     name,
		Seed:     uint64(seed),
		Duration: scenario.Dur(c.Duration),
		Bottleneck: scenario.Link{
			Rate:  scenario.RateOf(rate),
			Delay: scenario.Dur(c.Delay),
			Queue: scenario.Queue{Discipline: "droptail", Limit: scenario.Size{Raw: fmt.Sprint(c.Queue)}},
		},
		Transport: scenario.Transport{RecvWindow: scenario.SizeOf(units.Bytes(c.Window) * 1448)},
	}
	if c.NoSACK {
		sack := false
		s.Transport.SACK = &sack
	}
	for i := range flows {
		f := scenario.Flow{Name: fmt.Sprintf("flow%d", i), CC: scenario.CC{Name: c.CC}}
		if loss > 0 {
			f.Loss = &scenario.Loss{Model: "bernoulli", P: loss}
		}
		if r > 0 {
			f.Coding = &scenario.Coding{Redundancy: r}
		}
		s.Flows = append(s.Flows, f)
	}
	return s, s.Validate()
}

// Run performs the study.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	res := &Result{Config: cfg}
	var pts []point
	tcp := make([][]float64, len(cfg.Losses))
	nc := make([][]float64, len(cfg.Losses))
	rtt := make([][]float64, len(cfg.Losses))
	rto := make([][]float64, len(cfg.Losses))
	for i, p := range cfg.Losses {
		for seed := 1; seed <= cfg.Seeds; seed++ {
			a, err := cfg.scenario("nc-loss-tcp", cfg.Rate, 1, p, 0, seed)
			if err != nil {
				return nil, err
			}
			b, err := cfg.scenario("nc-loss-tcpnc", cfg.Rate, 1, p, WellChosenR(p), seed)
			if err != nil {
				return nil, err
			}
			pts = append(pts, point{s: a, out: &tcp[i], rtt: &rtt[i], rto: &rto[i]}, point{s: b, out: &nc[i]})
		}
	}
	rs := make([][]float64, len(cfg.Redundancies))
	for i, r := range cfg.Redundancies {
		for seed := 1; seed <= cfg.Seeds; seed++ {
			s, err := cfg.scenario("nc-redundancy", cfg.Rate, 1, cfg.SweepLoss, r, seed)
			if err != nil {
				return nil, err
			}
			pts = append(pts, point{s: s, out: &rs[i]})
		}
	}
	var share0, share1 []float64
	for seed := 1; seed <= cfg.Seeds; seed++ {
		s, err := cfg.scenario("nc-sharing", cfg.SharedRate, 2, cfg.SweepLoss, cfg.SharedR, seed)
		if err != nil {
			return nil, err
		}
		pts = append(pts, point{s: s, out: &share0, out2: &share1})
	}
	if err := runAll(ctx, cfg, pts); err != nil {
		return nil, err
	}
	res.Runs = len(pts)
	res.NoSACK = cfg.NoSACK

	window := float64(cfg.Window)
	mss := units.Bytes(1448)
	toMbps := func(pps float64) float64 { return pps * float64(mss) * 8 / 1e6 }
	for i, p := range cfg.Losses {
		st, sn := metrics.Summarize(tcp[i]), metrics.Summarize(nc[i])
		row := LossRow{P: p, R: WellChosenR(p), TCP: st.Mean, TCPCI: st.CI95, TCPNC: sn.Mean, TCPNCCI: sn.CI95}
		// The models take the RTT and RTO TCP measured at this loss rate.
		mrtt := time.Duration(metrics.Summarize(rtt[i]).Mean * 1e6)
		mrto := time.Duration(metrics.Summarize(rto[i]).Mean * 1e6)
		tp := model.TCPParams{RTT: mrtt, RTO: mrto, P: p, MSS: mss, Wmax: window, B: 1, Capacity: cfg.Rate * 1448 / 1500}
		if e, err := model.Padhye(tp); err == nil {
			row.Padhye = toMbps(e.Goodput)
		}
		if e, err := model.Mathis(tp); err == nil {
			row.Mathis = toMbps(e.Goodput)
		}
		if e, err := model.TCPNC(model.NCParams{TCPParams: tp, R: row.R}); err == nil {
			row.ModelTCPNC = toMbps(e.Goodput)
		}
		res.LossSweep = append(res.LossSweep, row)
	}
	best := 0.0
	for i, r := range cfg.Redundancies {
		s := metrics.Summarize(rs[i])
		row := RRow{R: r, TCPNC: s.Mean, TCPNCCI: s.CI95}
		tp := model.TCPParams{RTT: 2 * cfg.Delay, P: cfg.SweepLoss, MSS: mss, Wmax: window, B: 1, Capacity: cfg.Rate * 1448 / 1500}
		if e, err := model.TCPNC(model.NCParams{TCPParams: tp, R: r}); err == nil {
			row.Model = toMbps(e.Goodput)
		}
		res.RedundancySweep = append(res.RedundancySweep, row)
		best = max(best, s.Mean)
	}
	// The knee: the smallest R reaching 95% of the best throughput.
	for _, row := range res.RedundancySweep {
		if row.TCPNC >= 0.95*best {
			res.KneeR = row.R
			break
		}
	}
	res.OptimalR, _ = model.OptimalRedundancy(cfg.SweepLoss)
	a, b := metrics.Summarize(share0), metrics.Summarize(share1)
	res.Sharing = Sharing{
		CapacityMbps: cfg.SharedRate.Mbps(), P: cfg.SweepLoss, R: cfg.SharedR,
		Flows: []Share{{"NC0", a.Mean, a.CI95}, {"NC1", b.Mean, b.CI95}},
		Jain:  metrics.Jain([]float64{a.Mean, b.Mean}),
	}
	res.Agreement = agreement(res.LossSweep)
	res.WallSeconds = time.Since(start).Seconds()
	return res, nil
}

func agreement(rows []LossRow) []Agreement {
	var out []Agreement
	for _, m := range []struct {
		name string
		get  func(LossRow) (model, sim float64)
	}{
		{"padhye", func(r LossRow) (float64, float64) { return r.Padhye, r.TCP }},
		{"mathis", func(r LossRow) (float64, float64) { return r.Mathis, r.TCP }},
		{"tcpnc", func(r LossRow) (float64, float64) { return r.ModelTCPNC, r.TCPNC }},
	} {
		a := Agreement{Model: m.name}
		var sum float64
		for _, r := range rows {
			mv, sv := m.get(r)
			if r.P == 0 || sv <= 0 || mv <= 0 {
				continue // no loss: both are the window or capacity cap
			}
			d := math.Abs(mv-sv) / sv
			sum += d
			a.Points++
			if d > a.Max {
				a.Max, a.WorstAt = d, r.P
			}
		}
		if a.Points > 0 {
			a.Mean = sum / float64(a.Points)
		}
		out = append(out, a)
	}
	return out
}

// runAll runs the points over cfg.Jobs workers; each result lands in its
// point's slices in seed order, so results do not depend on scheduling.
func runAll(ctx context.Context, cfg Config, pts []point) error {
	type res struct {
		g0, g1, rtt, rto float64
		err              error
	}
	out := make([]res, len(pts))
	if err := par.Do(ctx, len(pts), cfg.Jobs, cfg.Progress, func(_, i int) {
		r, n, err := experiment.Run(ctx, pts[i].s)
		if err != nil {
			out[i].err = err
			return
		}
		out[i].g0 = r.Flows[0].GoodputMbps
		if len(r.Flows) > 1 {
			out[i].g1 = r.Flows[1].GoodputMbps
		}
		out[i].rtt = r.Flows[0].RTTMeanMs
		// RFC 6298's RTO from the sender's estimates, the T0 the
		// throughput models were written for.
		snd := n.Flows[0].Sender
		c := snd.Config()
		out[i].rto = float64(snd.RTT().RTO(c.InitialRTO, c.MaxRTO)) / 1e6
	}); err != nil {
		return err
	}
	for i, p := range pts {
		if out[i].err != nil {
			return out[i].err
		}
		*p.out = append(*p.out, out[i].g0)
		if p.out2 != nil {
			*p.out2 = append(*p.out2, out[i].g1)
		}
		if p.rtt != nil {
			*p.rtt = append(*p.rtt, out[i].rtt)
			*p.rto = append(*p.rto, out[i].rto)
		}
	}
	return nil
}
