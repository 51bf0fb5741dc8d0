package wire

import (
	"encoding/json"
	"math"
)

// Units in the API's JSON (docs/api.md):
//
//   - Bandwidths are bits per second as integers, in fields ending in _bps.
//     null (or an absent field) means "no limit": the largest finite float32
//     a Path Bandwidth or link may carry, infinity, or nothing sent.
//   - Older fields carry bytes per second as floats, the unit IS-IS and
//     OSPF put on the wire (path_bandwidth, link_bandwidth, bandwidth_bytes,
//     max_bandwidth_bytes, ...). They stay, deprecated, for scripts written
//     before the _bps fields; the _bps fields are computed from them when
//     the JSON is written, so the two never disagree.
//   - Durations are numbers of seconds in fields ending in _seconds (or
//     the older hello_interval, hold_time, dead_in... which are seconds too);
//     duration_ns is nanoseconds.

// NoLimit is the bytes/s value at and above which a bandwidth means "no
// limit": 1e30 bytes/s is far above any link, far below the largest
// float32 (3.4e38) that the protocols send for "no constraint".
const NoLimit = 1e30

// BPS converts a wire bandwidth in bytes/s to whole bits/s, nil for "no
// limit" (and for NaN or a negative value, which carry no bandwidth). The
// protocols carry IEEE float32 (7 significant digits): 25G arrives as
// 3124999936 bytes/s. BPS rounds to 7 significant digits, so 25G reads
// 25000000000 again; nothing finer was ever on the wire.
func BPS(bytesPerSec float64) *uint64 {
	if math.IsNaN(bytesPerSec) || bytesPerSec < 0 || bytesPerSec >= NoLimit {
		return nil
	}
	v := bytesPerSec * 8
	if v >= 1e7 {
		scale := math.Pow(10, math.Floor(math.Log10(v))-6)
		v = math.Round(v/scale) * scale
	}
	v = math.Round(v)
	if v >= math.MaxUint64 {
		return nil
	}
	u := uint64(v)
	return &u
}

func bpsPtr(b *float64) *uint64 {
	if b == nil {
		return nil
	}
	return BPS(*b)
}

func bps32(b *float32) *uint64 {
	if b == nil {
		return nil
	}
	return BPS(float64(*b))
}

// MarshalJSON writes the _bps fields from the byte fields.
func (h NextHop) MarshalJSON() ([]byte, error) {
	type plain NextHop
	h.LinkBPS, h.NeighborBPS, h.DownCapBPS, h.PathBPS, h.WeightBPS = BPS(h.LinkBW), BPS(h.NeighborBW), BPS(h.DownCap), BPS(h.PathBW), BPS(h.Weight)
	return json.Marshal(plain(h))
}

// MarshalJSON writes the _bps fields from the byte fields.
func (r Route) MarshalJSON() ([]byte, error) {
	type plain Route
	r.PathBPS = bpsPtr(r.PathBW)
	return json.Marshal(plain(r))
}

// MarshalJSON writes the _bps fields from the byte fields. FareView
// embeds Route, whose MarshalJSON would otherwise hide WeightMax.
func (v FareView) MarshalJSON() ([]byte, error) {
	type plainRoute Route
	v.PathBPS = bpsPtr(v.PathBW)
	return json.Marshal(struct {
		plainRoute
		WeightMax uint32 `json:"weight_max"`
	}{plainRoute(v.Route), v.WeightMax})
}

// MarshalJSON writes the _bps fields from the byte fields.
func (l TopoLink) MarshalJSON() ([]byte, error) {
	type plain TopoLink
	l.MaxBPS = bpsPtr(l.MaxBW)
	return json.Marshal(plain(l))
}

// MarshalJSON writes the _bps fields from the byte fields.
func (p TopoPrefix) MarshalJSON() ([]byte, error) {
	type plain TopoPrefix
	p.PathBPS = bpsPtr(p.PathBW)
	return json.Marshal(plain(p))
}

// MarshalJSON writes the _bps fields from the byte fields.
func (i ISISInterface) MarshalJSON() ([]byte, error) {
	type plain ISISInterface
	i.BandwidthBPS = BPS(float64(i.BandwidthBytes))
	return json.Marshal(plain(i))
}

// MarshalJSON writes the _bps fields from the byte fields.
func (l ISISLeak) MarshalJSON() ([]byte, error) {
	type plain ISISLeak
	l.PathBPS, l.OrigPathBPS, l.CapacityBPS = BPS(l.PathBW), bpsPtr(l.OrigPathBW), BPS(l.Capacity)
	return json.Marshal(plain(l))
}

// MarshalJSON writes the _bps fields from the byte fields.
func (i OSPFInterface) MarshalJSON() ([]byte, error) {
	type plain OSPFInterface
	i.BandwidthBPS = BPS(float64(i.BandwidthBytes))
	return json.Marshal(plain(i))
}

// MarshalJSON writes the _bps fields from the byte fields.
func (s OSPFSummary) MarshalJSON() ([]byte, error) {
	type plain OSPFSummary
	s.PathBPS, s.OrigPathBPS, s.CapacityBPS = BPS(float64(s.PathBW)), bps32(s.OrigPathBW), BPS(float64(s.Capacity))
	return json.Marshal(plain(s))
}
