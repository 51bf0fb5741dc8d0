package ospf

import (
	"context"
	"fmt"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/loop"
)

type notifyEvent struct{ name string }

type reconfigEvent struct {
	cfg  *config.Config
	done chan<- []string
}

type bandwidthEvent struct {
	iface string
	bw    config.Bandwidth
	done  chan<- error
}

// Notify tells the instance that an interface changed (from the netlink
// monitor), so it re-reads it now instead of at the next poll.
func (in *Instance) Notify(name string) {
	in.lp.TryPost(notifyEvent{name}) // if the queue is full, the poll catches up
}

// Reconfigure applies a new configuration to the running instance. What
// can change live: per-interface cost, bandwidth and priority; prefixes and
// their path bandwidth; timers. What cannot (router id, areas, the set of
// interfaces, interface type, hello/dead intervals, the Path Bandwidth
// codepoint) is returned as warnings and left as it was.
func (in *Instance) Reconfigure(ctx context.Context, cfg *config.Config) ([]string, error) {
	return loop.Ask(ctx, in.lp, func(r chan<- []string) any { return reconfigEvent{cfg: cfg, done: r} })
}

// SetBandwidth overrides an interface's bandwidth at run time (bits/s).
func (in *Instance) SetBandwidth(ctx context.Context, iface string, bw config.Bandwidth) error {
	err, aerr := loop.Ask(ctx, in.lp, func(r chan<- error) any { return bandwidthEvent{iface: iface, bw: bw, done: r} })
	if aerr != nil {
		return aerr
	}
	return err
}

func (in *Instance) reconfigure(nc *config.Config) []string {
	var warn []string
	no := nc.OSPF
	if no == nil {
		return []string{"ospf section removed: needs a restart, ignored"}
	}
	if nc.OSPFRouterID() != in.rid {
		warn = append(warn, "router-id changed: needs a restart, ignored")
	}
	if no.PathBandwidthSubTLV != in.ocfg.PathBandwidthSubTLV {
		warn = append(warn, "path-bandwidth-subtlv changed: needs a restart, ignored")
	}
	names := map[string]bool{}
	for _, ic := range no.Interfaces {
		names[ic.Name] = true
		ifc := in.iface(ic.Name)
		if ifc == nil {
			warn = append(warn, fmt.Sprintf("interface %s added: needs a restart, ignored", ic.Name))
			continue
		}
		if ic.Type != ifc.cfg.Type || ic.Passive != ifc.cfg.Passive || ic.Area != ifc.cfg.Area ||
			ic.HelloInterval != ifc.cfg.HelloInterval || ic.DeadInterval != ifc.cfg.DeadInterval {
			warn = append(warn, fmt.Sprintf("interface %s: type/passive/area/hello/dead changed: needs a restart, ignored", ic.Name))
			ic.Type, ic.Passive, ic.Area, ic.HelloInterval, ic.DeadInterval = ifc.cfg.Type, ifc.cfg.Passive, ifc.cfg.Area, ifc.cfg.HelloInterval, ifc.cfg.DeadInterval
		}
		prio := ifc.cfg.Priority != ic.Priority
		ifc.cfg = ic
		ifc.refresh(in.opt.Now())
		if prio {
			ifc.neighborChange(in.opt.Now())
		}
	}
	for _, ifc := range in.ifaces {
		if !names[ifc.name] {
			warn = append(warn, fmt.Sprintf("interface %s removed: needs a restart, ignored", ifc.name))
		}
	}
	keep := *in.ocfg
	var pfx []config.OSPFPrefix
	for _, p := range no.Prefixes {
		if !p.External && in.area(p.Area) == nil {
			warn = append(warn, fmt.Sprintf("prefix %s: area %s is not attached, ignored", p.Prefix, config.AreaString(p.Area)))
			continue
		}
		pfx = append(pfx, p)
	}
	keep.Prefixes = pfx
	keep.LSARefresh, keep.LSAGenInterval, keep.MinLSArrival, keep.RetransmitInterval = no.LSARefresh, no.LSAGenInterval, no.MinLSArrival, no.RetransmitInterval
	keep.ECMPOnly, keep.SPF = no.ECMPOnly, no.SPF
	in.ocfg = &keep
	in.scheduleAll()
	for _, w := range warn {
		in.log.Warn("reload", "warning", w)
	}
	return warn
}

func (in *Instance) setBandwidth(name string, bw config.Bandwidth) error {
	ifc := in.iface(name)
	if ifc == nil {
		return ErrNotFound{What: "interface " + name}
	}
	ifc.cfg.Bandwidth = bw
	ifc.refresh(in.opt.Now())
	in.scheduleAll()
	return nil
}
