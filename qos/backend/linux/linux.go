// Package linux is the QoS backend of Linux hosts and routers: PFC, ETS
// and the DSCP APP table through the kernel's DCB netlink interface
// (dcbnl, what `dcb` and mlnx_qos use), DSCP classification into HTB
// classes with u32 filters, per-class counters over netlink, and
// large-flow separation and deadlock-prevention remaps with nftables.
//
// Every interface is probed: a device without DCB (veth, most virtual
// devices; the kernel answers EOPNOTSUPP) is reported as such and the
// rest is applied. This kernel has no RED qdisc, so ECN marking is
// reported unsupported rather than faked.
package linux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fared/fared/qos/model"
)

// Options tune the backend.
type Options struct {
	// Netns runs everything in this named network namespace instead of
	// the current one (lab tests; fared itself runs inside its node).
	Netns string
	// NftBin is the nft binary (default "nft").
	NftBin string
	// DefaultRate is the HTB port rate when neither the config nor the
	// interface tells one (bits/s; default 10 Gb/s, what a veth reports).
	DefaultRate uint64
}

// Backend drives one Linux node.
type Backend struct {
	opt  Options
	h    *netlink.Handle
	ns   netns.NsHandle
	sock *nl.SocketHandle // netlink socket in Netns for dcbnl

	dcb      map[string]error // probe result per interface (nil: DCB works)
	red      error            // RED qdisc probe (nil: present)
	redDone  bool
	elephant int // priority of the elephant class, -1 none
	applied  *model.Desired
}

// New opens the backend (netlink handles in the namespace).
func New(opt Options) (*Backend, error) {
	if opt.NftBin == "" {
		opt.NftBin = "nft"
	}
	if opt.DefaultRate == 0 {
		opt.DefaultRate = 10e9
	}
	b := &Backend{opt: opt, dcb: map[string]error{}, elephant: -1, ns: netns.None()}
	var err error
	if opt.Netns != "" {
		b.ns, err = netns.GetFromName(opt.Netns)
		if err != nil {
			return nil, fmt.Errorf("netns %s: %w", opt.Netns, err)
		}
		b.h, err = netlink.NewHandleAt(b.ns)
		if err != nil {
			b.ns.Close()
			return nil, err
		}
		cur, err := netns.Get()
		if err != nil {
			b.Close()
			return nil, err
		}
		defer cur.Close()
		s, err := nl.GetNetlinkSocketAt(b.ns, cur, unix.NETLINK_ROUTE)
		if err != nil {
			b.Close()
			return nil, err
		}
		b.sock = &nl.SocketHandle{Socket: s}
	} else {
		b.h, err = netlink.NewHandle()
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Name is "linux".
func (b *Backend) Name() string { return "linux" }

// Close releases the netlink handles.
func (b *Backend) Close() error {
	if b.h != nil {
		b.h.Close()
	}
	if b.sock != nil {
		b.sock.Close()
	}
	if b.ns.IsOpen() {
		b.ns.Close()
	}
	return nil
}

// Interfaces lists the namespace's links.
func (b *Backend) Interfaces(context.Context) ([]string, error) {
	links, err := b.h.LinkList()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range links {
		out = append(out, l.Attrs().Name)
	}
	sort.Strings(out)
	return out, nil
}

func (b *Backend) execDCB(req *nl.NetlinkRequest) error {
	if b.sock != nil {
		req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: b.sock}
	}
	_, err := execDCB(req)
	return err
}

// probeDCB asks once per interface whether it has DCB.
func (b *Backend) probeDCB(name string) error {
	if err, ok := b.dcb[name]; ok {
		return err
	}
	err := b.execDCB(Request(DCB_CMD_IEEE_GET, name, nil))
	b.dcb[name] = err
	return err
}

// probeRED learns once whether the kernel has a RED qdisc: adding one
// without options fails with EINVAL where sch_red exists and ENOENT
// where it does not, and changes nothing either way.
func (b *Backend) probeRED(link netlink.Link) error {
	if b.redDone {
		return b.red
	}
	q := &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: link.Attrs().Index,
		Parent: ClassID(0), Handle: netlink.MakeHandle(0x100, 0)}, QdiscType: "red"}
	err := b.h.QdiscAdd(q)
	switch {
	case errors.Is(err, unix.ENOENT):
		b.red = errors.New("this kernel has no RED qdisc (sch_red): no ECN marking on Linux here")
	case errors.Is(err, unix.EINVAL):
		b.red = errors.New("the kernel has sch_red, but fared leaves host ECN marking to the RoCE NIC")
	case err == nil:
		_ = b.h.QdiscDel(q)
		b.red = errors.New("the kernel has sch_red, but fared leaves host ECN marking to the RoCE NIC")
	default:
		b.red = fmt.Errorf("RED probe: %v", err)
	}
	b.redDone = true
	return b.red
}

