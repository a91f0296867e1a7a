// dumbbell.cc: one parametrised ns-3 (3.37) dumbbell used as cclab's reference
// peer. It prints one JSON object shaped like `cclab run --json`.
//
// Topology (all links point-to-point, no traffic-control layer anywhere):
//
//   S_0 (flows with extra delay d0) ---\                                 /--- D
//   S_1 (flows with extra delay d1) ----+-- R1 ==== bottleneck ==== R2 --+
//   ...                             ---/     (rate, one-way delay,
//                                             DropTail device queue)
//
// * --topology=shared (default): one sender node per distinct extra delay
//   (usually one) and one receiver node D, each holding many sockets.
//   --topology=perflow: one sender and one receiver node per flow; same
//   results, but ns-3's IPv4 layer scans every interface of a router for
//   every packet, so it is several times slower at 100 flows.
// * Sender access links S_g<->R1: --accessRate (100 Gbit/s), one-way delay =
//   the flows' extra delay (--extraDelay, default 0), so extra delay is added
//   in both directions. Receiver access link R2<->D: --accessRate, no delay.
// * The bottleneck R1->R2 device queue is a DropTailQueue of --queue packets
//   (or bytes, "150KB"). ns-3's traffic-control layer (which would put its own
//   1000-packet pfifo_fast queue disc in front of every device queue) is
//   uninstalled from every device after address assignment, so the device
//   queue is the only queue. With no queue disc, the traffic-control layer
//   drops a packet itself when the device queue is "stopped" (cannot take one
//   more MTU-sized packet); for a limit in packets that is exactly DropTail at
//   the limit, and those drops are counted as queue drops ("TcDrop" trace).
//   Every other device queue (access links, the R2->R1 ACK direction) holds
//   10^6 packets and never drops: the reverse path is uncongested.
// * Note: a PointToPointNetDevice dequeues the packet it is serialising, so
//   the bottleneck holds at most --queue packets waiting plus one on the wire.
// * Random loss: a RateErrorModel (ERROR_UNIT_PACKET, Bernoulli with rate
//   --loss) on the receive side of R2's bottleneck device, i.e. on data
//   packets only (SYN/FIN of the senders included, ACKs never).
// * Optional link change at --switchAt: SetDataRate on both bottleneck
//   devices, the channel's Delay attribute and the error model's rate.
//   Packets already on the wire keep their old delay.
//
// TCP configuration (overrides ns-3's misleading defaults): SegmentSize 1448
// (with the timestamp option: 1448 + 32 + 20 = 1500-byte IP packets, plus 2
// bytes of PPP header on the wire), InitialCwnd 10, SACK on, timestamps on,
// DelAckCount --delack (2), DelAckTimeout 40 ms (see below; ns-3: 200 ms), MinRto
// --minRto (200 ms), ConnTimeout (initial SYN RTO) 1 s as in Linux, socket
// buffers SndBufSize == RcvBufSize (a send buffer larger than the receive
// buffer segfaults at 1 Gbit/s) large enough not to limit; the largest
// bytes-in-flight of each flow is reported so that this can be checked.
//
// Measurements (all from trace sources, nothing from the smoothed "RTT"
// trace source):
// * bytes_delivered: bytes received by the receiving PacketSink.
// * goodput_mbps: bulk flows: bytes_delivered*8 / (sim end - flow start);
//   finite flows that finished: bytes*8 / fct; unfinished finite flows as bulk.
// * fct_s: time the receiving application got the last byte minus the flow's
//   start time (so it includes the SYN/SYN-ACK round trip; handshake_s reports
//   that part separately). null for bulk or unfinished flows.
// * retransmissions: data segments sent by the sender with a sequence number
//   below the highest sequence number sent so far (socket "Tx" trace).
// * rtt_*: one sample per ACK that newly acknowledges data, Linux-style
//   (tcp_clean_rtx_queue/tcp_sacktag): the send time of the most recently sent
//   newly cumulatively-acked segment that was never retransmitted nor SACKed
//   earlier; if the cumulative ACK covers retransmitted data, no cumulative
//   sample is taken and the newest newly SACKed never-retransmitted segment is
//   used instead (Karn). RTT = ACK arrival time - segment send time, in
//   nanoseconds, so it includes the delayed-ACK wait.
// * qdelay_*: per RTT sample, RTT minus the flow's minimum RTT sample.
// * links[0]: the bottleneck R1->R2 direction: utilization = transmit busy
//   time (every packet's wire size / the rate in force) / sim time; drops =
//   queue_drops (DropTail overflow) + loss_drops (error model).
// * jain: Jain's fairness index over the flows' goodputs.
// * rti (only with --switchAt): RTT Transition Impact as cclab's metrics.RTI:
//   per flow ln(mean over the two schedule segments of the largest RTT sample
//   whose ACK arrived in the segment / the segment's nominal RTT), nominal =
//   2*(delay + extra delay) + one 1500-byte packet's serialisation; top level:
//   mean over flows.
// * peak_rss_mb: VmHWM from /proc/self/status at exit (MiB).
//
// The simulation stops at --duration, or as soon as every flow has finished
// when every flow is finite (--bytes > 0).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

using namespace ns3;

