package scenarios

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/internal/scrape"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/isis/packet"
	ospfpacket "github.com/fared/fared/ospf/packet"
)

// TestMetricsScrape: a real fared next to FRR, its metrics listener
// switched on by a reload (`metrics: {listen: 127.0.0.1:9342}`), scraped
// with curl from inside its namespace. The exposition parses and passes
// promlint; the gauges agree with the lab (one Up adjacency, two LSPs,
// two nodes, the kernel's routes); a malformed IS-IS frame sent on the
// wire moves the rejected-PDU counter and costs nothing else; a link
// going down moves the SPF counters and histogram.
func TestMetricsScrape(t *testing.T) {
	l, ctx := syncedPair(t, "metrics", "isis", "{kind: fared, prefixes: [10.10.1.0/24]}", 2)

	f1 := l.Node("f1")
	p := enableMetrics(t, ctx, l, "f1")
	var f scrape.Families
	get := func() error {
		var err error
		f, err = p.scrape()
		return err
	}
	is := func(want float64, name string, labels ...string) error { return metricIs(f, want, name, labels...) }
	// One adjacency (r1), two LSPs (f1.00-00, r1.00-00: a P2P link has no
	// pseudonode), two nodes in the level-2 graph, routes to r1's loopback
	// and more in the kernel.
	poll(t, ctx, 30*time.Second, "metrics match the lab", func() error {
		if err := get(); err != nil {
			return err
		}
		for _, err := range []error{
			is(1, "fared_module_up", "module", "isis"),
			is(0, "fared_module_up", "module", "ospf"),
			is(1, "fared_isis_adjacencies", "level", "L2", "state", "Up"),
			is(2, "fared_isis_lsdb_lsps", "level", "L2"),
			is(2, "fared_topology_nodes", "protocol", "isis", "topology", "L2"),
			is(1, "fared_isis_interface_up", "interface", ifaceToward(l, "f1", "r1")),
			is(0, "fared_fib_errors_total"),
			is(1, "fared_config_reloads_total", "result", "applied"),
		} {
			if err != nil {
				return err
			}
		}
		if v, _ := f.Sum("fared_rib_routes", "protocol", "isis"); v < 1 {
			return fmt.Errorf("no isis route: %v", f.Series("fared_rib_routes"))
		}
		if v, _ := f.Sum("fared_fib_messages_total"); v < 1 {
			return fmt.Errorf("no netlink message counted")
		}
		return nil
	})
	if u, err := f.Undocumented("../../docs/metrics.md"); err != nil || len(u) > 0 {
		t.Errorf("not in docs/metrics.md: %v %v", u, err)
	}
	// What the FIB counters say was added and deleted is what the kernel
	// holds of fared's routes.
	added, _ := f.Sum("fared_fib_object_changes_total", "object", "route", "op", "add")
	deleted, _ := f.Sum("fared_fib_object_changes_total", "object", "route", "op", "delete")
	kernel := 0
	for _, fam := range []string{"-4", "-6"} {
		out, err := exec.CommandContext(ctx, "ip", "-n", f1.Netns, fam, "route", "show", "proto", "isis").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if line != "" && line[0] != ' ' && line[0] != '\t' { // not a "nexthop via" continuation
				kernel++
			}
		}
	}
	if kernel == 0 || int(added-deleted) != kernel {
		t.Errorf("routes added %v - deleted %v != %d fared routes in the kernel", added, deleted, kernel)
	}

	// A malformed PDU on the wire: r1's side of the link sends f1 an L2
	// LSP cut after 12 bytes, twice.
	ifR1 := ifaceToward(l, "r1", "f1")
	lsp := &packet.LSP{Header: packet.Header{Type: packet.TypeL2LSP}, Lifetime: 1200, ID: packet.MakeLSPID(packet.SystemID{0, 0, 0, 0, 0, 0x99}, 0, 0), Seq: 7, Flags: 3}
	pdu := lsp.AppendTo(nil)[:12]
	for range 2 {
		if err := sendISIS(l.Node("r1").Netns, ifR1, pdu); err != nil {
			t.Fatal(err)
		}
	}
	ifF1 := ifaceToward(l, "f1", "r1")
	poll(t, ctx, 10*time.Second, "rejected PDUs counted", func() error {
		if err := get(); err != nil {
			return err
		}
		return is(2, "fared_isis_pdus_rejected_total", "interface", ifF1, "reason", "truncated")
	})
	if err := is(1, "fared_isis_adjacencies", "level", "L2", "state", "Up"); err != nil {
		t.Fatalf("adjacency lost to a malformed PDU: %v", err)
	}
	if n := strings.Count(readFile(t, l.FaredLog("f1")), "malformed PDU dropped"); n != 1 {
		t.Errorf("malformed PDU logged %d times, want once", n)
	}

	// A topology change: the link goes down. The adjacency goes, SPF runs
	// in full, and the histogram counts every run the counter counts.
	fullBefore, _ := f.Sum("fared_spf_runs_total", "kind", "full")
	runsBefore, _ := f.Sum("fared_spf_runs_total")
	if err := l.SetLinkUp(ctx, 0, false); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, 30*time.Second, "SPF counters move after the link went down", func() error {
		if err := get(); err != nil {
			return err
		}
		if err := is(0, "fared_isis_adjacencies", "level", "L2", "state", "Up"); err != nil {
			return err
		}
		if v, _ := f.Sum("fared_isis_adjacency_changes_total", "interface", ifF1, "to", "down"); v < 1 {
			return fmt.Errorf("no adjacency down counted: %v", f.Series("fared_isis_adjacency_changes_total"))
		}
		if v, _ := f.Sum("fared_spf_runs_total", "kind", "full"); v <= fullBefore {
			return fmt.Errorf("full SPF runs %v, before the change %v", v, fullBefore)
		}
		if v, _ := f.Sum("fared_rib_routes", "protocol", "isis"); v != 0 {
			return fmt.Errorf("isis routes left: %v", v)
		}
		return nil
	})
	runs, _ := f.Sum("fared_spf_runs_total")
	obs, _ := f.Sum("fared_spf_duration_seconds") // a histogram sums its counts
	if runs <= runsBefore || obs != runs {
		t.Errorf("spf runs %v (before %v), histogram observations %v: want them equal", runs, runsBefore, obs)
	}
	t.Logf("FIGURE metrics: %v computations, %v netlink messages, %d kernel routes; %d metric families", runs, mustSum(f, "fared_fib_messages_total"), kernel, len(f))
}

