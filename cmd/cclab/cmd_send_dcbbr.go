package main

import (
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/papers/datacenter"
	"github.com/cclab/cclab/transport/udp"
)

// dcBBR names the data-centre paper's BBR window tuner on a live flow:
// `cclab send --cc dc-bbr`, `agent: dc-bbr` under `cclab emu`.
const dcBBR = "dc-bbr"

// attachDCBBR runs a data-centre policy (the shipped PPO policy, or
// policyFile) in process on a BBR flow (with the flow's --param values as
// its starting windows) on a link of nominal rate rate.
func attachDCBBR(o *live.SendOptions, policyFile string, rate units.Bandwidth) (func(*live.Result), error) {
	if rate <= 0 {
		return nil, usagef("--cc %s needs --link-rate RATE, the bottleneck's nominal rate, e.g. 1Gbps: the tuner observes rates as fractions of it", dcBBR)
	}
	file := policyFile
	if file == "" {
		file = datacenter.ShippedPolicyPath
	}
	p, err := datacenter.LoadPolicy(file)
	if err != nil {
		return nil, err
	}
	t, err := datacenter.NewLiveTuner(p, rate, datacenter.ParamsFrom(o.Params))
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
	o.CCLabel = dcBBR
	o.Attach = t.Attach
	return func(r *live.Result) {
		if r != nil {
			r.Extra = t.Summary()
		}
	}, nil
}