namespace
{

// One segment of new data, from its first transmission until it is
// cumulatively acknowledged.
struct Segment
{
    SequenceNumber32 start;
    SequenceNumber32 end; // exclusive
    int64_t txNs;         // first transmission time
    bool retransmitted;
    bool sacked;
};

struct Flow
{
    std::string name;
    Time start;
    Time extraDelay;
    uint64_t maxBytes = 0; // 0: bulk

    Ptr<BulkSendApplication> sender;
    Ipv4Address senderAddr;

    uint64_t rxBytes = 0;
    Time completed = Time(-1);
    Time established = Time(-1);

    // Sender-side state for retransmission counting and RTT sampling.
    bool haveTx = false;
    SequenceNumber32 highTx;
    std::deque<Segment> outstanding;
    uint64_t retransmissions = 0;
    uint64_t dataSegmentsSent = 0;
    uint32_t maxInFlight = 0;
    uint32_t maxCwnd = 0;
    std::vector<double> rttMs;
    // Largest RTT sample (ms) whose ACK arrived in each schedule segment
    // (0: before --switchAt, 1: after); 0 if none.
    double segMaxRttMs[2] = {0, 0};
};

std::vector<Flow> g_flows;
bool g_rttTrace = true;
Time g_switchAt = Seconds(0); // 0: no link change
bool g_debug = false; // --debug: log ACKs, cwnd, retransmissions and drops to stderr
uint32_t g_finishedFlows = 0;
uint32_t g_finiteFlows = 0;

// Bottleneck accounting.
DataRate g_bottleneckRate;
double g_busySeconds = 0;
uint64_t g_queueDrops = 0;
uint64_t g_lossDrops = 0;
uint64_t g_txPackets = 0;

uint64_t
EndpointKey(Ipv4Address a, uint16_t port)
{
    return (static_cast<uint64_t>(a.Get()) << 16) | port;
}

// Sender (address, port) -> flow index, for the receivers' PacketSinks.
std::unordered_map<uint64_t, uint32_t> g_flowByEndpoint;

void
OnSinkRx(Ptr<const Packet> p, const Address& from)
{
    InetSocketAddress a = InetSocketAddress::ConvertFrom(from);
    auto it = g_flowByEndpoint.find(EndpointKey(a.GetIpv4(), a.GetPort()));
    if (it == g_flowByEndpoint.end())
    {
        std::cerr << "dumbbell: data from unknown sender " << a.GetIpv4() << ":" << a.GetPort()
                  << std::endl;
        std::exit(1);
    }
    Flow& f = g_flows[it->second];
    f.rxBytes += p->GetSize();
    if (f.maxBytes > 0 && f.completed.IsNegative() && f.rxBytes >= f.maxBytes)
    {
        f.completed = Simulator::Now();
        if (++g_finishedFlows == g_finiteFlows && g_finiteFlows == g_flows.size())
        {
            Simulator::Stop();
        }
    }
}

void
OnSocketTx(uint32_t i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    uint32_t len = p->GetSize();
    if (len == 0)
    {
        return;
    }
    Flow& f = g_flows[i];
    f.dataSegmentsSent++;
    SequenceNumber32 seq = h.GetSequenceNumber();
    SequenceNumber32 end = seq + len;
    int64_t now = Simulator::Now().GetNanoSeconds();
    if (!f.haveTx || seq >= f.highTx)
    {
        f.haveTx = true;
        if (g_rttTrace)
        {
            f.outstanding.push_back(Segment{seq, end, now, false, false});
        }
        f.highTx = end;
        return;
    }
    // Below the highest sequence sent: a retransmission.
    f.retransmissions++;
    if (g_debug)
    {
        std::cerr << "retx t=" << Simulator::Now().GetSeconds() << " seq=" << seq << " high=" << f.highTx << std::endl;
    }
    if (g_rttTrace)
    {
        // Mark every tracked segment overlapping [seq, end) as retransmitted.
        auto it = std::lower_bound(f.outstanding.begin(),
                                   f.outstanding.end(),
                                   seq,
                                   [](const Segment& s, SequenceNumber32 v) { return s.end <= v; });
        for (; it != f.outstanding.end() && it->start < end; ++it)
        {
            it->retransmitted = true;
        }
    }
    if (end > f.highTx)
    {
        // Partly new data (rare: resegmentation): track the new part.
        if (g_rttTrace)
        {
            f.outstanding.push_back(Segment{f.highTx, end, now, false, false});
        }
        f.highTx = end;
    }
}

void
OnSocketRx(uint32_t i, Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (!(h.GetFlags() & TcpHeader::ACK))
    {
        return;
    }
    Flow& f = g_flows[i];
    if (g_debug)
    {
        std::cerr << "ack t=" << Simulator::Now().GetSeconds() << " ack=" << h.GetAckNumber() << " " << h << std::endl;
    }
    if (f.outstanding.empty())
    {
        return;
    }
    int64_t now = Simulator::Now().GetNanoSeconds();
    SequenceNumber32 ack = h.GetAckNumber();

    // Cumulatively acknowledged segments.
    bool retransAcked = false;
    int64_t cumNewest = -1;
    while (!f.outstanding.empty() && f.outstanding.front().end <= ack)
    {
        const Segment& s = f.outstanding.front();
        if (s.retransmitted)
        {
            retransAcked = true;
        }
        else if (!s.sacked)
        {
            cumNewest = std::max(cumNewest, s.txNs);
        }
        f.outstanding.pop_front();
    }

    // Newly SACKed segments.
    int64_t sackNewest = -1;
    if (h.HasOption(TcpOption::SACK) && !f.outstanding.empty())
    {
        Ptr<const TcpOptionSack> opt = DynamicCast<const TcpOptionSack>(h.GetOption(TcpOption::SACK));
        if (opt)
        {
            for (const auto& blk : opt->GetSackList())
            {
                SequenceNumber32 l = blk.first;
                SequenceNumber32 r = blk.second;
                auto it = std::lower_bound(
                    f.outstanding.begin(),
                    f.outstanding.end(),
                    l,
                    [](const Segment& s, SequenceNumber32 v) { return s.start < v; });
                for (; it != f.outstanding.end() && it->end <= r; ++it)
                {
                    if (it->sacked)
                    {
                        continue;
                    }
                    it->sacked = true;
                    if (!it->retransmitted)
                    {
                        sackNewest = std::max(sackNewest, it->txNs);
                    }
                }
            }
        }
    }

    int64_t sentNs = -1;
    if (cumNewest >= 0 && !retransAcked)
    {
        sentNs = cumNewest;
    }
    else if (sackNewest >= 0)
    {
        sentNs = sackNewest;
    }
    if (sentNs >= 0)
    {
        double rtt = (now - sentNs) / 1e6;
        f.rttMs.push_back(rtt);
        int seg = g_switchAt.IsStrictlyPositive() && now >= g_switchAt.GetNanoSeconds() ? 1 : 0;
        f.segMaxRttMs[seg] = std::max(f.segMaxRttMs[seg], rtt);
    }
}

void
OnBytesInFlight(uint32_t i, uint32_t, uint32_t v)
{
    Flow& f = g_flows[i];
    f.maxInFlight = std::max(f.maxInFlight, v);
}

void
OnCwnd(uint32_t i, uint32_t, uint32_t v)
{
    if (g_debug)
    {
        std::cerr << "cwnd t=" << Simulator::Now().GetSeconds() << " " << v << std::endl;
    }
    Flow& f = g_flows[i];
    f.maxCwnd = std::max(f.maxCwnd, v);
}

void
OnState(uint32_t i, TcpSocket::TcpStates_t, TcpSocket::TcpStates_t now)
{
    Flow& f = g_flows[i];
    if (now == TcpSocket::ESTABLISHED && f.established.IsNegative())
    {
        f.established = Simulator::Now();
    }
}

// Hooks the sender socket's traces; scheduled 1 ns after the application
// started (the socket exists from StartApplication on; only the SYN has been
// sent by then).
void
HookSocket(uint32_t i)
{
    Ptr<Socket> s = g_flows[i].sender->GetSocket();
    Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(s);
    if (!tcp)
    {
        std::cerr << "dumbbell: flow " << i << " has no TCP socket" << std::endl;
        std::exit(1);
    }
    Address local;
    tcp->GetSockName(local);
    uint16_t localPort = InetSocketAddress::ConvertFrom(local).GetPort();
    g_flowByEndpoint[EndpointKey(g_flows[i].senderAddr, localPort)] = i;
    tcp->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnSocketTx, i));
    tcp->TraceConnectWithoutContext("BytesInFlight", MakeBoundCallback(&OnBytesInFlight, i));
    tcp->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, i));
    tcp->TraceConnectWithoutContext("State", MakeBoundCallback(&OnState, i));
    if (g_rttTrace)
    {
        tcp->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSocketRx, i));
    }
}

