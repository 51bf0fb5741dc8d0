// Package inof is fared's iNOF module (Intelligent Lossless NVMe over
// Fabric): switches learn NVMe-oF hosts on their ports (the host agent's
// L2 protocol, or LLDP), exchange them and the zone configuration over
// IBGP through route reflectors (GoBGP embedded), and tell each host about
// its zone peers as they join, leave or fail. On a host, fared runs the
// agent (role host). docs/inof.md describes the whole.
//
// Subpackages: l2 (the host↔switch protocol and LLDP TLV), record (what
// switches exchange), zones, ibgp (GoBGP), fabric (the switch) and agent
// (the host).
package inof

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/internal/netif"
)

// Spec is iNOF's entry in fared's module table.
var Spec = daemon.Spec{
	Name:       "inof",
	Configured: func(c *config.Config) bool { return Section(c) != nil },
	New:        newModule,
}

type module struct {
	core *daemon.Core
	cfg  *Config // the section in force (daemon goroutines only)
	rid  netip.Addr
	name string
	role string // cannot change live
	id   string
	sw   *switchRT // role switch or reflector
	host *hostRT   // role host
}

func newModule(core *daemon.Core, c *config.Config) (daemon.Module, error) {
	s := Section(c)
	m := &module{core: core, cfg: s, rid: s.RouterID, name: c.Hostname}
	if !m.rid.IsValid() {
		m.rid = c.RouterID
	}
	log := core.Log.With("module", "inof")
	m.role = s.Role
	if s.Role == RoleHost {
		if s.ID == "" {
			s.ID = c.Hostname
		}
		m.id = s.ID
		m.host = newHostRT(log, core.Guard("inof"), s)
	} else {
		m.sw = newSwitchRT(log, core.Guard("inof"), s, m.rid, c.Hostname, core.BFD)
	}
	return m, nil
}

func (m *module) Run(ctx context.Context) error {
	if m.host != nil {
		return m.host.run(ctx)
	}
	return m.sw.run(ctx)
}

// Check refuses what cannot change live: the role, and the BGP speaker's
// identity (ASN, router id, port, cluster id) and timers.
func (m *module) Check(c *config.Config) error {
	s := Section(c)
	if s == nil {
		return nil
	}
	if s.Role != m.cfg.Role {
		return fmt.Errorf("role %s -> %s: needs a restart", m.cfg.Role, s.Role)
	}
	if s.Role == RoleHost {
		if s.ID == "" {
			s.ID = c.Hostname
		}
		if s.ID != m.cfg.ID || s.HostRole != m.cfg.HostRole || s.NQN != m.cfg.NQN || !slices.Equal(s.Interfaces, m.cfg.Interfaces) ||
			s.HostHold != m.cfg.HostHold || s.Hook != m.cfg.Hook || s.HookTimeout != m.cfg.HookTimeout ||
			!slices.Equal(s.HostMAC, m.cfg.HostMAC) || !sameKey(s.Key, m.cfg.Key) {
			return errors.New("host settings change only with a restart (the agent re-registers then)")
		}
		return nil
	}
	rid := s.RouterID
	if !rid.IsValid() {
		rid = c.RouterID
	}
	o := m.cfg
	if rid != m.rid || s.ASN != o.ASN || s.Port != o.Port || s.ClusterID != o.ClusterID || s.Hold != o.Hold ||
		s.Connect != o.Connect || s.GR != o.GR || s.Restart != o.Restart || s.Deferral != o.Deferral ||
		s.BFDTx != o.BFDTx || s.BFDRx != o.BFDRx || s.BFDMult != o.BFDMult || s.LLDP != o.LLDP || s.OUI != o.OUI {
		return errors.New("asn, router-id, port, cluster-id, timers, graceful-restart, bfd timers and lldp change only with a restart")
	}
	return nil
}

func (m *module) Reconfigure(ctx context.Context, c *config.Config) (daemon.Change, error) {
	s := Section(c)
	ch := daemon.Change{Changed: config.Diff(redacted(m.cfg), redacted(s))}
	if m.host != nil {
		m.cfg = s
		return ch, nil
	}
	got, err := askReconf(ctx, m.sw, s)
	if err != nil {
		return ch, err
	}
	ch.Changed = append(ch.Changed, got...)
	m.cfg = s
	return ch, nil
}

func sameKey(a, b *l2.Key) bool {
	return a == nil && b == nil || a != nil && b != nil && a.ID == b.ID && string(a.Secret) == string(b.Secret)
}

// redacted is c without passwords and secrets, for change reports.
func redacted(c *Config) *Config {
	r := *c
	r.Neighbors = slices.Clone(c.Neighbors)
	for i := range r.Neighbors {
		if r.Neighbors[i].Password != "" {
			r.Neighbors[i].Password = "(set)"
		}
	}
	r.HostKeys = slices.Clone(c.HostKeys)
	for i := range r.HostKeys {
		r.HostKeys[i].Secret = "(secret)"
	}
	if c.Key != nil {
		r.Key = &l2.Key{ID: c.Key.ID, Secret: []byte("(secret)")}
	}
	r.Zones = nil // reported by the module in words
	r.Stamp = 0
	return &r
}

// LinkEvent implements daemon.LinkWatcher.
func (m *module) LinkEvent(ev netif.Event) {
	lp, done := m.loop()
	// Must not block: a link event the loop cannot take now is handed
	// over from a goroutine.
	if !lp.TryPost(linkEv{ev}) {
		go post(done, lp, linkEv{ev})
	}
}

func (m *module) loop() (*loop.Loop, chan struct{}) {
	if m.host != nil {
		return m.host.lp, m.host.done
	}
	return m.sw.lp, m.sw.done
}