func mustSum(f scrape.Families, name string) float64 { v, _ := f.Sum(name); return v }

func metricIs(f scrape.Families, want float64, name string, labels ...string) error {
	v, ok := f.Sum(name, labels...)
	if !ok || v != want {
		return fmt.Errorf("%s%v = %v (present %v), want %v; %v", name, labels, v, ok, want, f.Series(name))
	}
	return nil
}

// probe scrapes one fared's metrics from inside its namespace.
type probe struct {
	ctx context.Context
	ns  string
}

const metricsURL = "http://127.0.0.1:9342/metrics"

// scrape fetches, parses and lints the exposition.
func (p probe) scrape() (scrape.Families, error) {
	f, body, err := scrape.Scrape(p.ctx, p.ns, metricsURL)
	if err != nil {
		return nil, fmt.Errorf("%w\n%.2000s", err, body)
	}
	return f, nil
}

// enableMetrics adds `metrics: {listen: 127.0.0.1:9342}` to a fared node's
// config and reloads it: the listener starts on reload.
func enableMetrics(t *testing.T, ctx context.Context, l *interop.Lab, node string) probe {
	t.Helper()
	n := l.Node(node)
	cfg := filepath.Join(n.Dir, "fared.yaml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(b, "metrics: {listen: 127.0.0.1:9342}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := l.Farectl(ctx, node, "reload"); err != nil || !strings.Contains(string(out), "metrics: ") {
		t.Fatalf("reload: %v\n%s", err, out)
	}
	return probe{ctx, n.Netns}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sendISIS sends one IS-IS PDU in an 802.3/LLC frame to AllL2ISs out of
// ifname in namespace ns, from a made-up MAC: a raw frame on the wire,
// as a broken neighbour would send it.
func sendISIS(ns, ifname string, pdu []byte) error {
	return nsenter.DoNamed(ns, func() error {
		ifi, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		dst := [6]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x15} // AllL2ISs
		frame := make([]byte, 0, 60)
		frame = append(frame, dst[:]...)
		frame = append(frame, 0x02, 0xee, 0, 0, 0, 0x01)
		frame = binary.BigEndian.AppendUint16(frame, uint16(3+len(pdu)))
		frame = append(frame, 0xfe, 0xfe, 0x03) // LLC: OSI
		frame = append(frame, pdu...)
		for len(frame) < 60 {
			frame = append(frame, 0)
		}
		sll := &unix.SockaddrLinklayer{Ifindex: ifi.Index, Halen: 6}
		copy(sll.Addr[:], dst[:])
		return unix.Sendto(fd, frame, 0, sll)
	})
}

// TestMetricsScrapeOSPF: the same for an OSPF-only fared next to FRR: the
// neighbour Full, two router-LSAs, two nodes in the area's graph; an OSPF
// hello with a broken checksum sent by r1's side over a raw IP socket is
// counted as rejected (bad_checksum) and the adjacency stays Full.
func TestMetricsScrapeOSPF(t *testing.T) {
	l, ctx := pairLab(t, "ometrics", "ospf", "")
	p := enableMetrics(t, ctx, l, "f1")
	var f scrape.Families
	poll(t, ctx, 30*time.Second, "metrics match the lab", func() error {
		var err error
		if f, err = p.scrape(); err != nil {
			return err
		}
		for _, err := range []error{
			metricIs(f, 1, "fared_module_up", "module", "ospf"),
			metricIs(f, 1, "fared_ospf_neighbors", "area", "0.0.0.0", "state", "Full"),
			metricIs(f, 2, "fared_ospf_lsdb_lsas", "area", "0.0.0.0", "type", "router"),
			metricIs(f, 2, "fared_topology_nodes", "protocol", "ospf", "topology", "0.0.0.0"),
			metricIs(f, 1, "fared_ospf_interface_state", "interface", ifaceToward(l, "f1", "r1"), "area", "0.0.0.0", "state", "Point-to-Point"),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	})
	if u, err := f.Undocumented("../../docs/metrics.md"); err != nil || len(u) > 0 {
		t.Errorf("not in docs/metrics.md: %v %v", u, err)
	}
	// r1's hello, checksum broken, to f1's address.
	lk := l.Links[0]
	if lk.A != "r1" {
		t.Fatalf("link 0 is %s-%s", lk.A, lk.B)
	}
	r1Addr, f1Addr := lk.AddrA.Addr().String(), lk.AddrB.Addr().String()
	h := &ospfpacket.Hello{Header: ospfpacket.Header{Version: 2, RouterID: l.Node("r1").Loopback, AreaID: netip.MustParseAddr("0.0.0.0")},
		Mask: netip.MustParseAddr("255.255.255.254"), HelloInterval: 1, Options: 0x02, DeadInterval: 4,
		DR: netip.MustParseAddr("0.0.0.0"), BDR: netip.MustParseAddr("0.0.0.0")}
	b := h.AppendTo(nil)
	b[12] ^= 0xff // the checksum (RFC 2328 A.3.1)
	if err := sendOSPF(l.Node("r1").Netns, r1Addr, f1Addr, b); err != nil {
		t.Fatal(err)
	}
	ifF1 := ifaceToward(l, "f1", "r1")
	poll(t, ctx, 10*time.Second, "rejected packet counted", func() error {
		var err error
		if f, err = p.scrape(); err != nil {
			return err
		}
		return metricIs(f, 1, "fared_ospf_packets_rejected_total", "interface", ifF1, "reason", "bad_checksum")
	})
	if err := metricIs(f, 1, "fared_ospf_neighbors", "area", "0.0.0.0", "state", "Full"); err != nil {
		t.Fatalf("adjacency lost to a bad packet: %v", err)
	}
	t.Logf("scraped: %v %v %v", f.Series("fared_ospf_neighbors"), f.Series("fared_ospf_lsdb_lsas"), f.Series("fared_ospf_packets_rejected_total"))
}

// sendOSPF sends one OSPF packet (IP protocol 89) from src to dst over a
// raw IP socket in namespace ns.
func sendOSPF(ns, src, dst string, pkt []byte) error {
	return nsenter.DoNamed(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, 89)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: netip.MustParseAddr(src).As4()}); err != nil {
			return err
		}
		return unix.Sendto(fd, pkt, 0, &unix.SockaddrInet4{Addr: netip.MustParseAddr(dst).As4()})
	})
}
