package manager

import (
	"fmt"
	"net/netip"
	"unicode"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fared/fared/inc/protos"
)

// Limits of what the manager accepts from the network.
const (
	MaxGroupName = 64
	MaxGroupSize = 4096
	maxHost      = 255
)

func invalid(format string, args ...any) error {
	return status.Error(codes.InvalidArgument, fmt.Sprintf(format, args...))
}

func checkName(what, s string, max int) error {
	if s == "" || len(s) > max {
		return invalid("%s: %d characters, want 1..%d", what, len(s), max)
	}
	for i, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return invalid("%s: character %q at %d is not printable", what, r, i)
		}
	}
	return nil
}

// dataAddr parses a data-plane address: IPv4 unicast (the data plane's
// raw sockets are IPv4).
func dataAddr(what, s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return a, invalid("%s %q: %v", what, s, err)
	}
	a = a.Unmap()
	if !a.Is4() || !a.IsGlobalUnicast() {
		return a, invalid("%s %s: want an IPv4 unicast address", what, a)
	}
	return a, nil
}

func checkQP(what string, qp uint32) error {
	if qp == 0 || qp > 0xFFFFFF {
		return invalid("%s %d: want 1..16777215 (24 bits)", what, qp)
	}
	return nil
}

// ValidateJoin checks a Join request on its own (the manager then checks
// it against the group).
func ValidateJoin(r *protos.JoinRequest) (netip.Addr, error) {
	if err := checkName("group", r.GetGroup(), MaxGroupName); err != nil {
		return netip.Addr{}, err
	}
	if r.GetSize() < 1 || r.GetSize() > MaxGroupSize {
		return netip.Addr{}, invalid("size %d: want 1..%d", r.GetSize(), MaxGroupSize)
	}
	if r.GetRank() >= r.GetSize() {
		return netip.Addr{}, invalid("rank %d in a group of %d", r.GetRank(), r.GetSize())
	}
	if err := checkQP("qpn", r.GetQpn()); err != nil {
		return netip.Addr{}, err
	}
	if len(r.GetHost()) > maxHost {
		return netip.Addr{}, invalid("host: %d characters, at most %d", len(r.GetHost()), maxHost)
	}
	return dataAddr("address", r.GetAddress())
}

// ValidateRegister checks a switch's registration.
func ValidateRegister(r *protos.SwitchRegister) (netip.Addr, error) {
	if r == nil {
		return netip.Addr{}, invalid("the first message must be a registration")
	}
	if err := checkName("node id", r.GetNodeId(), maxHost); err != nil {
		return netip.Addr{}, err
	}
	switch {
	case r.GetMaxTrees() < 1 || r.GetMaxTrees() > 65535:
		return netip.Addr{}, invalid("max trees %d: want 1..65535", r.GetMaxTrees())
	case r.GetMaxSlots() < 1 || r.GetMaxSlots() > 65535:
		return netip.Addr{}, invalid("max slots %d: want 1..65535", r.GetMaxSlots())
	case r.GetMaxRanks() < 1 || r.GetMaxRanks() > 65535:
		return netip.Addr{}, invalid("max ranks %d: want 1..65535", r.GetMaxRanks())
	case r.GetMaxPayload() < 16 || r.GetMaxPayload() > 9000:
		return netip.Addr{}, invalid("max payload %d: want 16..9000 bytes", r.GetMaxPayload())
	}
	return dataAddr("address", r.GetAddress())
}

// ValidateReport checks a timeout report.
func ValidateReport(r *protos.TimeoutReport) error {
	if r.GetClientId() == "" || len(r.GetClientId()) > 64 {
		return invalid("client id: %d characters", len(r.GetClientId()))
	}
	if r.GetTreeId() > 0xFFFF {
		return invalid("tree id %d: 16 bits", r.GetTreeId())
	}
	if r.GetTimeouts() == 0 {
		return invalid("a report of 0 timeouts")
	}
	return nil
}
