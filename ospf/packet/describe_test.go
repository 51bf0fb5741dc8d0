package packet

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func describeJSON(t *testing.T, l LSA) string {
	t.Helper()
	b, err := json.Marshal(Describe(&l, DefaultPathBandwidthSubTLV))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDescribe(t *testing.T) {
	lsas := sampleLSAs()
	cases := map[string][]string{
		"router": {`"type_name":"router"`, `"checksum_ok":true`, `"b":true`, `"e":true`, `"v":false`, `"type_name":"p2p"`,
			`"type_name":"virtual"`, `"tos":[{"metric":7,"tos":2}]`, `"seq":"0x80000001"`},
		"network":      {`"mask_len":24`, `"routers":["10.255.0.3","10.255.0.1"]`},
		"asbr_summary": {`"type_name":"asbr_summary"`, `"metric":16777215`, `"mask_len":0`},
		"external":     {`"e_bit":true`, `"tag":4660`, `"forward":"0.0.0.0"`},
		"nssa":         {`"type_name":"nssa"`, `"tos_hex":"800000010000000000000000"`},
		"te_link": {`"opaque_type_name":"traffic_engineering"`, `"name":"link"`, `"name":"max_bw","type":6`,
			`"bytes_per_sec":12500000000`, `"name":"remote_if_addr"`, `"addresses":["10.0.12.2"]`, `"name":"te_metric"`},
		"te_router": {`"name":"router_address"`, `"address":"10.255.0.1"`},
		"ext_prefix": {`"opaque_type_name":"extended_prefix"`, `"prefix":"10.255.0.1/32"`, `"n":true`, `"name":"prefix_sid"`,
			`"index":1`, `"name":"path_bandwidth"`, `"bytes_per_sec":3.4028235e+38`, `"prefix":"10.20.0.0/16"`, `"a":true`},
		"opaque_unknown_tlvs": {`"opaque_type_name":"unknown"`, `"hex":"010203"`, `"type":65535`},
	}
	for name, wants := range cases {
		js := describeJSON(t, lsas[name])
		for _, w := range wants {
			if !strings.Contains(js, w) {
				t.Errorf("%s: no %s in\n%s", name, w, js)
			}
		}
	}
	// Another Path Bandwidth code: the sub-TLV is unknown then.
	js, _ := json.Marshal(Describe(ptr(lsas["ext_prefix"]), 32771))
	if strings.Contains(string(js), "path_bandwidth") || !strings.Contains(string(js), `"type":32770`) {
		t.Errorf("code 32771: %s", js)
	}
	// Floats JSON cannot carry become strings.
	l := NewLSA(opaqueHdr("10.255.0.1"), &OpaqueLSA{OpaqueType: OpaqueTE, TLVs: []TLV{TELinkTLV(TELink{LinkType: 1, MaxBW: float32(math.Inf(1)), HasMaxBW: true})}})
	if js := describeJSON(t, l); !strings.Contains(js, `"bytes_per_sec":"+Inf"`) {
		t.Errorf("inf: %s", js)
	}
	// FRR's SR-Algorithm TLV padding (0xffffff) shows.
	var ri *LSA
	for _, g := range goldenLSAs(t) {
		if o, ok := g.Body.(*OpaqueLSA); ok && o.OpaqueType == OpaqueRouterInfo {
			ri = &g
		}
	}
	if ri == nil {
		t.Fatal("no RI LSA in the goldens")
	}
	if js := describeJSON(t, *ri); !strings.Contains(js, `"pad_hex":"ffffff"`) || !strings.Contains(js, `"algorithms":[0]`) {
		t.Errorf("RI: %s", js)
	}
}

func ptr(l LSA) *LSA { return &l }
