package aggregator_test

import (
	"net/netip"

	"github.com/fared/fared/fib"
	"github.com/fared/fared/inc/aggregator"
	"github.com/fared/fared/inc/client/transport"
)

// The part of BenchmarkDataPath that the per-packet checks change: the
// switch's endpoint reports each packet's ingress interface (recvmsg with
// IP_PKTINFO instead of recvfrom), and the aggregator checks it against
// the interfaces of the routes back to its children, read from the
// kernel as the data plane does (the key and the source are checked
// always). Called in the switch's namespace.

func openSwitchEndpoint(addr netip.Addr, qp uint32) (*transport.Endpoint, error) {
	return transport.Open(addr, []uint32{qp}, transport.WithIngress())
}

func checkIngress(s *aggregator.Switch) error {
	in, err := fib.Interfaces(0, s.Peers())
	if err != nil {
		return err
	}
	s.SetIngress(in)
	return nil
}
