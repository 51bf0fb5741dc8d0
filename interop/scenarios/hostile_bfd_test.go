package scenarios

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/fared/fared/api/wire"
	bfdpkt "github.com/fared/fared/bfd/packet"
	"github.com/fared/fared/interop"
)

// Hostile hosts against BFD (issue 25 row 5). The attack functions take
// the lab and node/interface names, so they run on any fabric where the
// attacker shares a link or LAN with the victim and its BFD peer.

// bfdSessionOn is victim's BFD session to peer on iface, and the speaker's
// counters.
func bfdSessionOn(ctx context.Context, l *interop.Lab, victim, iface, peer string) (wire.BFDSession, map[string]uint64, error) {
	var v wire.BFDSessions
	if err := l.FarectlJSON(ctx, victim, &v, "bfd", "sessions"); err != nil {
		return wire.BFDSession{}, nil, err
	}
	for _, s := range v.Sessions {
		if s.Interface == iface && s.Peer == peer {
			return s, v.Counters, nil
		}
	}
	return wire.BFDSession{}, v.Counters, fmt.Errorf("%s: no BFD session to %s on %s: %+v", victim, peer, iface, v.Sessions)
}

// ifaceAddr is node's IPv4 address on iface.
func ifaceAddr(t *testing.T, l *interop.Lab, node, iface string) netip.Addr {
	t.Helper()
	f := l.Node(node).Iface(iface)
	if f == nil {
		t.Fatalf("%s has no interface %s", node, iface)
	}
	return f.Addr.Addr()
}

// ifaceMAC reads node's MAC address on iface.
func ifaceMAC(t *testing.T, ctx context.Context, l *interop.Lab, node, iface string) net.HardwareAddr {
	t.Helper()
	out, err := l.Exec(ctx, node, "cat", "/sys/class/net/"+iface+"/address")
	if err != nil {
		t.Fatalf("%s %s: %v %s", node, iface, err, out)
	}
	mac, err := net.ParseMAC(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	return mac
}

// udpFrame is an Ethernet frame with an IPv4 UDP datagram from src to
// dst, with the TTL given: what a host can put on a link.
func udpFrame(t *testing.T, dstMAC, srcMAC net.HardwareAddr, src, dst netip.Addr, sport, dport uint16, ttl uint8, payload []byte) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: srcMAC, DstMAC: dstMAC, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: ttl, Protocol: layers.IPProtocolUDP, SrcIP: src.AsSlice(), DstIP: dst.AsSlice(), Id: uint16(rand.Uint32())}
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// attackBFDSpoofedDown: a host (attacker, on attIface, which shares a link
// or LAN with victim's vIface) sends BFD Control packets that claim to come
// from peer's address on that link, with TTL 255 (so GTSM passes them):
// State Down (then AdminDown) with Your Discriminator 0 and a My
// Discriminator of its own, and State Down with the victim's own
// discriminator (as if sniffed) in Your Discriminator. Before the check of
// RFC 5880 §6.8.6 the first one took the victim's Up session down, and
// with it the adjacency BFD guards. The session must stay Up, its downs
// unchanged, and rx_rejected_my_disc_mismatch must move, with one log
// line.
func attackBFDSpoofedDown(t *testing.T, ctx context.Context, l *interop.Lab, victim, vIface, peer, attacker, attIface string) {
	t.Helper()
	peerAddr := ifaceAddr(t, l, peer, vIfacePeerIface(l, victim, vIface, peer))
	victimAddr := ifaceAddr(t, l, victim, vIface)
	var before wire.BFDSession
	var c0 map[string]uint64
	poll(t, ctx, 60*time.Second, victim+": BFD session to "+peer+" Up", func() error {
		s, c, err := bfdSessionOn(ctx, l, victim, vIface, peerAddr.String())
		if err != nil {
			return err
		}
		if s.State != "Up" || s.RemoteDisc == 0 {
			return fmt.Errorf("session %+v", s)
		}
		before, c0 = s, c
		return nil
	})
	raw, err := l.OpenRaw(attacker, attIface, 0x0800)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	dstMAC := ifaceMAC(t, ctx, l, victim, vIface)
	forged := []bfdpkt.Control{
		{State: bfdpkt.Down, Diag: bfdpkt.DiagDetectExpired, DetectMult: 3, MyDisc: rand.Uint32() | 1, DesiredMinTx: 1e6, RequiredMinRx: 1e6},
		{State: bfdpkt.AdminDown, Diag: bfdpkt.DiagAdminDown, DetectMult: 3, MyDisc: rand.Uint32() | 1, DesiredMinTx: 1e6, RequiredMinRx: 1e6},
		{State: bfdpkt.Down, Diag: bfdpkt.DiagNeighborDown, DetectMult: 3, MyDisc: rand.Uint32() | 1, YourDisc: before.LocalDisc, DesiredMinTx: 1e6, RequiredMinRx: 1e6},
	}
	for i, c := range forged {
		if c.MyDisc == before.RemoteDisc {
			c.MyDisc++
		}
		frame := udpFrame(t, dstMAC, raw.MAC, peerAddr, victimAddr, 49152+uint16(i), 3784, 255, c.AppendTo(nil))
		if err := raw.Send(frame); err != nil {
			t.Fatal(err)
		}
		// Either the victim counts it, or it acted on it (the old code).
		poll(t, ctx, 10*time.Second, fmt.Sprintf("forged packet %d handled", i), func() error {
			s, ctr, err := bfdSessionOn(ctx, l, victim, vIface, peerAddr.String())
			if err != nil {
				return err
			}
			if s.Downs != before.Downs || s.State != "Up" {
				return nil
			}
			if ctr["rx_rejected_my_disc_mismatch"] < c0["rx_rejected_my_disc_mismatch"]+uint64(i+1) {
				return fmt.Errorf("counters %v", ctr)
			}
			return nil
		})
		s, _, err := bfdSessionOn(ctx, l, victim, vIface, peerAddr.String())
		if err != nil {
			t.Fatal(err)
		}
		if s.Downs != before.Downs || s.State != "Up" {
			t.Fatalf("%s: a forged %s from %s's address took the BFD session down: %+v", victim, c.State, peer, s)
		}
	}
	log, err := os.ReadFile(l.FaredLog(victim))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "BFD packet with another remote discriminator than the session learnt dropped"); n != 1 {
		t.Errorf("%s: %d log lines about the forged packets, want 1", victim, n)
	}
}

// vIfacePeerIface is the interface of peer on the link or LAN that is
// victim's vIface.
func vIfacePeerIface(l *interop.Lab, victim, vIface, peer string) string {
	for _, f := range l.Node(victim).Interfaces {
		if f.Name != vIface {
			continue
		}
		if f.Peer == peer {
			// A p2p link: the peer's interface is named after us.
			for _, g := range l.Node(peer).Interfaces {
				if g.Peer == victim {
					return g.Name
				}
			}
		}
	}
	return vIface // a LAN: every member's interface has the LAN's name
}

// adjacencyTo is node's IS-IS adjacency to the router named peer.
func adjacencyTo(ctx context.Context, l *interop.Lab, node, peer string) (wire.ISISNeighbor, error) {
	var nbrs []wire.ISISNeighbor
	if err := l.FarectlJSON(ctx, node, &nbrs, "isis", "neighbors"); err != nil {
		return wire.ISISNeighbor{}, err
	}
	for _, n := range nbrs {
		if n.Hostname == l.Node(peer).Hostname {
			return n, nil
		}
	}
	return wire.ISISNeighbor{}, fmt.Errorf("%s: no adjacency to %s in %+v", node, peer, nbrs)
}
