package linux

import (
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/fared/fared/qos/model"
)

// The HTB tree fared builds on an interface:
//
//	1:    htb, default class 1:10
//	1:1   the port: rate = ceil = the interface rate
//	1:1p  priority p (0..7): rate = the port's share by weight, ceil = the port
//
// u32 filters on 1: send a packet to 1:1p by its DSCP (IPv4 TOS byte,
// IPv6 traffic class). A packet whose skb->priority is a class id of 1:
// (set by nftables for elephants and prevention) goes straight to that
// class: HTB looks at skb->priority before running filters.
const (
	htbMajor   = 1
	classBase  = 0x10
	filterPrio = 10
)

// ClassID is the HTB class of priority p.
func ClassID(p int) uint32 { return netlink.MakeHandle(htbMajor, uint16(classBase+p)) }

// ClassName formats ClassID(p) the way tc and nft write it ("1:13").
func ClassName(p int) string { return fmt.Sprintf("%d:%x", htbMajor, classBase+p) }

// dscpFilters are the u32 filters of the DSCP map: one per DSCP whose
// priority is not 0 (0 is the default class), for IPv4 and IPv6.
func dscpFilters(link int, dscp [64]uint8) []*netlink.U32 {
	var out []*netlink.U32
	for d := 0; d < 64; d++ {
		p := int(dscp[d])
		if p == 0 {
			continue
		}
		for _, fam := range []struct {
			proto     uint16
			mask, val uint32
			prio      uint16
		}{
			// The key is the header's first 32-bit word in host order
			// (the netlink package sends it in network order).
			// IPv4: TOS is byte 1 of the header; DSCP its upper six bits.
			{unix.ETH_P_IP, 0x00fc0000, uint32(d) << 18, filterPrio},
			// IPv6: the traffic class straddles bytes 0 and 1; DSCP is
			// bits 4..9 of the first word.
			{unix.ETH_P_IPV6, 0x0fc00000, uint32(d) << 22, filterPrio + 1},
		} {
			out = append(out, &netlink.U32{
				FilterAttrs: netlink.FilterAttrs{LinkIndex: link, Parent: netlink.MakeHandle(htbMajor, 0),
					Priority: fam.prio, Protocol: fam.proto},
				ClassId: ClassID(p),
				Sel: &netlink.TcU32Sel{Flags: nl.TC_U32_TERMINAL,
					Keys: []netlink.TcU32Key{{Mask: fam.mask, Val: fam.val, Off: 0}}},
			})
		}
	}
	return out
}

// applyHTB (re)builds the HTB tree and filters of one interface. rate is
// in bits/s.
func (b *Backend) applyHTB(link netlink.Link, i model.Iface, dscp [64]uint8, rate uint64) error {
	idx := link.Attrs().Index
	h := b.h
	// HTB has no change operation: a root HTB 1: that is there already
	// (ours, default class 1:10) stays; anything else is replaced.
	qs, err := h.QdiscList(link)
	if err != nil {
		return fmt.Errorf("qdisc list: %w", err)
	}
	have := false
	for _, q := range qs {
		a := q.Attrs()
		if a.Parent == netlink.HANDLE_ROOT && a.Handle == netlink.MakeHandle(htbMajor, 0) && q.Type() == "htb" {
			have = true
		}
	}
	if !have {
		q := netlink.NewHtb(netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(htbMajor, 0), Parent: netlink.HANDLE_ROOT})
		q.Defcls = classBase
		if err := h.QdiscReplace(q); err != nil {
			return fmt.Errorf("htb qdisc: %w", err)
		}
	}
	root := netlink.NewHtbClass(netlink.ClassAttrs{LinkIndex: idx, Parent: netlink.MakeHandle(htbMajor, 0), Handle: netlink.MakeHandle(htbMajor, 1)},
		netlink.HtbClassAttrs{Rate: rate, Ceil: rate})
	if err := h.ClassReplace(root); err != nil {
		return fmt.Errorf("htb class 1:1: %w", err)
	}
	// Shares: a strict queue weighs 1, a DWRR/WRR queue its weight.
	var total int
	for p := 0; p < model.NumPrio; p++ {
		total += weight(i.Queues[p])
	}
	for p := 0; p < model.NumPrio; p++ {
		qc := i.Queues[p]
		share := rate * uint64(weight(qc)) / uint64(total)
		prio := uint32(model.NumPrio - 1) // DWRR: shares by rate, lowest borrowing priority
		if qc.Sched == model.Strict || qc.Sched == "" {
			prio = uint32(model.NumPrio - 1 - p) // higher priority borrows first
		}
		c := netlink.NewHtbClass(netlink.ClassAttrs{LinkIndex: idx, Parent: netlink.MakeHandle(htbMajor, 1), Handle: ClassID(p)},
			netlink.HtbClassAttrs{Rate: max(share, 8000), Ceil: rate, Prio: prio})
		if err := h.ClassReplace(c); err != nil {
			return fmt.Errorf("htb class %s: %w", ClassName(p), err)
		}
	}
	// Filters: replace the whole set (the kernel numbers u32 handles
	// itself, so deleting the old ones by priority is the simple way).
	old, err := h.FilterList(link, netlink.MakeHandle(htbMajor, 0))
	if err != nil {
		return fmt.Errorf("filter list: %w", err)
	}
	for _, f := range old {
		if a := f.Attrs(); a.Priority == filterPrio || a.Priority == filterPrio+1 {
			if err := h.FilterDel(f); err != nil && err != unix.ENOENT {
				return fmt.Errorf("filter del: %w", err)
			}
		}
	}
	for _, f := range dscpFilters(idx, dscp) {
		if err := h.FilterAdd(f); err != nil {
			return fmt.Errorf("u32 filter: %w", err)
		}
	}
	return nil
}

func weight(q model.Queue) int {
	if q.Sched == model.Strict || q.Sched == "" || q.Weight <= 0 {
		return 1
	}
	return q.Weight
}

// htbCounters reads the per-priority classes of an interface.
func (b *Backend) htbCounters(link netlink.Link, ic *model.IfaceCounters, elephant int) error {
	classes, err := b.h.ClassList(link, netlink.MakeHandle(htbMajor, 0))
	if err != nil {
		return err
	}
	for _, c := range classes {
		a := c.Attrs()
		maj, min := netlink.MajorMinor(a.Handle)
		if maj != htbMajor || min < classBase || min >= classBase+model.NumPrio || a.Statistics == nil {
			continue
		}
		p := int(min - classBase)
		s := a.Statistics
		cc := model.Class{Name: ClassName(p), Prio: p}
		if s.Basic != nil {
			cc.Bytes, cc.Packets = s.Basic.Bytes, uint64(s.Basic.Packets)
		}
		if s.Queue != nil {
			cc.Backlog, cc.Drops = uint64(s.Queue.Backlog), uint64(s.Queue.Drops)
		}
		ic.Classes = append(ic.Classes, cc)
		pc := &ic.Prio[p]
		pc.TxBytes, pc.TxPackets, pc.Depth, pc.Drops = cc.Bytes, cc.Packets, cc.Backlog, cc.Drops
		if p == elephant {
			ic.ElephantBytes += cc.Bytes
		} else {
			ic.MiceBytes += cc.Bytes
		}
	}
	return nil
}
