// Issue 19's workload on htsim (Broadcom's csg-htsim), to time it beside
// cclab on the same machine: N long-lived htsim TCP flows (TcpSrc/TcpSink,
// NewReno without SACK, one ACK per packet) through one FIFO drop-tail
// Queue, a 10 ms Pipe forward and a 10 ms Pipe for the ACKs (20 ms base
// RTT), flows starting at uniformly random times over the first second,
// 10 simulated seconds, no loggers. Built by build.sh against an htsim
// checkout; htsim's own source is not part of cclab.
//
// usage: dumbbell [-n N] [-rate_mbps R] [-buffer_pkts B] [-seed S] [-time_s T]
//   defaults N=100, R=1000, B=1000, S=1, T=10; packets of htsim's default
//   1500 bytes (MSS and size on the wire: htsim adds no headers).
//
// The results go to stderr as "key=value" lines; htsim prints a line per
// retransmission timeout on stdout, which the timing discards.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "config.h"
#include "eventlist.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "tcp.h"

int main(int argc, char** argv) {
    int n = 100, buffer_pkts = 1000;
    double rate_mbps = 1000, time_s = 10;
    unsigned seed = 1;
    for (int i = 1; i < argc; i++) {
        const bool more = i + 1 < argc;
        if (more && !strcmp(argv[i], "-n")) n = atoi(argv[++i]);
        else if (more && !strcmp(argv[i], "-rate_mbps")) rate_mbps = atof(argv[++i]);
        else if (more && !strcmp(argv[i], "-buffer_pkts")) buffer_pkts = atoi(argv[++i]);
        else if (more && !strcmp(argv[i], "-seed")) seed = (unsigned)atoi(argv[++i]);
        else if (more && !strcmp(argv[i], "-time_s")) time_s = atof(argv[++i]);
        else {
            fprintf(stderr, "dumbbell: bad argument %s (accepted: -n -rate_mbps -buffer_pkts -seed -time_s, each with a value)\n", argv[i]);
            return 2;
        }
    }
    if (n < 1 || buffer_pkts < 1 || rate_mbps <= 0 || time_s <= 0) {
        fprintf(stderr, "dumbbell: -n, -buffer_pkts, -rate_mbps and -time_s must be positive\n");
        return 2;
    }
    srand(seed);  // htsim's drand() draws from rand()

    EventList eventlist;
    const simtime_picosec end = timeFromSec(time_s);
    eventlist.setEndtime(end);

    Queue bottleneck(speedFromMbps(rate_mbps), memFromPkt(buffer_pkts), eventlist, NULL);
    bottleneck.setName("bottleneck");
    Pipe fwd(timeFromMs(10), eventlist);
    fwd.setName("forward");
    Pipe rev(timeFromMs(10), eventlist);
    rev.setName("reverse");
    // htsim checks its retransmission timers by scanning every flow
    // periodically; 10 ms as in htsim's own examples.
    TcpRtxTimerScanner scanner(timeFromMs(10), eventlist);

    std::vector<TcpSink*> sinks;
    for (int i = 0; i < n; i++) {
        TcpSrc* src = new TcpSrc(NULL, NULL, eventlist);
        TcpSink* sink = new TcpSink();
        scanner.registerTcp(*src);
        route_t* out = new route_t();
        out->push_back(&bottleneck);
        out->push_back(&fwd);
        out->push_back(sink);
        route_t* back = new route_t();
        back->push_back(&rev);
        back->push_back(src);
        simtime_picosec start = (simtime_picosec)(drand() * timeFromSec(1));
        if (start >= timeFromSec(1)) start = timeFromSec(1) - 1;  // drand() may return 1
        src->connect(*out, *back, *sink, start);
        sinks.push_back(sink);
    }

    // Counted here rather than inside htsim, so that an unmodified
    // checkout builds; the workload schedules no triggers, so every call
    // that returns true ran one event source.
    uint64_t events = 0;
    while (EventList::doNextEvent()) events++;

    uint64_t delivered = 0;
    for (TcpSink* s : sinks) delivered += s->_cumulative_ack;
    fprintf(stderr, "n=%d rate_mbps=%g buffer_pkts=%d seed=%u time_s=%g\n", n, rate_mbps, buffer_pkts, seed, time_s);
    fprintf(stderr, "events=%llu\n", (unsigned long long)events);
    fprintf(stderr, "goodput_mbps=%.2f\n", delivered * 8.0 / time_s / 1e6);
    fprintf(stderr, "drops=%d\n", (int)bottleneck.num_drops());
    return 0;
}
