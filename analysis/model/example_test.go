package model_test

import (
	"fmt"
	"time"

	"github.com/cclab/cclab/analysis/model"
	"github.com/cclab/cclab/core/units"
)

// Example compares TCP with TCP/NC at the slides' erasure rate with a
// 0.5 Mbit/s per-flow cap.
func Example() {
	tp := model.TCPParams{RTT: 100 * time.Millisecond, RTO: time.Second, P: 0.0963, MSS: 1000, Wmax: 50, B: 1,
		Capacity: 500 * units.Kbps}
	tcp, _ := model.Padhye(tp)
	fmt.Printf("TCP (Padhye): %.3f Mbit/s, limited by %v\n", tcp.GoodputBitsPerSecond()/1e6, tcp.Limit)
	for _, r := range []float64{1, 1.05, 1.12, 1.2} {
		e, _ := model.TCPNC(model.NCParams{TCPParams: tp, R: r})
		fmt.Printf("TCP/NC R=%.2f: %.3f Mbit/s, effective loss %.4f, limited by %v\n", r, e.GoodputBitsPerSecond()/1e6, e.EffectiveLoss, e.Limit)
	}
	// Output:
	// TCP (Padhye): 0.094 Mbit/s, limited by loss
	// TCP/NC R=1.00: 0.094 Mbit/s, effective loss 0.0963, limited by loss
	// TCP/NC R=1.05: 0.193 Mbit/s, effective loss 0.0511, limited by loss
	// TCP/NC R=1.12: 0.446 Mbit/s, effective loss 0.0000, limited by capacity
	// TCP/NC R=1.20: 0.417 Mbit/s, effective loss 0.0000, limited by capacity
}
