// Package inc is fared's in-network computing module (docs/inc.md): with
// role manager, the aggregation manager (inc/manager) fed with the rib's
// topologies; with role switch, the INC data plane (inc/aggregator on a
// raw socket) and its session with the manager; role both runs the two.
package inc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"

	"github.com/fared/fared/api"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/inc/manager"
)

// Spec is the module's entry in fared's module table.
var Spec = daemon.Spec{
	Name:       "inc",
	Configured: func(c *config.Config) bool { return sectionOf(c) != nil },
	New:        newModule,
}

type module struct {
	core *daemon.Core
	host string

	mu  sync.Mutex // cfg (Reconfigure vs API)
	cfg *Config

	mgr *manager.Manager
	dp  *dataPlane
	lis net.Listener
}

func newModule(core *daemon.Core, c *config.Config) (daemon.Module, error) {
	s := sectionOf(c)
	m := &module{core: core, host: c.Hostname, cfg: s}
	if m.host == "" {
		m.host = c.RouterID.String()
	}
	if s.isManager() {
		m.mgr = manager.New(managerConfig(s), core.Log.With("module", "inc", "role", "manager"), core.Guard("inc"))
		m.mgr.SetSecurity(security(s))
	}
	if s.isSwitch() {
		addr := s.Address
		if !addr.IsValid() {
			addr = c.RouterID
		}
		if !addr.Is4() {
			return nil, fmt.Errorf("inc: a switch needs an IPv4 address (inc.address or router-id)")
		}
		sc := *s
		if sc.Manager == "" { // role both: this node
			sc.Manager = ownManager(s.Listen, addr)
		}
		m.dp = newDataPlane(core.Log.With("module", "inc", "role", "switch"), m.host, &sc, addr)
		if s.TLS != nil {
			m.dp.tls.Store(s.TLS.material)
		}
	}
	return m, nil
}

// ownManager is where the switch of a role-both node reaches its own
// manager: the address it listens on, or with a wildcard listen the
// switch's address (the one its certificate names).
func ownManager(listen string, addr netip.Addr) string {
	ap, err := netip.ParseAddrPort(listen)
	if err != nil {
		return netip.AddrPortFrom(addr, DefaultPort).String()
	}
	if ap.Addr().IsUnspecified() {
		return netip.AddrPortFrom(addr, ap.Port()).String()
	}
	return ap.String()
}

func managerConfig(s *Config) manager.Config {
	return manager.Config{Heartbeat: s.Heartbeat, DeadAfter: s.DeadAfter, Slots: s.Slots, Ordered: s.Ordered,
		TimeoutReports: s.TimeoutReports, MaxGroups: s.MaxGroups, MaxGroupsPerToken: s.MaxGroupsPerToken, MaxGroupSize: s.MaxGroupSize}
}

// security is the manager's TLS material and token keys from s.
func security(s *Config) manager.Security {
	var sec manager.Security
	if s.TLS != nil {
		sec.TLS = s.TLS.material
	}
	if s.ClientAuth != nil {
		sec.TokenKeys = s.ClientAuth.keys
	}
	return sec
}

// Run runs the roles until ctx ends.
func (m *module) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 3)
	var wg sync.WaitGroup
	if m.mgr != nil {
		l, err := net.Listen("tcp", m.cfg.Listen)
		if err != nil {
			return fmt.Errorf("inc manager: %w", err)
		}
		m.lis = l
		m.logTrust()
		wg.Add(3)
		go func() { defer wg.Done(); m.mgr.Run(ctx) }()
		go func() { defer wg.Done(); errc <- m.mgr.Serve(ctx, l) }()
		go func() { defer wg.Done(); m.follow(ctx) }()
	}
	if m.dp != nil {
		wg.Add(1)
		go func() { defer wg.Done(); errc <- m.dp.run(ctx) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	cancel()
	wg.Wait()
	return err
}

// logTrust says how the manager authenticates, once at start.
func (m *module) logTrust() {
	log := m.core.Log.With("module", "inc", "role", "manager")
	if m.cfg.TLS == nil {
		log.Warn("inc manager: no tls configured: serving this node only (loopback), without authentication of its callers",
			"listen", m.cfg.Listen, "docs", "docs/inc.md, Control-plane trust")
		return
	}
	log.Info("inc manager: tls; switches need a certificate of the CA naming a router of the LSDB, clients a join token",
		"listen", m.cfg.Listen, "tls_files_sha256", m.cfg.TLS.Sum, "token_keys", m.cfg.ClientAuth.Keys)
}

// follow hands the rib's topologies to the manager after every SPF run.
func (m *module) follow(ctx context.Context) {
	sub := m.core.RIB.Subscribe()
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case snap := <-sub.C():
			if snap != nil {
				m.mgr.SetGraphs(snap.Graphs)
			}
		}
	}
}

