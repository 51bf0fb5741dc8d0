// Package netif reads what a routing protocol needs to know about an
// interface from the kernel: index, MAC, MTU, oper state, addresses and
// link speed; and sizes the protocols' sockets (ReceiveBuffer).
package netif

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// Info is one interface as the protocols see it.
type Info struct {
	Iface   net.Interface
	Running bool // admin up and carrier (loopbacks: admin up)
	Addrs   []netip.Prefix
	// SpeedBps is the link speed in bits/s, 0 when the kernel does not know.
	SpeedBps float64
}

// Lookup reads an interface from the kernel.
func Lookup(name string) (*Info, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, err
	}
	up := ifi.Flags&net.FlagUp != 0
	info := &Info{Iface: *ifi, Running: up && (ifi.Flags&net.FlagRunning != 0 || ifi.Flags&net.FlagLoopback != 0)}
	addrs, _ := ifi.Addrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			ip, _ := netip.AddrFromSlice(ipn.IP)
			ones, _ := ipn.Mask.Size()
			info.Addrs = append(info.Addrs, netip.PrefixFrom(ip.Unmap(), ones))
		}
	}
	// /sys/class/net/IF/speed is in Mb/s; -1 or an error means unknown.
	if b, err := os.ReadFile("/sys/class/net/" + name + "/speed"); err == nil {
		if mbps, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && mbps > 0 {
			info.SpeedBps = mbps * 1e6
		}
	}
	return info, nil
}

// EventKind says what changed on an interface.
type EventKind int

// The kinds of interface change the monitor reports.
const (
	LinkUp EventKind = iota + 1
	LinkDown
	AddrAdded
	AddrRemoved
	// LinkGone: the interface was deleted (after a LinkDown if it was up).
	LinkGone
	// LinkChanged: an RTM_NEWLINK that left the oper state as it was:
	// some other attribute may have changed (the MTU; a bond's speed
	// when a member left or came back, which the message does not
	// carry). Who cares re-reads the interface (Lookup: the speed from
	// sysfs, i.e. ethtool's).
	LinkChanged
)

func (k EventKind) String() string {
	switch k {
	case LinkUp:
		return "link-up"
	case LinkDown:
		return "link-down"
	case AddrAdded:
		return "addr-added"
	case AddrRemoved:
		return "addr-removed"
	case LinkGone:
		return "link-gone"
	case LinkChanged:
		return "link-changed"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one interface change, as the netlink monitor reports it to the
// FIB and the modules.
type Event struct {
	Kind    EventKind
	IfIndex int
	Name    string
	Addr    netip.Prefix // AddrAdded, AddrRemoved: the address with its prefix length
	// Initial marks the state the monitor reports when it starts (one
	// event per link and address), as opposed to a change.
	Initial bool
}