// DCB renders the IEEE DCB state of one interface: PFC enable bitmap,
// ETS (strict or ETS with the DWRR weights as bandwidth percentages,
// priority p in traffic class p) and the DSCP APP table.
func DCB(i model.Iface, dscp [64]uint8) *IEEE {
	pfc := &PFC{Cap: model.NumPrio, Enable: uint8(i.PFC)}
	ets := &ETS{ETSCap: model.NumPrio}
	var total int
	for p := 0; p < model.NumPrio; p++ {
		ets.PrioTC[p] = uint8(p)
		if q := i.Queues[p]; q.Sched == model.DWRR || q.Sched == model.WRR {
			ets.TCTSA[p] = TSAETS
			total += weight(q)
		} else {
			ets.TCTSA[p] = TSAStrict
		}
	}
	// ETS bandwidths are percentages that must add up to 100.
	left := 100
	last := -1
	for p := 0; p < model.NumPrio; p++ {
		if ets.TCTSA[p] == TSAETS {
			bw := 100 * weight(i.Queues[p]) / total
			ets.TCTxBW[p] = uint8(bw)
			left -= bw
			last = p
		}
	}
	if last >= 0 {
		ets.TCTxBW[last] += uint8(left)
	}
	ie := &IEEE{PFC: pfc, ETS: ets}
	for d := 0; d < 64; d++ {
		if dscp[d] != 0 {
			ie.Apps = append(ie.Apps, App{Selector: AppSelDSCP, Priority: dscp[d], Protocol: uint16(d)})
		}
	}
	return ie
}

func (b *Backend) linkRate(name string, conf uint64) uint64 {
	if conf > 0 {
		return conf
	}
	if b.opt.Netns == "" {
		if s, err := os.ReadFile("/sys/class/net/" + name + "/speed"); err == nil {
			if mbps, err := strconv.ParseInt(strings.TrimSpace(string(s)), 10, 64); err == nil && mbps > 0 {
				return uint64(mbps) * 1e6
			}
		}
	}
	return b.opt.DefaultRate
}

