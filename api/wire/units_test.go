package wire

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestBPS(t *testing.T) {
	for _, c := range []struct {
		bytes float64
		want  string
	}{
		{1.25e10, "100000000000"},                   // 100G
		{float64(float32(25e9 / 8)), "25000000000"}, // 25G through float32: 3124999936 bytes/s
		{float64(float32(40e9 / 8)), "40000000000"}, // 40G
		{float64(float32(1e9 / 8)), "1000000000"},   // 1G
		{125, "1000"},             // 1 kbit/s, below 7 digits: exact
		{math.MaxFloat32, "null"}, // "no constraint"
		{math.Inf(1), "null"},     //
		{math.NaN(), "null"},      //
		{-1, "null"},              //
	} {
		got := "null"
		if v := BPS(c.bytes); v != nil {
			b, _ := json.Marshal(*v)
			got = string(b)
		}
		if got != c.want {
			t.Errorf("BPS(%v) = %s, want %s", c.bytes, got, c.want)
		}
	}
}

// The _bps fields are filled when JSON is written, next to the old bytes
// fields; FareView keeps weight_max although Route has its own marshaller.
func TestBPSFieldsInJSON(t *testing.T) {
	pb := 5e9
	v := FareView{Route: Route{PathBW: &pb, NextHops: []NextHop{{LinkBW: 1.25e10, DownCap: math.MaxFloat32, Weight: 5e9}}}, WeightMax: 65535}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"weight_max":65535`, `"path_bandwidth":5000000000`, `"path_bandwidth_bps":40000000000`,
		`"link_bandwidth":12500000000`, `"link_bandwidth_bps":100000000000`, `"downstream_capacity_bps":null`, `"weight_bps":40000000000`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("missing %s in %s", want, b)
		}
	}
	var back FareView
	if err := json.Unmarshal(b, &back); err != nil || back.WeightMax != 65535 || *back.PathBPS != 40e9 || back.NextHops[0].DownCapBPS != nil {
		t.Errorf("round trip %+v %v", back, err)
	}
}
