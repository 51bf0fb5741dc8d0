package isis

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"net/netip"
	"sort"
	"time"

	apiwire "github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/igp"

	"github.com/fared/fared/isis/packet"
	"github.com/fared/fared/lsdb"
)

// The JSON shapes of `farectl isis ...` live in api/wire.
type (
	NeighborView  = apiwire.ISISNeighbor
	InterfaceView = apiwire.ISISInterface
	LANLevelView  = apiwire.ISISLANLevel
	LSPView       = apiwire.ISISLSP
)

// Neighbors returns every adjacency that is not Down.
func (in *Instance) Neighbors(ctx context.Context) ([]NeighborView, error) {
	return igp.Collect(ctx, in.Base, func() (out []NeighborView, _ error) {
		out = []NeighborView{}
		now := in.opt.Now()
		hostnames := in.hostnames(now)
		add := func(c *circuit, a *adjacency, lvl string) {
			v := NeighborView{SystemID: a.sysID.String(), Hostname: hostnames[a.sysID], Interface: c.name, Level: lvl,
				State: a.state.String(), Type: c.cfg.Type, SNPA: macString(a.snpa), HoldTime: int(a.hold / time.Second),
				ExpiresIn: max(0, a.expires.Sub(now).Seconds()), Areas: formatAreas(a.areas), Flaps: a.flaps}
			if !c.isP2P() {
				v.Priority = int(a.priority)
				v.LANID = a.lanID.String()
			}
			for _, x := range a.addrs4 {
				v.IPv4 = append(v.IPv4, x.String())
			}
			for _, x := range a.addrs6 {
				v.IPv6 = append(v.IPv6, x.String())
			}
			if a.state == AdjUp {
				v.UpSince = a.since.UTC().Format(time.RFC3339)
			}
			out = append(out, v)
		}
		for _, c := range in.circuits {
			if a := c.p2p; a != nil {
				add(c, a, levelName(a.level))
			}
			for l := 0; l < 2; l++ {
				if c.lan[l] == nil {
					continue
				}
				for _, a := range c.lan[l].adjs {
					add(c, a, levelName(l+1))
				}
			}
		}
		sort.Slice(out, func(i, j int) bool {
			if out[i].Interface != out[j].Interface {
				return out[i].Interface < out[j].Interface
			}
			if out[i].Level != out[j].Level {
				return out[i].Level < out[j].Level
			}
			return out[i].SystemID < out[j].SystemID
		})
		return
	})
}

func levelName(l int) string {
	switch l {
	case 1:
		return "L1"
	case 2:
		return "L2"
	case 3:
		return "L1L2"
	}
	return "-"
}

// hostnames maps system ids to the TLV 137 names in the databases.
func (in *Instance) hostnames(now time.Time) map[packet.SystemID]string {
	m := map[packet.SystemID]string{}
	for _, lv := range in.levels {
		if lv == nil {
			continue
		}
		for id, e := range lv.db {
			if id.Pseudo() != 0 || id.Fragment() != 0 || e.remaining(now) == 0 {
				continue
			}
			if t := e.topology(); t.hasName {
				m[id.SystemID()] = t.name
			}
		}
	}
	return m
}

// Interfaces returns the circuits with their counters.
func (in *Instance) Interfaces(ctx context.Context) ([]InterfaceView, error) {
	return igp.Collect(ctx, in.Base, func() (out []InterfaceView, _ error) {
		for _, c := range in.circuits {
			v := InterfaceView{Name: c.name, Index: c.ifi.Index, Type: c.cfg.Type, State: "down", Passive: c.cfg.Passive,
				MTU: c.mtu, MAC: macString(c.mac), Metric: c.cfg.Metric, BandwidthBytes: c.bw, CircuitID: int(c.localID),
				HelloInterval: c.cfg.HelloInterval.Seconds(), HoldTime: c.holdTime().Seconds(), Addresses: []string{},
				Counters: maps.Clone(c.counters)}
			if c.running {
				v.State = "up"
			}
			if c.bwOverride != 0 {
				v.BandwidthOverride = c.bwOverride.String()
			}
			for _, p := range append(append([]netip.Prefix{}, c.addrs4...), c.addrs6...) {
				v.Addresses = append(v.Addresses, p.String())
			}
			if c.isP2P() {
				if c.p2p != nil && c.p2p.state == AdjUp {
					v.Adjacencies = 1
				}
			} else {
				v.Priority = int(c.cfg.Priority)
				for l := 1; l <= 2; l++ {
					if !c.levelOn(l) {
						continue
					}
					ll := c.lan[l-1]
					lv := LANLevelView{Level: l, DIS: ll.dis}
					if ll.lanID != (packet.NodeID{}) {
						lv.LANID = ll.lanID.String()
					}
					v.Levels = append(v.Levels, lv)
					for _, a := range ll.adjs {
						if a.state == AdjUp {
							v.Adjacencies++
						}
					}
				}
			}
			out = append(out, v)
		}
		return
	})
}