// Apply programs every interface and the nftables table.
func (b *Backend) Apply(ctx context.Context, d *model.Desired) (model.Report, error) {
	rep := model.Report{}
	for _, i := range d.Ifaces {
		link, err := b.h.LinkByName(i.Name)
		if err != nil {
			return rep, fmt.Errorf("interface %s: %w", i.Name, err)
		}
		dcbErr := b.probeDCB(i.Name)
		if dcbErr == nil {
			if err := b.execDCB(Request(DCB_CMD_IEEE_SET, i.Name, DCB(i, d.DSCP))); err != nil {
				return rep, fmt.Errorf("interface %s: dcbnl IEEE set: %w", i.Name, err)
			}
			rep.Set(i.Name, model.FeatPFC, true, "dcbnl IEEE PFC")
		} else {
			rep.Set(i.Name, model.FeatPFC, false, "dcbnl: "+dcbErr.Error())
		}
		if err := b.applyHTB(link, i, d.DSCP, b.linkRate(i.Name, i.Rate)); err != nil {
			return rep, fmt.Errorf("interface %s: %w", i.Name, err)
		}
		dcbNote := "dcbnl"
		if dcbErr != nil {
			dcbNote = "dcbnl unsupported here"
		}
		rep.Set(i.Name, model.FeatETS, true, "HTB classes weighted by queue; NIC ETS via "+dcbNote)
		rep.Set(i.Name, model.FeatDSCPMap, true, "u32 on DSCP into HTB classes; NIC APP table via "+dcbNote)
		if err := b.probeRED(link); err != nil {
			rep.Set(i.Name, model.FeatECN, false, err.Error())
		} else {
			rep.Set(i.Name, model.FeatECN, true, "")
		}
		rep.Set(i.Name, model.FeatFastECN, false, "Linux qdiscs mark at enqueue only")
		rep.Set(i.Name, model.FeatWatchdog, false, "the kernel exposes no per-priority PAUSE state (the NIC runs its own PFC watchdog)")
		rep.Set(i.Name, model.FeatPrevention, true, "nftables forward chain: DSCP rewrite and meta priority")
		flows := "nftables per-flow meter; meta priority = HTB class (u32 cannot match marks in this kernel)"
		if e := d.Elephant; e != nil && EffectiveSize(e) != e.Size {
			flows += fmt.Sprintf("; elephant-size %d is below one second of elephant-rate: nftables uses %d", e.Size, EffectiveSize(e))
		}
		if e := d.Elephant; e != nil && e.ClassifyOnly {
			flows = "classify only: nftables lists elephants, they stay in their class (no per-queue elephant bytes)"
		}
		rep.Set(i.Name, model.FeatFlows, true, flows)
		rep.Set(i.Name, model.FeatCounters, true, "HTB class statistics over netlink")
	}
	if err := b.applyNft(ctx, d); err != nil {
		return rep, err
	}
	b.elephant = -1
	if d.Elephant != nil && !d.Elephant.ClassifyOnly {
		b.elephant = int(d.Elephant.Prio)
	}
	b.applied = d
	return rep, nil
}

// Counters reads HTB class counters of the configured interfaces and the
// elephants nftables knows.
func (b *Backend) Counters(ctx context.Context) (*model.Counters, error) {
	c := &model.Counters{At: time.Now(), Ifaces: map[string]*model.IfaceCounters{}}
	if b.applied == nil {
		return c, nil
	}
	for _, i := range b.applied.Ifaces {
		link, err := b.h.LinkByName(i.Name)
		if err != nil {
			return nil, fmt.Errorf("interface %s: %w", i.Name, err)
		}
		ic := &model.IfaceCounters{Name: i.Name}
		if err := b.htbCounters(link, ic, b.elephant); err != nil {
			return nil, fmt.Errorf("interface %s: %w", i.Name, err)
		}
		c.Ifaces[i.Name] = ic
	}
	if b.applied.Elephant != nil {
		fl, err := b.elephants(ctx)
		if err != nil {
			return nil, err
		}
		// nftables does not say which interface a flow left by; the
		// flows are listed on the first interface.
		if len(b.applied.Ifaces) > 0 {
			c.Ifaces[b.applied.Ifaces[0].Name].Flows = fl
		}
	}
	return c, nil
}

// Remove takes fared's qdiscs and nftables table away (tests, shutdown).
func (b *Backend) Remove(ctx context.Context, ifaces []string) error {
	var errs []error
	for _, name := range ifaces {
		link, err := b.h.LinkByName(name)
		if err != nil {
			continue
		}
		q := netlink.NewHtb(netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Handle: netlink.MakeHandle(htbMajor, 0), Parent: netlink.HANDLE_ROOT})
		if err := b.h.QdiscDel(q); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
			errs = append(errs, err)
		}
	}
	if _, err := b.nft(ctx, fmt.Sprintf("table inet %s {}\ndelete table inet %s\n", Table, Table), "-f", "-"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
