// Package estimate holds the sender-side measurements every transport and
// test harness shares: RFC 6298's RTT estimator and the delivery-rate
// sampler of draft-cheng-iccrg-delivery-rate-estimation. transport/tcp
// uses them on every ACK; cc/cctest uses the same code, so a controller
// tested in the harness sees the samples the transport would give it.
//
// They live in the cc layer, below the transports, because the samples are
// the controller interface's inputs (cc.Ack, cc.RateSample).
package estimate
