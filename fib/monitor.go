package fib

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// LinkEventKind says what changed.
type LinkEventKind int

const (
	LinkUp LinkEventKind = iota + 1
	LinkDown
	AddrAdded
	AddrRemoved
)

func (k LinkEventKind) String() string {
	switch k {
	case LinkUp:
		return "link-up"
	case LinkDown:
		return "link-down"
	case AddrAdded:
		return "addr-added"
	case AddrRemoved:
		return "addr-removed"
	}
	return fmt.Sprintf("LinkEventKind(%d)", int(k))
}

// LinkEvent is one interface change for the routing protocols.
type LinkEvent struct {
	Kind    LinkEventKind
	IfIndex int
	Name    string
	Addr    netip.Prefix // AddrAdded, AddrRemoved: address with its prefix length
}

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

// Monitor reports link oper-state transitions and address changes of the
// FIB's namespace until ctx ends, starting with the current state (one
// LinkUp/LinkDown per link and one AddrAdded per address). Before sending
// LinkDown it calls f.LinkDown (and f.LinkUp before LinkUp), so the FIB
// state follows the kernel even before the routing protocol reacts.
// It blocks; run it in its own goroutine.
func (f *FIB) Monitor(ctx context.Context, events chan<- LinkEvent) error {
	done := make(chan struct{})
	defer close(done)
	links := make(chan netlink.LinkUpdate, 256)
	addrs := make(chan netlink.AddrUpdate, 256)
	errc := make(chan error, 2)
	ns := nsOrNone(f.cfg.NetNS)
	onErr := func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	if err := netlink.LinkSubscribeWithOptions(links, done, netlink.LinkSubscribeOptions{
		Namespace: &ns, ListExisting: true, ErrorCallback: onErr,
	}); err != nil {
		return fmt.Errorf("fib: link monitor: %w", err)
	}
	if err := netlink.AddrSubscribeWithOptions(addrs, done, netlink.AddrSubscribeOptions{
		Namespace: &ns, ListExisting: true, ErrorCallback: onErr,
	}); err != nil {
		return fmt.Errorf("fib: address monitor: %w", err)
	}
	state := map[int]bool{}
	names := map[int]string{}
	send := func(ev LinkEvent) error {
		select {
		case events <- ev:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			return fmt.Errorf("fib: monitor: %w", err)
		case u, ok := <-links:
			if !ok {
				return fmt.Errorf("fib: link monitor closed")
			}
			a := u.Attrs()
			idx := int(u.Index)
			names[idx] = a.Name
			if u.Header.Type == unix.RTM_DELLINK {
				if up, known := state[idx]; known && up {
					_ = f.LinkDown(idx)
					if err := send(LinkEvent{Kind: LinkDown, IfIndex: idx, Name: a.Name}); err != nil {
						return err
					}
				}
				delete(state, idx)
				continue
			}
			up := operUp(a)
			if prev, known := state[idx]; known && prev == up {
				continue
			}
			state[idx] = up
			kind := LinkUp
			if up {
				f.LinkUp(idx)
			} else {
				kind = LinkDown
				// Errors here are per object and already retried by the
				// next Sync; the event matters more than the report.
				_ = f.LinkDown(idx)
			}
			if err := send(LinkEvent{Kind: kind, IfIndex: idx, Name: a.Name}); err != nil {
				return err
			}
		case u, ok := <-addrs:
			if !ok {
				return fmt.Errorf("fib: address monitor closed")
			}
			ip, ok := netip.AddrFromSlice(u.LinkAddress.IP)
			if !ok {
				continue
			}
			bits, _ := u.LinkAddress.Mask.Size()
			ip = ip.Unmap()
			kind := AddrAdded
			if !u.NewAddr {
				kind = AddrRemoved
			}
			if err := send(LinkEvent{Kind: kind, IfIndex: u.LinkIndex, Name: names[u.LinkIndex], Addr: netip.PrefixFrom(ip, bits)}); err != nil {
				return err
			}
		}
	}
}
