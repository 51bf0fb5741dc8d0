package ospf

import (
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	apiwire "github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/igp"

	"github.com/fared/fared/config"
	"github.com/fared/fared/ospf/packet"
)

// The JSON shapes of `farectl ospf ...` live in api/wire.
type (
	NeighborView  = apiwire.OSPFNeighbor
	InterfaceView = apiwire.OSPFInterface
	LSAView       = apiwire.OSPFLSA
)

// Neighbors returns every neighbour, by interface and router id.
func (in *Instance) Neighbors(ctx context.Context) ([]NeighborView, error) {
	return igp.Collect(ctx, in.Base, func() (out []NeighborView, _ error) {
		out = []NeighborView{}
		now := in.opt.Now()
		for _, ifc := range in.ifaces {
			for _, n := range ifc.sortedNbrs() {
				v := NeighborView{RouterID: n.rid.String(), Address: n.addr.String(), Interface: ifc.name, Area: ifc.area.name,
					State: n.state.String(), Priority: int(n.prio), DeadIn: max(0, n.deadAt.Sub(now).Seconds()),
					Requests: len(n.requests), Retransmit: len(n.rxmt), Flaps: n.flaps, FullAfterMs: n.fullAfterMs}
				if !ifc.isP2P() {
					v.DR, v.BDR = addrView(n.dr), addrView(n.bdr)
				}
				if n.state >= NbrExchange {
					v.Role = "slave"
					if n.master {
						v.Role = "master" // we are master
					}
				}
				if n.state == NbrFull {
					v.UpSince = n.since.UTC().Format(time.RFC3339)
				}
				out = append(out, v)
			}
		}
		return
	})
}

func addrView(a netip.Addr) string {
	if !a.IsValid() || a.IsUnspecified() {
		return ""
	}
	return a.String()
}

// Interfaces returns the OSPF interfaces with their counters.
func (in *Instance) Interfaces(ctx context.Context) ([]InterfaceView, error) {
	return igp.Collect(ctx, in.Base, func() (out []InterfaceView, _ error) {
		out = []InterfaceView{}
		for _, ifc := range in.ifaces {
			v := InterfaceView{Name: ifc.name, Index: ifc.ifi.Index, Area: ifc.area.name, Type: ifc.cfg.Type, State: ifc.state.String(),
				Passive: ifc.cfg.Passive, MTU: ifc.mtu, Cost: int(ifc.cfg.Cost), BandwidthBytes: ifc.bw,
				HelloInterval: ifc.cfg.HelloInterval.Seconds(), DeadInterval: ifc.cfg.DeadInterval.Seconds(),
				Priority: int(ifc.cfg.Priority), DR: addrView(ifc.dr), BDR: addrView(ifc.bdr), Neighbors: len(ifc.nbrs),
				Counters: maps.Clone(ifc.counters)}
			if ifc.addr.IsValid() {
				v.Address = ifc.addr.String()
			}
			if ifc.bwOverride != 0 {
				v.BandwidthOverride = ifc.bwOverride.String()
			}
			for _, n := range ifc.nbrs {
				if n.state == NbrFull {
					v.Adjacencies++
				}
			}
			out = append(out, v)
		}
		return
	})
}

// DatabaseQuery selects database entries.
type DatabaseQuery struct {
	Area   string // "" all; a dotted quad or number; "AS" for the AS scope
	Type   string // "" all; a number or router|network|summary|asbr-summary|external|opaque-link|opaque-area|opaque-as
	Detail bool
}

var typeNames = map[string]uint8{
	"router": packet.LSARouter, "network": packet.LSANetwork, "summary": packet.LSASummary, "asbr-summary": packet.LSAASBRSummary,
	"external": packet.LSAExternal, "opaque-link": packet.LSAOpaqueLink, "opaque-area": packet.LSAOpaqueArea, "opaque-as": packet.LSAOpaqueAS,
}

// ParseLSAType parses a database type filter (0 = all).
func ParseLSAType(s string) (uint8, error) {
	if s == "" {
		return 0, nil
	}
	if t, ok := typeNames[strings.ToLower(s)]; ok {
		return t, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= 255 {
		return uint8(n), nil
	}
	return 0, fmt.Errorf("unknown LSA type %q (want 1..255 or router, network, summary, asbr-summary, external, opaque-link, opaque-area, opaque-as)", s)
}

// ErrBadQuery marks a malformed query (API: 400).
type ErrBadQuery = igp.ErrBadQuery

// ErrNotFound marks a query for something that does not exist (API: 404).
type ErrNotFound = igp.ErrNotFound

// Database returns LSAs sorted by area (links after the areas, AS scope
// last), type, id and advertising router.
func (in *Instance) Database(ctx context.Context, q DatabaseQuery) ([]LSAView, error) {
	typ, err := ParseLSAType(q.Type)
	if err != nil {
		return nil, ErrBadQuery{Err: err}
	}
	var areaID *uint32
	if q.Area != "" && !strings.EqualFold(q.Area, "AS") {
		a, err := config.ParseArea(q.Area)
		if err != nil {
			return nil, ErrBadQuery{Err: err}
		}
		areaID = &a
	}
	return igp.Collect(ctx, in.Base, func() (out []LSAView, qerr error) {
		out = []LSAView{}
		now := in.opt.Now()
		if areaID != nil && in.area(*areaID) == nil {
			qerr = ErrNotFound{What: "area " + config.AreaString(*areaID)}
			return
		}
		for _, a := range in.allDBs() {
			if areaID != nil && (a.as || a.id != *areaID) {
				continue
			}
			if strings.EqualFold(q.Area, "AS") && !a.as {
				continue
			}
			keys := make([]lsaKey, 0, len(a.db))
			for k := range a.db {
				if typ == 0 || k.typ == typ {
					keys = append(keys, k)
				}
			}
			sort.Slice(keys, func(i, j int) bool { return lessKey(keys[i], keys[j]) })
			for _, k := range keys {
				e := a.db[k]
				h := e.header(now)
				v := LSAView{Area: a.name, Interface: linkName(a), Type: int(h.Type), TypeName: packet.LSATypeName(h.Type), ID: h.ID.String(), AdvRouter: h.AdvRouter.String(),
					Seq: h.Seq, SeqHex: seqHex(h.Seq), Checksum: h.Checksum, ChecksumX: fmt.Sprintf("0x%04x", h.Checksum),
					Age: h.Age, Length: len(e.lsa.Raw), Options: fmt.Sprintf("0x%02x", h.Options), Own: e.own}
				if q.Detail {
					l := e.lsa
					l.Age = h.Age
					v.Detail = packet.Describe(&l, in.pbCode)
					v.Raw = hex.EncodeToString(e.lsa.Raw)
				}
				out = append(out, v)
			}
		}
		return
	})
}

func linkName(a *area) string {
	if a.link == nil {
		return ""
	}
	return a.link.name
}

func seqHex(s int32) string { return fmt.Sprintf("0x%08x", uint32(s)) }

func lsaName(k lsaKey) string {
	return fmt.Sprintf("%s/%s/%s", packet.LSATypeName(k.typ), k.id, k.adv)
}
