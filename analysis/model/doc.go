// Package model holds the analytical throughput models cclab compares its
// simulations with:
//
//   - Mathis, Semke, Mahdavi, Ott, "The macroscopic behavior of the TCP
//     congestion avoidance algorithm", CCR 27(3), 1997: the square-root law.
//   - Padhye, Firoiu, Towsley, Kurose, "Modeling TCP throughput: a simple
//     model and its empirical validation", SIGCOMM 1998, and "Modeling TCP
//     Reno performance: a simple model and its empirical validation",
//     IEEE/ACM ToN 8(2), 2000: triple-duplicate and timeout losses,
//     exponential back-off and the receiver window cap, in the full form and
//     the approximate closed form.
//   - Kim, Médard, Barros, "Modeling network coded TCP throughput: a simple
//     model and its validation", ValueTools 2011 (arXiv:1008.0420): TCP over
//     a network-coding layer with redundancy R (package nc), whose window
//     keeps growing through erasures as long as R(1-p) >= 1.
//
// Every model takes a parameter struct with explicit units (time.Duration
// for times, units.Bytes for the segment size, packets for windows), checks
// it, and returns an Estimate in packets per second with bits-per-second
// helpers, or a *ParamError naming the parameter and its accepted range. No
// model returns NaN or an infinity.
//
// docs/models.md gives the formulas with their equation references, the
// domains, and the places where the papers had to be interpreted.
package model