void
OnBottleneckTxBegin(Ptr<const Packet> p)
{
    g_txPackets++;
    g_busySeconds += p->GetSize() * 8.0 / g_bottleneckRate.GetBitRate();
}

void
OnQueueDrop(Ptr<const Packet>)
{
    g_queueDrops++;
}

void
OnLossDrop(Ptr<const Packet>)
{
    g_lossDrops++;
}

// The link change, applied by SwitchLink at --switchAt.
struct LinkSwitch
{
    Ptr<PointToPointNetDevice> a;
    Ptr<PointToPointNetDevice> b;
    Ptr<Channel> ch;
    Ptr<RateErrorModel> em;
    std::string rate;  // empty: unchanged
    std::string delay; // empty: unchanged
    double loss;       // < 0: unchanged
};

LinkSwitch g_switch;

void
SwitchLink()
{
    const LinkSwitch& sw = g_switch;
    Ptr<PointToPointNetDevice> a = sw.a;
    Ptr<PointToPointNetDevice> b = sw.b;
    Ptr<Channel> ch = sw.ch;
    Ptr<RateErrorModel> em = sw.em;
    const std::string& rate = sw.rate;
    const std::string& delay = sw.delay;
    double loss = sw.loss;
    if (!rate.empty())
    {
        g_bottleneckRate = DataRate(rate);
        a->SetDataRate(g_bottleneckRate);
        b->SetDataRate(g_bottleneckRate);
    }
    if (!delay.empty())
    {
        ch->SetAttribute("Delay", TimeValue(Time(delay)));
    }
    if (loss >= 0)
    {
        em->SetRate(loss);
    }
}

