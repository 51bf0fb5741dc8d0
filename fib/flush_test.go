package fib

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fared --flush removes every route and nexthop in fared's id range,
// whatever their protocol number, and nothing else: a static route, and a
// route of FRR's isisd (protocol isis, no nexthop object of ours) stay.
func TestFlushRemovesOnlyOwnedObjects(t *testing.T) {
	n := newNS(t)
	l := n.veths(2)
	f := n.open(Config{KeepOnShutdown: true})
	mustSync(t, f, []Route{
		{Prefix: pfx("10.150.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 3), nh(l[1].gw4, l[1].idx, 1)}},
		{Prefix: pfx("10.151.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},
	})
	f.Close()
	n.ip("route", "add", "10.160.0.0/24", "via", "10.1.0.2", "proto", "static")
	n.ip("route", "add", "10.161.0.0/24", "via", "10.2.0.2", "proto", "isis") // as FRR's isisd would
	n.ip("nexthop", "add", "id", "7", "via", "10.1.0.2", "dev", l[0].dev)
	n.ip("route", "add", "10.162.0.0/24", "nhid", "7", "proto", "static")

	st, err := Flush(n.h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	// 2 routes; 2 single nexthops + 1 group.
	if st.Routes != 2 || st.Nexthops != 3 {
		t.Errorf("flush removed %+v, want 2 routes and 3 nexthops", st)
	}
	routes := n.ip("route", "show")
	for _, p := range []string{"10.150.0.0/24", "10.151.0.0/24"} {
		if strings.Contains(routes, p) {
			t.Errorf("%s still in the kernel:\n%s", p, routes)
		}
	}
	for _, p := range []string{"10.160.0.0/24", "10.161.0.0/24", "10.162.0.0/24"} {
		if !strings.Contains(routes, p) {
			t.Errorf("foreign %s removed:\n%s", p, routes)
		}
	}
	if nhs := n.ip("nexthop", "show"); strings.TrimSpace(nhs) != "id 7 via 10.1.0.2 dev v1 scope link" {
		t.Errorf("nexthops left:\n%s", nhs)
	}
}

// A node switched from IS-IS to OSPF: at start the OSPF FIB removes what
// the IS-IS run left in fared's range (nothing would ever withdraw it) and
// leaves FRR isisd's routes alone.
func TestAdoptRemovesOwnedObjectsOfOtherProtocol(t *testing.T) {
	n := newNS(t)
	l := n.veths(1)
	f := n.open(Config{Protocol: unix.RTPROT_ISIS, KeepOnShutdown: true})
	mustSync(t, f, []Route{{Prefix: pfx("10.170.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}}})
	f.Close()
	n.ip("route", "add", "10.171.0.0/24", "via", "10.1.0.2", "proto", "isis")

	g := n.open(Config{Protocol: unix.RTPROT_OSPF})
	defer g.Close()
	if err := g.Adopt(); err != nil {
		t.Fatal(err)
	}
	routes := n.ip("route", "show")
	if strings.Contains(routes, "10.170.0.0/24") || !strings.Contains(routes, "10.171.0.0/24") {
		t.Fatalf("after adopt as ospf:\n%s", routes)
	}
	if nhs := n.ip("nexthop", "show"); strings.TrimSpace(nhs) != "" {
		t.Fatalf("isis nexthops left:\n%s", nhs)
	}
}