// DatabaseQuery selects database entries.
type DatabaseQuery struct {
	Level  int    // 0: all levels
	LSPID  string // empty: all; else an LSP id, or a hostname[.pp-ff]
	Detail bool
}

// Database returns LSPs sorted by level and id.
func (in *Instance) Database(ctx context.Context, q DatabaseQuery) ([]LSPView, error) {
	return igp.Collect(ctx, in.Base, func() (out []LSPView, qerr error) {
		out = []LSPView{}
		now := in.opt.Now()
		var want *packet.LSPID
		if q.LSPID != "" {
			id, err := in.resolveLSPID(q.LSPID, now)
			if err != nil {
				qerr = err
				return
			}
			want = &id
		}
		names := in.hostnames(now)
		for _, lv := range in.levels {
			if lv == nil || (q.Level != 0 && q.Level != lv.n) {
				continue
			}
			ids := make([]packet.LSPID, 0, len(lv.db))
			for id := range lv.db {
				if want == nil || id == *want {
					ids = append(ids, id)
				}
			}
			sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
			for _, id := range ids {
				e := lv.db[id]
				v := LSPView{LSPID: id.String(), Hostname: names[id.SystemID()], Level: lv.n, Seq: e.lsp.Seq,
					SeqHex: fmt.Sprintf("0x%08x", e.lsp.Seq), Checksum: e.lsp.Checksum, ChecksumX: fmt.Sprintf("0x%04x", e.lsp.Checksum),
					Lifetime: e.remaining(now), Length: len(e.raw), Own: e.own, Attached: e.lsp.Attached(),
					Overload: e.lsp.Overload(), ISType: e.lsp.ISType(), Purged: !e.purged.IsZero()}
				if q.Detail {
					v.TLVs = []map[string]any{}
					for _, t := range e.tlvs() {
						v.TLVs = append(v.TLVs, packet.DescribeTLV(t, in.pbCode))
					}
					v.Raw = hex.EncodeToString(e.raw)
				}
				out = append(out, v)
			}
		}
		return
	})
}

// ErrNotFound marks a query for something that does not exist (API: 404).
type ErrNotFound = igp.ErrNotFound

// resolveLSPID accepts "0000.0000.0001.00-00", "0000.0000.0001" (fragment
// 0 of the node) or "hostname[.pp[-ff]]".
func (in *Instance) resolveLSPID(s string, now time.Time) (packet.LSPID, error) {
	if id, err := packet.ParseLSPID(s); err == nil {
		return id, nil
	}
	if sys, err := packet.ParseSystemID(s); err == nil {
		return packet.MakeLSPID(sys, 0, 0), nil
	}
	name, pseudo, frag := s, uint8(0), uint8(0)
	var pp, ff int
	if n, _ := fmt.Sscanf(s[max(0, len(s)-6):], ".%02x-%02x", &pp, &ff); n == 2 {
		name, pseudo, frag = s[:len(s)-6], uint8(pp), uint8(ff)
	}
	for sys, h := range in.hostnames(now) {
		if h == name {
			return packet.MakeLSPID(sys, pseudo, frag), nil
		}
	}
	return packet.LSPID{}, ErrNotFound{What: "LSP " + s}
}

// LSDB returns the latest graph snapshot of every level.
func (in *Instance) LSDB() []*lsdb.Graph {
	var out []*lsdb.Graph
	for l := 1; l <= 2; l++ {
		if g := in.Graph(l); g != nil {
			out = append(out, g)
		}
	}
	return out
}