// Check refuses what cannot change live: the role, the switch's address
// and limits, the manager's listen address.
func (m *module) Check(c *config.Config) error {
	n := sectionOf(c)
	m.mu.Lock()
	o := m.cfg
	m.mu.Unlock()
	var errs []error
	if n.Role != o.Role {
		errs = append(errs, fmt.Errorf("role %s -> %s: restart fared to change roles", o.Role, n.Role))
	}
	if o.isSwitch() && (n.Address != o.Address || n.Manager != o.Manager || n.Slots != o.Slots || n.Ranks != o.Ranks ||
		n.Trees != o.Trees || n.MaxPayload != o.MaxPayload || n.PKey != o.PKey) {
		errs = append(errs, errors.New("the switch's address, manager, limits and p-key apply at start only"))
	}
	if o.isManager() && n.Listen != o.Listen {
		errs = append(errs, errors.New("listen applies at start only"))
	}
	if (n.TLS == nil) != (o.TLS == nil) {
		errs = append(errs, errors.New("adding or removing tls applies at start only (new certificate files apply at a reload)"))
	}
	return errors.Join(errs...)
}

// Reconfigure applies the manager's tunables (for the next trees).
func (m *module) Reconfigure(ctx context.Context, c *config.Config) (daemon.Change, error) {
	n := sectionOf(c)
	m.mu.Lock()
	ch := daemon.Change{Changed: config.Diff(*m.cfg, *n)}
	m.cfg = n
	m.mu.Unlock()
	if m.mgr != nil && len(ch.Changed) > 0 {
		m.mgr.SetSecurity(security(n))
		if err := m.mgr.SetConfig(ctx, managerConfig(n)); err != nil {
			return ch, err
		}
	}
	if m.dp != nil {
		m.dp.setIngressCheck(n.IngressCheck)
	}
	if m.dp != nil && n.TLS != nil {
		m.dp.tls.Store(n.TLS.material) // the next session uses it
	}
	return ch, nil
}

// Routes registers the API (docs/inc.md).
func (m *module) Routes(r *api.Router) {
	notManager := api.NotFound(errors.New("this node is not an INC manager (inc.role)"))
	notSwitch := api.NotFound(errors.New("this node is not an INC switch (inc.role)"))
	mgr := func(f func(context.Context) (any, error)) api.Handler {
		return func(req *http.Request) (any, error) {
			if m.mgr == nil {
				return nil, notManager
			}
			return f(req.Context())
		}
	}
	r.Handle("GET groups", mgr(func(ctx context.Context) (any, error) { return m.mgr.Groups(ctx) }))
	r.Handle("GET trees", mgr(func(ctx context.Context) (any, error) { return m.mgr.Trees(ctx) }))
	r.Handle("GET clients", mgr(func(ctx context.Context) (any, error) { return m.mgr.Clients(ctx) }))
	r.Handle("GET switches", mgr(func(ctx context.Context) (any, error) { return m.mgr.Switches(ctx) }))
	r.Handle("GET security", mgr(func(ctx context.Context) (any, error) {
		v, err := m.mgr.Security(ctx)
		m.mu.Lock()
		v.Listen = m.cfg.Listen
		m.mu.Unlock()
		return v, err
	}))
	// The operator's dismantle (docs/inc.md, "Dismantling a group"): the
	// socket's permissions are its authorisation; clients have no such call.
	r.Handle("DELETE groups/{name}", func(req *http.Request) (any, error) {
		if m.mgr == nil {
			return nil, notManager
		}
		return dismantleAnswer(m.mgr.Dismantle(req.Context(), req.PathValue("name")))
	})
	r.Handle("GET switch", func(*http.Request) (any, error) {
		if m.dp == nil {
			return nil, notSwitch
		}
		return m.dp.view.Load(), nil
	})
}

// dismantleAnswer maps the manager's refusals to the API's statuses: an
// unknown group is 404, a name no group can have 400.
func dismantleAnswer(v wire.INCGroup, err error) (any, error) {
	switch {
	case errors.Is(err, manager.ErrNoGroup):
		return nil, api.NotFound(err)
	case errors.Is(err, manager.ErrGroupName):
		return nil, api.BadRequest(err)
	case err != nil:
		return nil, err
	}
	return v, nil
}

// Status is the module's line in GET /v1/status.
func (m *module) Status() any {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := map[string]any{"role": m.cfg.Role}
	if m.mgr != nil {
		st["manager"] = map[string]any{"listen": m.cfg.Listen, "tls": m.cfg.TLS != nil, "client_auth": m.cfg.ClientAuth != nil,
			"loopback_only": m.cfg.TLS == nil}
	}
	if m.dp != nil {
		v := m.dp.view.Load()
		st["switch"] = map[string]any{"address": v.Address, "registered": v.Registered, "trees": len(v.Trees)}
	}
	return st
}
