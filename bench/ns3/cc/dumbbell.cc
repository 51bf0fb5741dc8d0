// ns-3.37 reference for fared's software data plane (qos/sim): N DCTCP
// senders share one bottleneck whose RED queue disc marks ECN, DCTCP
// style (instantaneous queue, one threshold K). It prints one JSON line:
// the bottleneck's mean queue (time average of samples) and throughput,
// measured over [warmup, end]. bench/ns3/ns3_test.go builds it with g++
// and pkg-config, runs the same setting on qos/sim, and compares.
//
// Topology: sender i --(access rate, delay)-- R --(bottleneck rate,
// delay)-- receiver. Data packets are 1448 B of payload, 1502 B on the
// wire (20 IP + 32 TCP with timestamps + 2 PPP); ACKs are 54 B. The
// bottleneck device queue holds one packet, so packets wait in the queue
// disc, where RED decides; "queue" below counts packets waiting in the
// disc and in the device queue (not the one on the wire).
//
// usage: dumbbell K [flows] [end_s] [warmup_s] [access_gbps] [bottleneck_gbps] [delay_us]

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

using namespace ns3;

static Ptr<QueueDisc> g_disc;
static Ptr<Queue<Packet>> g_devq;
static double g_sumPkts = 0, g_sumBytes = 0;
static uint64_t g_samples = 0;
static uint64_t g_txBytes = 0;
static uint64_t g_marks = 0;
static bool g_measuring = false;
static const Time kSample = MicroSeconds(5);

static void Sample()
{
    if (g_measuring) {
        g_sumPkts += g_disc->GetNPackets() + g_devq->GetNPackets();
        g_sumBytes += g_disc->GetNBytes() + g_devq->GetNBytes();
        g_samples++;
    }
    Simulator::Schedule(kSample, &Sample);
}

static void TxEnd(Ptr<const Packet> p)
{
    if (g_measuring) {
        g_txBytes += p->GetSize();
    }
}

static void Mark(Ptr<const QueueDiscItem>, const char*)
{
    if (g_measuring) {
        g_marks++;
    }
}

static void StartMeasuring() { g_measuring = true; }

int main(int argc, char* argv[])
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s K [flows] [end_s] [warmup_s] [access_gbps] [bottleneck_gbps] [delay_us]\n", argv[0]);
        return 2;
    }
    double k = atof(argv[1]);
    int flows = argc > 2 ? atoi(argv[2]) : 4;
    double end = argc > 3 ? atof(argv[3]) : 0.5;
    double warmup = argc > 4 ? atof(argv[4]) : 0.1;
    double access = argc > 5 ? atof(argv[5]) : 10;
    double bottleneck = argc > 6 ? atof(argv[6]) : 1;
    double delayUs = argc > 7 ? atof(argv[7]) : 20;

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 23));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 23));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));

    Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
    Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(false));
    Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
    Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(k));
    Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(k));
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(1502));
    Config::SetDefault("ns3::RedQueueDisc::MaxSize", QueueSizeValue(QueueSize("10000p")));

    NodeContainer senders;
    senders.Create(flows);
    Ptr<Node> router = CreateObject<Node>();
    Ptr<Node> receiver = CreateObject<Node>();

    std::string delay = std::to_string(delayUs) + "us";
    PointToPointHelper accessLink;
    accessLink.SetDeviceAttribute("DataRate", StringValue(std::to_string(access) + "Gbps"));
    accessLink.SetChannelAttribute("Delay", StringValue(delay));
    accessLink.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1000p"));
    PointToPointHelper bottleLink;
    bottleLink.SetDeviceAttribute("DataRate", StringValue(std::to_string(bottleneck) + "Gbps"));
    bottleLink.SetChannelAttribute("Delay", StringValue(delay));
    bottleLink.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    InternetStackHelper stack;
    stack.InstallAll();

    Ipv4AddressHelper addr;
    std::vector<Ipv4InterfaceContainer> senderIfs;
    for (int i = 0; i < flows; i++) {
        NetDeviceContainer d = accessLink.Install(senders.Get(i), router);
        std::string base = "10.1." + std::to_string(i + 1) + ".0";
        addr.SetBase(base.c_str(), "255.255.255.0");
        senderIfs.push_back(addr.Assign(d));
    }
    NetDeviceContainer bd = bottleLink.Install(router, receiver);
    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc", "LinkBandwidth",
                         StringValue(std::to_string(bottleneck) + "Gbps"), "LinkDelay", StringValue(delay));
    QueueDiscContainer qd = red.Install(bd.Get(0));
    addr.SetBase("10.2.1.0", "255.255.255.0");
    Ipv4InterfaceContainer recvIf = addr.Assign(bd);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    g_disc = qd.Get(0);
    g_devq = DynamicCast<PointToPointNetDevice>(bd.Get(0))->GetQueue();
    bd.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&TxEnd));
    g_disc->TraceConnectWithoutContext("Mark", MakeCallback(&Mark));

    uint16_t port = 5000;
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sink.Install(receiver);
    sinkApp.Start(Seconds(0));
    for (int i = 0; i < flows; i++) {
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(recvIf.GetAddress(1), port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(1448));
        ApplicationContainer a = bulk.Install(senders.Get(i));
        a.Start(Seconds(0));
    }

    Simulator::Schedule(Seconds(warmup), &StartMeasuring);
    Simulator::Schedule(kSample, &Sample);
    Simulator::Stop(Seconds(end));
    Simulator::Run();

    double span = end - warmup;
    printf("{\"k\": %g, \"flows\": %d, \"mean_queue_pkts\": %.4f, \"mean_queue_bytes\": %.1f, "
           "\"throughput_bps\": %.1f, \"marks\": %llu, \"samples\": %llu}\n",
           k, flows, g_sumPkts / g_samples, g_sumBytes / g_samples, g_txBytes * 8.0 / span,
           (unsigned long long)g_marks, (unsigned long long)g_samples);
    Simulator::Destroy();
    return 0;
}
