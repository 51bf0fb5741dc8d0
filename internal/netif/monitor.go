package netif

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// operUp: a link forwards when it is admin up and has carrier. Links
// without operstate support (lo, dummy) report UNKNOWN, so fall back to
// the flags.
func operUp(a *netlink.LinkAttrs) bool {
	switch a.OperState {
	case netlink.OperUp:
		return true
	case netlink.OperUnknown:
		return a.RawFlags&unix.IFF_UP != 0 && a.RawFlags&unix.IFF_RUNNING != 0
	}
	return false
}

// Namespace maps a namespace handle as callers hold it (the zero value:
// "the current one") to what netlink's *At functions take (netns.None()
// for the current one; 0 would be taken as file descriptor 0).
func Namespace(ns netns.NsHandle) netns.NsHandle {
	if ns.IsOpen() && ns != 0 {
		return ns
	}
	return netns.None()
}

// Monitor reports link oper-state transitions, other link changes
// (LinkChanged) and address changes of the namespace ns (0: the current
// one) until ctx ends, starting with the current state (one
// LinkUp/LinkDown per link and one AddrAdded per address). A deleted link that was up is reported LinkDown. It blocks;
// run it in its own goroutine. The daemon feeds the FIB first (it drops
// the next hops of a dead link at once) and then the modules.
func Monitor(ctx context.Context, ns netns.NsHandle, events chan<- Event) error {
	done := make(chan struct{})
	defer close(done)
	links := make(chan netlink.LinkUpdate, 256)
	addrs := make(chan netlink.AddrUpdate, 256)
	errc := make(chan error, 2)
	ns = Namespace(ns)
	onErr := func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	// Subscribe first, then list: nothing falls between the two. Listing
	// ourselves (instead of ListExisting) gives a deterministic start:
	// every link before any address, so names are known.
	if err := netlink.LinkSubscribeWithOptions(links, done, netlink.LinkSubscribeOptions{
		Namespace: &ns, ErrorCallback: onErr,
	}); err != nil {
		return fmt.Errorf("netif: link monitor: %w", err)
	}
	if err := netlink.AddrSubscribeWithOptions(addrs, done, netlink.AddrSubscribeOptions{
		Namespace: &ns, ErrorCallback: onErr,
	}); err != nil {
		return fmt.Errorf("netif: address monitor: %w", err)
	}
	state := map[int]bool{}
	names := map[int]string{}
	initial := false // the events of the first listing
	send := func(ev Event) error {
		ev.Initial = initial
		select {
		case events <- ev:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	linkChanged := func(idx int, a *netlink.LinkAttrs) error {
		names[idx] = a.Name
		up := operUp(a)
		if prev, known := state[idx]; known && prev == up {
			// Not a transition, but the link may have changed otherwise
			// (a bond's speed): the modules re-read it.
			return send(Event{Kind: LinkChanged, IfIndex: idx, Name: a.Name})
		}
		state[idx] = up
		if up {
			return send(Event{Kind: LinkUp, IfIndex: idx, Name: a.Name})
		}
		return send(Event{Kind: LinkDown, IfIndex: idx, Name: a.Name})
	}
	addrChanged := func(idx int, p netip.Prefix, added bool) error {
		kind := AddrAdded
		if !added {
			kind = AddrRemoved
		}
		return send(Event{Kind: kind, IfIndex: idx, Name: names[idx], Addr: p})
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("netif: monitor: %w", err)
	}
	ls, err := h.LinkList()
	if err != nil {
		h.Close()
		return fmt.Errorf("netif: monitor: list links: %w", err)
	}
	as, err := h.AddrList(nil, netlink.FAMILY_ALL)
	h.Close()
	if err != nil {
		return fmt.Errorf("netif: monitor: list addresses: %w", err)
	}
	initial = true
	for _, l := range ls {
		if err := linkChanged(l.Attrs().Index, l.Attrs()); err != nil {
			return err
		}
	}
	for _, a := range as {
		if p, ok := ipnetPrefix(a.IPNet); ok {
			if err := addrChanged(a.LinkIndex, p, true); err != nil {
				return err
			}
		}
	}
	initial = false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			return fmt.Errorf("netif: monitor: %w", err)
		case u, ok := <-links:
			if !ok {
				return fmt.Errorf("netif: link monitor closed")
			}
			a := u.Attrs()
			idx := int(u.Index)
			if u.Header.Type == unix.RTM_DELLINK {
				up, known := state[idx]
				if known && up {
					if err := send(Event{Kind: LinkDown, IfIndex: idx, Name: a.Name}); err != nil {
						return err
					}
				}
				if known {
					if err := send(Event{Kind: LinkGone, IfIndex: idx, Name: a.Name}); err != nil {
						return err
					}
				}
				delete(state, idx)
				continue
			}
			if err := linkChanged(idx, a); err != nil {
				return err
			}
		case u, ok := <-addrs:
			if !ok {
				return fmt.Errorf("netif: address monitor closed")
			}
			p, ok := ipnetPrefix(&u.LinkAddress)
			if !ok {
				continue
			}
			if err := addrChanged(u.LinkIndex, p, u.NewAddr); err != nil {
				return err
			}
		}
	}
}

func ipnetPrefix(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	ip, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	bits, _ := n.Mask.Size()
	ip = ip.Unmap()
	return netip.PrefixFrom(ip, min(bits, ip.BitLen())), true
}
