// Package nc is the network-coding core of TCP/NC (Sundararajan, Shah,
// Médard, Mitzenmacher, Barros, "Network coding meets TCP", INFOCOM 2009, and
// "Network Coding Meets TCP: Theory and Implementation", Proc. IEEE 99(3),
// 2011): random linear network coding over GF(2^8) placed between an
// unmodified TCP sender and the network, with acknowledgements of "seen"
// packets that let TCP's sliding window advance despite erasures.
//
// The package holds no transport logic and reads no clock. A transport calls
// it per packet:
//
//	sender:   n, err := enc.Add(index, payload)     // a packet from TCP
//	          for range n { enc.Next(&pkt); send(pkt) }
//	          on ACK: enc.OnAck(ack.Seen, ack.Limit)
//	receiver: r, err := dec.Receive(&pkt)          // a coded packet arrives
//	          for i := r.DeliverFrom; i < r.DeliverTo; i++ { deliver(i, dec.Payload(i)) }
//	          send ACK{Seen: r.Ack, Limit: r.Limit}  // for every packet, as in the paper
//
// Packets handed down by TCP are numbered 0, 1, 2, ... (the transport maps
// its segments to these indices). The Encoder keeps the packets not yet
// known to be seen in its coding window and, for each packet from TCP, emits
// R random linear combinations of the window, R >= 1 possibly fractional
// (credit rule of Sundararajan et al.). The Decoder keeps the received
// coefficient vectors in reduced row echelon form, reports which packets are
// seen (packet k is seen when the receiver can compute p_k + sum_{l>k} c_l
// p_l, i.e. its matrix has a pivot in column k), acknowledges the oldest
// unseen packet, and releases decoded packets in order.
//
// Two modes share all bookkeeping. In the fast mode (PayloadSize 0) only
// coefficient vectors travel; in the payload mode the bytes are really coded
// and decoded, and decoded payloads equal the originals. For the same random
// source both modes make identical decisions, so simulations can use the
// fast mode and tests the payload mode.
//
// Steady-state operation does not allocate: windows are preallocated rings
// and callers reuse Coded values. Memory is bounded by the configured
// window: the decoder advertises, with each acknowledgement, the highest
// index it can accept (Receipt.Limit), and the encoder never codes beyond
// it, so a slow decoder back-pressures the sender instead of growing.
package nc
