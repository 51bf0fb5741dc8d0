package qosconfig

import (
	"sort"

	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/policy"
)

// Desired translates the configuration into the state backends apply.
func (c *Config) Desired() *model.Desired {
	d := &model.Desired{Poll: c.Poll}
	for dscp, pr := range c.DSCP {
		d.DSCP[dscp] = pr
	}
	for _, p := range c.Profiles {
		d.Profiles = append(d.Profiles, p.Profile)
	}
	group := map[string]string{}
	for _, g := range c.Groups {
		for _, i := range g.Ifaces {
			group[i] = g.Name
		}
		d.Remaps = append(d.Remaps, g.Remaps...)
	}
	for _, f := range c.Ifaces {
		i := model.Iface{Name: f.Name, Rate: f.Rate, PFCConfigured: c.PFC.Prios, Thresholds: c.PFC.Thresholds,
			Group: group[f.Name],
			Watchdog: model.WatchdogParams{Enabled: c.Watchdog.Enabled, Detection: c.Watchdog.Detection,
				Restoration: c.Watchdog.Restoration, Action: c.Watchdog.Action}}
		if f.PFC != nil {
			i.PFCConfigured = *f.PFC
		}
		i.PFC = i.PFCConfigured
		for q := range i.Queues {
			i.Queues[q] = c.Queues[q].Queue
			if f.Queues[q] != nil {
				i.Queues[q] = f.Queues[q].Queue
			}
		}
		d.Ifaces = append(d.Ifaces, i)
	}
	if c.Flows != nil {
		e := c.Flows.Elephant
		d.Elephant = &e
	}
	d.Sort()
	sort.Slice(d.Remaps, func(i, j int) bool {
		a, b := d.Remaps[i], d.Remaps[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.From < b.From
	})
	return d
}

// WatchdogConfig is the watchdog policy's configuration.
func (c *Config) WatchdogConfig() policy.WatchdogConfig {
	w := c.Watchdog
	return policy.WatchdogConfig{Enabled: w.Enabled, Poll: c.Poll, Detection: w.Detection, Restoration: w.Restoration,
		Action: w.Action, Limit: w.Limit, Window: w.Window}
}

// Iface returns the named interface's entry, or nil.
func (c *Config) Iface(name string) *Iface {
	for i := range c.Ifaces {
		if c.Ifaces[i].Name == name {
			return &c.Ifaces[i]
		}
	}
	return nil
}
