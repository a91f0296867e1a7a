package nc_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/cclab/cclab/transport/nc"
)

// Example sends three packets with redundancy 1.5 over a channel that erases
// the first coded packet. Acknowledgements are slower than the packets here,
// so the combinations mix several packets: the receiver sees packet 0 before
// it can decode it, and the redundant combination repairs the erasure.
func Example() {
	cfg := nc.Config{Window: 8, PayloadSize: 16}
	enc, _ := nc.NewEncoder(nc.EncoderConfig{Config: cfg, Redundancy: 1.5}, rand.NewPCG(1, 2))
	dec, _ := nc.NewDecoder(cfg)

	var pkt nc.Coded // reused for every coded packet
	var acks []nc.Receipt
	sent := 0
	for i, msg := range []string{"alpha", "bravo", "charlie"} {
		n, _ := enc.Add(uint64(i), []byte(msg))
		for range n {
			_ = enc.Next(&pkt)
			sent++
			if sent == 1 {
				fmt.Printf("coded packet %d over %d packet(s): erased\n", sent, len(pkt.Coeffs))
				continue
			}
			r, _ := dec.Receive(&pkt)
			fmt.Printf("coded packet %d over %d packet(s): innovative=%v ack=%d\n", sent, len(pkt.Coeffs), r.Innovative, r.Ack)
			for k := r.DeliverFrom; k < r.DeliverTo; k++ {
				p, _ := dec.Payload(k)
				fmt.Printf("  delivered %d: %s\n", k, p)
			}
			acks = append(acks, r)
		}
	}
	for _, a := range acks {
		_ = enc.OnAck(a.Ack, a.Limit)
	}
	fmt.Println("packets left in the coding window:", enc.Len())
	// Output:
	// coded packet 1 over 1 packet(s): erased
	// coded packet 2 over 2 packet(s): innovative=true ack=1
	// coded packet 3 over 2 packet(s): innovative=true ack=2
	//   delivered 0: alpha
	//   delivered 1: bravo
	// coded packet 4 over 3 packet(s): innovative=true ack=3
	//   delivered 2: charlie
	// packets left in the coding window: 0
}