void
DebugIpDrop(std::string ctx, const Ipv4Header& h, Ptr<const Packet> p, Ipv4L3Protocol::DropReason r, Ptr<Ipv4>, uint32_t)
{
    std::cerr << "ipdrop t=" << Simulator::Now().GetSeconds() << " " << ctx << " reason=" << r << std::endl;
}

void
DebugDevDrop(std::string ctx, Ptr<const Packet> p)
{
    std::cerr << "devdrop t=" << Simulator::Now().GetSeconds() << " " << ctx << std::endl;
}

double
PeakRssMb()
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
    {
        if (line.rfind("VmHWM:", 0) == 0)
        {
            std::istringstream ss(line.substr(6));
            double kb = 0;
            ss >> kb;
            return kb / 1024.0;
        }
    }
    return -1;
}

double
Mean(const std::vector<double>& v)
{
    if (v.empty())
    {
        return NAN;
    }
    double s = 0;
    for (double x : v)
    {
        s += x;
    }
    return s / v.size();
}

// Nearest-rank percentile (q in [0,1]) of a sorted vector.
double
Percentile(const std::vector<double>& sorted, double q)
{
    if (sorted.empty())
    {
        return NAN;
    }
    size_t rank = static_cast<size_t>(std::ceil(q * sorted.size()));
    rank = std::max<size_t>(rank, 1);
    return sorted[std::min(rank, sorted.size()) - 1];
}

// JSON number, or null for NaN/inf.
std::string
Num(double x, int prec = 6)
{
    if (!std::isfinite(x))
    {
        return "null";
    }
    std::ostringstream os;
    os << std::setprecision(prec) << x;
    return os.str();
}

std::string
Quote(const std::string& s)
{
    std::string o = "\"";
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            o += '\\';
        }
        o += c;
    }
    return o + "\"";
}

std::vector<std::string>
Split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::string cur;
    std::istringstream ss(s);
    while (std::getline(ss, cur, sep))
    {
        if (!cur.empty())
        {
            out.push_back(cur);
        }
    }
    return out;
}

// "100" -> "100p"; sizes like "150KB" are passed through to QueueSize.
std::string
QueueSizeString(const std::string& q)
{
    if (!q.empty() && q.find_first_not_of("0123456789") == std::string::npos)
    {
        return q + "p";
    }
    return q;
}

} // namespace

