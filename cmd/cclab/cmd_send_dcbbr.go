package main

import (
	"strings"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/papers/datacenter"
	"github.com/cclab/cclab/transport/udp"
)

// dcBBR names the data-centre paper's BBR window tuner on a live flow:
// `cclab send --cc dc-bbr[:POLICY]`, `agent: dc-bbr[:POLICY]` under `cclab
// emu`. POLICY (or --policy) is a policy file, or "static" to keep the
// flow's windows and only measure the reward's terms.
const dcBBR = "dc-bbr"

// isDCBBR reports whether name selects the data-centre tuner.
func isDCBBR(name string) bool { return name == dcBBR || strings.HasPrefix(name, dcBBR+":") }

// attachDCBBR runs a data-centre policy (the shipped PPO policy, or
// policyFile, or none for "static") in process on a BBR flow (with the
// flow's --param values as its starting windows) on a link of nominal
// rate rate.
func attachDCBBR(o *live.SendOptions, policyFile string, rate units.Bandwidth) (func(*live.Result), error) {
	if _, pol, ok := strings.Cut(o.CC, ":"); ok {
		if policyFile != "" && policyFile != pol {
			return nil, usagef("--cc %s and --policy %s: give the policy once", o.CC, policyFile)
		}
		policyFile = pol
	}
	if rate <= 0 {
		return nil, usagef("--cc %s needs --link-rate RATE, the bottleneck's nominal rate, e.g. 1Gbps: the tuner observes rates as fractions of it", dcBBR)
	}
	initial := datacenter.ParamsFrom(o.Params)
	var t *datacenter.LiveTuner
	var err error
	label := dcBBR
	if policyFile == "static" {
		t, err = datacenter.NewStaticTuner(rate, initial)
		label = dcBBR + ":static"
	} else {
		file := policyFile
		if file == "" {
			file = datacenter.ShippedPolicyPath
		}
		p, lerr := datacenter.LoadPolicy(file)
		if lerr != nil {
			return nil, lerr
		}
		t, err = datacenter.NewLiveTuner(p, rate, initial)
	}
	if err != nil {
		return nil, err
	}
	mss := o.TCP.MSS
	if mss == 0 {
		mss = udp.DefaultMSS
	}
	if o.Alg, err = live.NewController("bbr", o.Params, mss, o.Seed); err != nil {
		return nil, err
	}
	o.CCLabel = label
	o.Attach = t.Attach
	return func(r *live.Result) {
		if r != nil {
			r.Extra = t.Summary()
		}
	}, nil
}
