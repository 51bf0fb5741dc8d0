package isis

import (
	"context"
	"fmt"
	"slices"

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
// can change live: per-interface metric, bandwidth, hello timers and
// priority; prefixes and their path bandwidth; overload; timers. What
// cannot (system id, areas, level, the set of interfaces) is returned as
// warnings and left as it was.
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

func (in *Instance) circuit(name string) *circuit {
	for _, c := range in.circuits {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (in *Instance) reconfigure(nc *config.Config) []string {
	var warn []string
	ni := nc.ISIS
	if ni == nil {
		return []string{"isis section removed: needs a restart, ignored"}
	}
	if nc.SystemID != in.cfg.SystemID || nc.RouterID != in.cfg.RouterID {
		warn = append(warn, "system-id/router-id changed: needs a restart, ignored")
	}
	if ni.Level != in.icfg.Level || !slices.EqualFunc(ni.Areas, in.icfg.Areas, func(a, b []byte) bool { return string(a) == string(b) }) {
		warn = append(warn, "areas/level changed: needs a restart, ignored")
	}
	if ni.PathBandwidthSubTLV != in.icfg.PathBandwidthSubTLV {
		warn = append(warn, "path-bandwidth-subtlv changed: needs a restart, ignored")
	}
	names := map[string]bool{}
	for _, ic := range ni.Interfaces {
		names[ic.Name] = true
		c := in.circuit(ic.Name)
		if c == nil {
			warn = append(warn, fmt.Sprintf("interface %s added: needs a restart, ignored", ic.Name))
			continue
		}
		if ic.Type != c.cfg.Type || ic.Passive != c.cfg.Passive {
			warn = append(warn, fmt.Sprintf("interface %s: type/passive changed: needs a restart, ignored", ic.Name))
			ic.Type, ic.Passive = c.cfg.Type, c.cfg.Passive
		}
		c.cfg = ic
		c.refresh(in.opt.Now()) // picks up the bandwidth
	}
	for _, c := range in.circuits {
		if !names[c.name] {
			warn = append(warn, fmt.Sprintf("interface %s removed: needs a restart, ignored", c.name))
		}
	}
	keep := *in.icfg
	keep.Interfaces = in.icfg.Interfaces
	keep.Prefixes = ni.Prefixes
	keep.Overload = ni.Overload
	keep.LSPRefresh, keep.LSPGenInterval, keep.CSNPInterval, keep.PSNPInterval = ni.LSPRefresh, ni.LSPGenInterval, ni.CSNPInterval, ni.PSNPInterval
	keep.ECMPOnly, keep.SPF = ni.ECMPOnly, ni.SPF
	in.icfg = &keep
	in.scheduleAll()
	for _, w := range warn {
		in.log.Warn("reload", "warning", w)
	}
	return warn
}

func (in *Instance) setBandwidth(name string, bw config.Bandwidth) error {
	c := in.circuit(name)
	if c == nil {
		return ErrNotFound{What: "interface " + name}
	}
	c.cfg.Bandwidth = bw
	c.refresh(in.opt.Now())
	in.scheduleAll()
	return nil
}