int
main(int argc, char* argv[])
{
    auto wallStart = std::chrono::steady_clock::now();

    std::string name = "dumbbell";
    std::string flowName = "flow";
    std::string cc = "TcpCubic";
    uint32_t nFlows = 1;
    std::string rate = "10Mbps";
    std::string delay = "25ms";
    std::string queue = "100";
    Time duration = Seconds(30);
    std::string bytesStr = "0";
    double loss = 0;
    uint32_t delAck = 2;
    // Linux's delayed-ACK timer starts at TCP_ATO_MIN = 40 ms. ns-3's default
    // of 200 ms equals the 200 ms minimum RTO: after a timeout with a
    // one-segment window the RTO fires before the delayed ACK arrives, the
    // sender leaves loss recovery without growing cwnd, and the flow is stuck
    // at one segment per 250 ms for the rest of the run (seen with 1% loss).
    Time delAckTimeout = MilliSeconds(40);
    Time switchAt = Seconds(0);
    std::string switchRate;
    std::string switchDelay;
    double switchLoss = -1;
    uint32_t seed = 1;
    uint32_t run = 1;
    Time minRto = MilliSeconds(200);
    Time connTimeout = Seconds(1);
    std::string accessRate = "100Gbps";
    std::string extraDelay = "0ms";
    Time start = Seconds(0);
    Time stagger = Seconds(0);
    uint32_t bufBytes = 0;
    uint32_t initCwnd = 10;
    bool sack = true;
    bool rttTrace = true;
    std::string topology = "shared";

    CommandLine cmd(__FILE__);
    cmd.AddValue("name", "scenario name printed in the JSON", name);
    cmd.AddValue("flowName", "flow name (flows > 1: NAME-i)", flowName);
    cmd.AddValue("cc", "TcpLinuxReno, TcpCubic, TcpBbr, TcpVegas, TcpNewReno, ...", cc);
    cmd.AddValue("flows", "number of flows", nFlows);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("delay", "bottleneck one-way propagation delay", delay);
    cmd.AddValue("queue", "bottleneck DropTail limit: packets (100) or size (150KB)", queue);
    cmd.AddValue("duration", "simulated time limit", duration);
    cmd.AddValue("bytes", "bytes per flow: 600000, 600KB (1000-based), 64KiB; 0: bulk", bytesStr);
    cmd.AddValue("loss", "Bernoulli packet loss rate on the bottleneck (data direction)", loss);
    cmd.AddValue("delack", "DelAckCount", delAck);
    cmd.AddValue("delAckTimeout", "delayed ACK timeout", delAckTimeout);
    cmd.AddValue("switchAt", "time of the link change (0: none)", switchAt);
    cmd.AddValue("switchRate", "bottleneck rate after the change", switchRate);
    cmd.AddValue("switchDelay", "bottleneck one-way delay after the change", switchDelay);
    cmd.AddValue("switchLoss", "loss rate after the change (<0: unchanged)", switchLoss);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run number", run);
    cmd.AddValue("minRto", "TCP minimum RTO", minRto);
    cmd.AddValue("connTimeout", "TCP SYN retransmission timeout", connTimeout);
    cmd.AddValue("accessRate", "access link rate", accessRate);
    cmd.AddValue("extraDelay", "per-flow extra one-way delay, comma list cycled over flows", extraDelay);
    cmd.AddValue("start", "start time of flow 0", start);
    cmd.AddValue("stagger", "flow i starts at start + i*stagger", stagger);
    cmd.AddValue("buf", "socket send and receive buffer bytes (0: auto)", bufBytes);
    cmd.AddValue("initCwnd", "initial window, segments", initCwnd);
    cmd.AddValue("sack", "enable SACK", sack);
    cmd.AddValue("topology", "shared (one sender node per extra delay, one receiver) or perflow", topology);
    cmd.AddValue("debug", "log ACKs, cwnd, retransmissions and every drop to stderr", g_debug);
    cmd.AddValue("rttTrace", "per-ACK RTT measurement (off: measure raw ns-3 speed)", rttTrace);
    cmd.Parse(argc, argv);

    g_rttTrace = rttTrace;
    // Sizes use ns-3's QueueSize parser: KB/MB are 1000-based, KiB/MiB
    // 1024-based, as in cclab's units package.
    uint64_t bytes = QueueSize(bytesStr.find_first_not_of("0123456789") == std::string::npos
                                   ? bytesStr + "B"
                                   : bytesStr)
                         .GetValue();
    if (cc.rfind("ns3::", 0) != 0)
    {
        cc = "ns3::" + cc;
    }
    TypeId ccTid;
    if (!TypeId::LookupByNameFailSafe(cc, &ccTid))
    {
        std::cerr << "dumbbell: unknown congestion control " << cc << std::endl;
        return 2;
    }
    if (topology != "shared" && topology != "perflow")
    {
        std::cerr << "dumbbell: --topology must be shared or perflow" << std::endl;
        return 2;
    }
    if (nFlows == 0)
    {
        std::cerr << "dumbbell: --flows must be > 0" << std::endl;
        return 2;
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    DataRate btlRate(rate);
    Time btlDelay(delay);
    QueueSize qsize(QueueSizeString(queue));
    g_bottleneckRate = btlRate;

    std::vector<Time> extras;
    for (const auto& s : Split(extraDelay, ','))
    {
        extras.emplace_back(s);
    }
    if (extras.empty())
    {
        extras.emplace_back(Seconds(0));
    }
    Time maxExtra = *std::max_element(extras.begin(), extras.end());

    // Socket buffers: large enough that they never limit a flow. A flow's
    // window cannot usefully exceed BDP + queue; give each flow four times its
    // share of that, at least 256 KB (ns-3 keeps a sender's whole buffer as
    // packets, so buffers far larger than needed cost memory). Every
    // flow's largest bytes-in-flight is reported (max_inflight_bytes) and a
    // warning is printed if it came within 10% of the buffer.
    double rttS = 2 * (btlDelay + maxExtra).GetSeconds();
    double bdpBytes = btlRate.GetBitRate() / 8.0 * rttS;
    double qBytes = qsize.GetUnit() == QueueSizeUnit::PACKETS ? qsize.GetValue() * 1500.0
                                                             : qsize.GetValue();
    if (bufBytes == 0)
    {
        double need = bdpBytes + qBytes;
        double b = std::max(256.0 * 1024, 4 * need / nFlows);
        bufBytes = static_cast<uint32_t>(std::ceil(b / 1448.0) * 1448);
    }

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(ccTid));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initCwnd));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAck));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(delAckTimeout));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(connTimeout));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(minRto));
    if (cc == "ns3::TcpBbr")
    {
        // BBR paces (TcpBbr forces it anyway); the others do not, as in Linux
        // without the fq qdisc.
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
    }

    NodeContainer routers;
    routers.Create(2);
    // Sender and receiver nodes. "shared" (default): one sender node per
    // distinct extra delay and one receiver node, each holding many sockets.
    // "perflow": one sender and one receiver node per flow, so the routers have
    // 2N+2 interfaces; ns-3's IPv4 layer scans every interface of a router for
    // every packet, which makes 100 flows several times slower and 1000 flows
    // impractical. Both give the same network (the access links are 100 Gbit/s
    // with never-dropping queues), apart from the sockets' endpoint lookups.
    g_flows.resize(nFlows);
    std::vector<uint32_t> flowGroup(nFlows);
    std::vector<Time> groupDelay;
    for (uint32_t i = 0; i < nFlows; i++)
    {
        Flow& f = g_flows[i];
        f.name = nFlows == 1 ? flowName : flowName + "-" + std::to_string(i);
        f.extraDelay = extras[i % extras.size()];
        f.start = start + stagger * i;
        f.maxBytes = bytes;
        if (topology == "perflow")
        {
            flowGroup[i] = i;
            groupDelay.push_back(f.extraDelay);
        }
        else
        {
            auto it = std::find(groupDelay.begin(), groupDelay.end(), f.extraDelay);
            flowGroup[i] = it - groupDelay.begin();
            if (it == groupDelay.end())
            {
                groupDelay.push_back(f.extraDelay);
            }
        }
    }
    const uint32_t nGroups = groupDelay.size();
    const uint32_t nReceivers = topology == "perflow" ? nFlows : 1;

    NodeContainer senders;
    senders.Create(nGroups);
    NodeContainer receivers;
    receivers.Create(nReceivers);

    const std::string bigQueue = "1000000p";

    PointToPointHelper btl;
    btl.SetDeviceAttribute("DataRate", DataRateValue(btlRate));
    btl.SetChannelAttribute("Delay", TimeValue(btlDelay));
    btl.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(qsize));
    NetDeviceContainer btlDevs = btl.Install(routers.Get(0), routers.Get(1));
    auto r1Dev = DynamicCast<PointToPointNetDevice>(btlDevs.Get(0));
    auto r2Dev = DynamicCast<PointToPointNetDevice>(btlDevs.Get(1));
    // ACK direction R2->R1: never drops.
    r2Dev->GetQueue()->SetMaxSize(QueueSize(bigQueue));

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue(bigQueue));

    InternetStackHelper stack;
    stack.InstallAll();

    Ipv4AddressHelper addr;
    std::vector<NetDeviceContainer> allDevs;
    allDevs.push_back(btlDevs);
    addr.SetBase("10.0.0.0", "255.255.255.252");
    addr.Assign(btlDevs);

    // Senders in 20.x.y.0/30, receivers in 120.x.y.0/30: up to 65k of each.
    auto subnet = [](uint32_t first, uint32_t i) {
        std::ostringstream os;
        os << (first + i / 65536) << "." << ((i / 256) % 256) << "." << (i % 256) << ".0";
        return os.str();
    };
    std::vector<Ipv4Address> senderAddrs(nGroups);
    for (uint32_t g = 0; g < nGroups; g++)
    {
        access.SetChannelAttribute("Delay", TimeValue(groupDelay[g]));
        NetDeviceContainer sd = access.Install(senders.Get(g), routers.Get(0));
        allDevs.push_back(sd);
        addr.SetBase(subnet(20, g).c_str(), "255.255.255.252");
        senderAddrs[g] = addr.Assign(sd).GetAddress(0);
    }
    std::vector<Ipv4Address> receiverAddrs(nReceivers);
    access.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    for (uint32_t r = 0; r < nReceivers; r++)
    {
        NetDeviceContainer rd = access.Install(routers.Get(1), receivers.Get(r));
        allDevs.push_back(rd);
        addr.SetBase(subnet(120, r).c_str(), "255.255.255.252");
        receiverAddrs[r] = addr.Assign(rd).GetAddress(1);
    }
    for (uint32_t i = 0; i < nFlows; i++)
    {
        g_flows[i].senderAddr = senderAddrs[flowGroup[i]];
    }

    // Remove the traffic-control layer's queue discs (installed by
    // Ipv4AddressHelper::Assign) from every device: packets go straight to
    // the device queues.
    TrafficControlHelper tch;
    for (auto& d : allDevs)
    {
        tch.Uninstall(d);
    }

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Random loss on the data direction, at R2's receive side.
    Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
    em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
    em->SetRate(loss);
    em->AssignStreams(0);
    r2Dev->SetAttribute("ReceiveErrorModel", PointerValue(em));

    r1Dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnBottleneckTxBegin));
    r1Dev->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&OnQueueDrop));
    // Without a queue disc, the traffic-control layer drops a packet itself
    // (without enqueueing it) when the device queue is "stopped", i.e. when it
    // could not take one more MTU-sized packet: with a limit in packets this
    // is exactly DropTail at the limit. Count those as queue drops. (R1's other
    // devices carry only ACKs into 10^6-packet queues and never stop.)
    if (!routers.Get(0)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
        "TcDrop", MakeCallback(&OnQueueDrop)))
    {
        std::cerr << "dumbbell: cannot trace the traffic-control layer's drops" << std::endl;
        return 1;
    }
    r2Dev->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnLossDrop));

    // One PacketSink per receiver node; its Rx trace attributes bytes to
    // flows by the sender's address and port (registered in HookSocket).
    const uint16_t port = 5000;
    for (uint32_t r = 0; r < nReceivers; r++)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(receivers.Get(r));
        sa.Start(Seconds(0));
        sa.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnSinkRx));
    }
    for (uint32_t i = 0; i < nFlows; i++)
    {
        Flow& f = g_flows[i];
        BulkSendHelper bulk("ns3::TcpSocketFactory",
                            InetSocketAddress(receiverAddrs[i % nReceivers], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
        bulk.SetAttribute("SendSize", UintegerValue(1448));
        ApplicationContainer ba = bulk.Install(senders.Get(flowGroup[i]));
        ba.Start(f.start);
        f.sender = DynamicCast<BulkSendApplication>(ba.Get(0));
        Simulator::Schedule(f.start + NanoSeconds(1), &HookSocket, i);
        if (bytes > 0)
        {
            g_finiteFlows++;
        }
    }

    if (switchAt.IsStrictlyPositive())
    {
        g_switchAt = switchAt;
        g_switch = LinkSwitch{r1Dev, r2Dev, r1Dev->GetChannel(), em, switchRate, switchDelay, switchLoss};
        Simulator::Schedule(switchAt, &SwitchLink);
    }

    if (g_debug)
    {
        Config::Connect("/NodeList/*/$ns3::Ipv4L3Protocol/Drop", MakeCallback(&DebugIpDrop));
        Config::Connect("/NodeList/*/$ns3::TrafficControlLayer/TcDrop", MakeCallback(&DebugDevDrop));
        Config::Connect("/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/MacTxDrop", MakeCallback(&DebugDevDrop));
        Config::Connect("/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/PhyRxDrop", MakeCallback(&DebugDevDrop));
        Config::Connect("/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/PhyTxDrop", MakeCallback(&DebugDevDrop));
        Config::Connect("/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/TxQueue/Drop", MakeCallback(&DebugDevDrop));
    }
    Simulator::Stop(duration);
    auto runStart = std::chrono::steady_clock::now();
    Simulator::Run();
    auto runEnd = std::chrono::steady_clock::now();
    double simSeconds = Simulator::Now().GetSeconds();
    if (g_debug)
    {
        auto q = r1Dev->GetQueue();
        std::cerr << "queue: max=" << q->GetMaxSize() << " dropped=" << q->GetTotalDroppedPackets()
                  << " received=" << q->GetTotalReceivedPackets() << std::endl;
        auto q2 = r2Dev->GetQueue();
        std::cerr << "queue2: max=" << q2->GetMaxSize() << " dropped=" << q2->GetTotalDroppedPackets()
                  << " received=" << q2->GetTotalReceivedPackets() << std::endl;
    }
    uint64_t events = Simulator::GetEventCount();

    // RTT Transition Impact (MARLIN paper, eq. 2, as cclab's metrics.RTI):
    // per flow, ln(mean over schedule segments of max RTT / nominal RTT),
    // nominal = 2 * (one-way delay + extra delay) + one 1500-byte packet's
    // serialisation at the segment's rate; segments without an RTT sample
    // are skipped. Defined only when the link changes (--switchAt).
    double nominalMs[2];
    nominalMs[0] = 2 * btlDelay.GetSeconds() * 1e3 + 1500 * 8.0 / btlRate.GetBitRate() * 1e3;
    nominalMs[1] = nominalMs[0];
    if (switchAt.IsStrictlyPositive())
    {
        Time d2 = switchDelay.empty() ? btlDelay : Time(switchDelay);
        DataRate r2 = switchRate.empty() ? btlRate : DataRate(switchRate);
        nominalMs[1] = 2 * d2.GetSeconds() * 1e3 + 1500 * 8.0 / r2.GetBitRate() * 1e3;
    }
    double rtiSum = 0;
    uint32_t rtiN = 0;

    // Per-flow results.
    std::ostringstream flowsJson;
    std::vector<double> goodputs;
    double aggBytes = 0;
    uint32_t bufWarn = 0;
    for (uint32_t i = 0; i < nFlows; i++)
    {
        Flow& f = g_flows[i];
        aggBytes += f.rxBytes;
        bool finished = f.maxBytes > 0 && !f.completed.IsNegative();
        double fct = finished ? (f.completed - f.start).GetSeconds() : NAN;
        double active = simSeconds - f.start.GetSeconds();
        double gp = finished ? f.rxBytes * 8.0 / fct / 1e6
                             : (active > 0 ? f.rxBytes * 8.0 / active / 1e6 : 0);
        goodputs.push_back(gp);
        if (f.maxInFlight > 0.9 * bufBytes)
        {
            bufWarn++;
        }

        double rti = NAN;
        if (switchAt.IsStrictlyPositive())
        {
            double sum = 0;
            int m = 0;
            for (int k = 0; k < 2; k++)
            {
                double nom = nominalMs[k] + 2 * f.extraDelay.GetSeconds() * 1e3;
                if (f.segMaxRttMs[k] > 0 && nom > 0)
                {
                    sum += f.segMaxRttMs[k] / nom;
                    m++;
                }
            }
            if (m > 0)
            {
                rti = std::log(sum / m);
                rtiSum += rti;
                rtiN++;
            }
        }

        std::vector<double>& r = f.rttMs;
        double rttMean = Mean(r);
        double rttMin = r.empty() ? NAN : *std::min_element(r.begin(), r.end());
        std::vector<double> q;
        q.reserve(r.size());
        for (double x : r)
        {
            q.push_back(x - rttMin);
        }
        std::sort(r.begin(), r.end());
        std::sort(q.begin(), q.end());

        flowsJson << (i ? ",\n    " : "\n    ") << "{\"name\": " << Quote(f.name)
                  << ", \"cc\": " << Quote(cc.substr(5)) << ", \"start_s\": " << Num(f.start.GetSeconds())
                  << ", \"extra_delay_ms\": " << Num(f.extraDelay.GetSeconds() * 1e3)
                  << ", \"bytes_delivered\": " << f.rxBytes
                  << ", \"goodput_mbps\": " << Num(gp) << ", \"fct_s\": " << Num(fct)
                  << ", \"handshake_s\": "
                  << Num(f.established.IsNegative() ? NAN : (f.established - f.start).GetSeconds())
                  << ", \"retransmissions\": " << f.retransmissions
                  << ", \"data_segments_sent\": " << f.dataSegmentsSent
                  << ", \"rtt_samples\": " << r.size() << ", \"rtt_min_ms\": " << Num(rttMin)
                  << ", \"rtt_mean_ms\": " << Num(rttMean)
                  << ", \"rtt_p50_ms\": " << Num(Percentile(r, 0.5))
                  << ", \"rtt_p95_ms\": " << Num(Percentile(r, 0.95))
                  << ", \"rtt_max_ms\": " << Num(r.empty() ? NAN : r.back())
                  << ", \"qdelay_mean_ms\": " << Num(Mean(q))
                  << ", \"qdelay_p95_ms\": " << Num(Percentile(q, 0.95))
                  << ", \"rti\": " << Num(rti)
                  << ", \"seg_max_rtt_ms\": [" << Num(f.segMaxRttMs[0]) << ", "
                  << Num(f.segMaxRttMs[1]) << "]"
                  << ", \"max_inflight_bytes\": " << f.maxInFlight
                  << ", \"max_cwnd_bytes\": " << f.maxCwnd << "}";
        // Free the samples as we go to keep the printed peak RSS honest.
        std::vector<double>().swap(f.rttMs);
    }
    if (bufWarn > 0)
    {
        std::cerr << "dumbbell: warning: " << bufWarn
                  << " flow(s) came within 10% of the socket buffer (" << bufBytes
                  << " B); raise --buf" << std::endl;
    }

    double sum = 0;
    double sumSq = 0;
    for (double g : goodputs)
    {
        sum += g;
        sumSq += g * g;
    }
    double jain = sumSq > 0 ? sum * sum / (nFlows * sumSq) : NAN;

    double peakRss = PeakRssMb();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
                 ru.ru_stime.tv_usec / 1e6;
    auto wallEnd = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(wallEnd - wallStart).count();
    double runWall = std::chrono::duration<double>(runEnd - runStart).count();

    std::ostringstream out;
    out << "{\n  \"scenario\": " << Quote(name) << ",\n  \"simulator\": \"ns-3.37\""
        << ",\n  \"seed\": " << seed << ",\n  \"run\": " << run
        << ",\n  \"sim_seconds\": " << Num(simSeconds, 9) << ",\n  \"wall_seconds\": " << Num(wall)
        << ",\n  \"run_wall_seconds\": " << Num(runWall) << ",\n  \"cpu_seconds\": " << Num(cpu) << ",\n  \"events\": " << events
        << ",\n  \"events_per_second\": " << Num(events / runWall)
        << ",\n  \"peak_rss_mb\": " << Num(peakRss)
        << ",\n  \"aggregate_goodput_mbps\": " << Num(sum)
        << ",\n  \"aggregate_bytes_delivered\": " << static_cast<uint64_t>(aggBytes)
        << ",\n  \"jain\": " << Num(jain)
        << ",\n  \"rti\": " << Num(rtiN > 0 ? rtiSum / rtiN : NAN)
        << ",\n  \"links\": [{\"name\": \"bottleneck\", \"utilization\": "
        << Num(simSeconds > 0 ? g_busySeconds / simSeconds : NAN)
        << ", \"drops\": " << (g_queueDrops + g_lossDrops) << ", \"queue_drops\": " << g_queueDrops
        << ", \"loss_drops\": " << g_lossDrops << ", \"tx_packets\": " << g_txPackets << "}]"
        << ",\n  \"config\": {\"cc\": " << Quote(cc) << ", \"flows\": " << nFlows
        << ", \"rate\": " << Quote(rate) << ", \"delay\": " << Quote(delay)
        << ", \"queue\": " << Quote(QueueSizeString(queue)) << ", \"duration_s\": " << Num(duration.GetSeconds())
        << ", \"bytes\": " << bytes << ", \"loss\": " << Num(loss) << ", \"delack\": " << delAck
        << ", \"delack_timeout_ms\": " << Num(delAckTimeout.GetSeconds() * 1e3)
        << ", \"min_rto_ms\": " << Num(minRto.GetSeconds() * 1e3)
        << ", \"conn_timeout_ms\": " << Num(connTimeout.GetSeconds() * 1e3)
        << ", \"switch_at_s\": " << Num(switchAt.GetSeconds())
        << ", \"switch_rate\": " << Quote(switchRate) << ", \"switch_delay\": " << Quote(switchDelay)
        << ", \"switch_loss\": " << Num(switchLoss) << ", \"segment_size\": 1448"
        << ", \"init_cwnd\": " << initCwnd << ", \"sack\": " << (sack ? "true" : "false")
        << ", \"socket_buffer_bytes\": " << bufBytes << ", \"access_rate\": " << Quote(accessRate)
        << ", \"extra_delay\": " << Quote(extraDelay) << ", \"rtt_trace\": " << (rttTrace ? "true" : "false")
        << ", \"topology\": " << Quote(topology)
        << "},\n  \"flows\": [" << flowsJson.str() << "\n  ]\n}\n";
    std::cout << out.str();

    Simulator::Destroy();
    return 0;
}
