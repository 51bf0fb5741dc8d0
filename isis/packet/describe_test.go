package packet

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	lsp := samplePDUs(t)["lsp"].(*LSP)
	d := DescribeTLVs(lsp.TLVs, DefaultPathBandwidthSubTLV)
	if len(d) != len(lsp.TLVs) {
		t.Fatalf("%d entries for %d TLVs", len(d), len(lsp.TLVs))
	}
	j, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	s := string(j)
	for _, want := range []string{
		`"hostname":"leaf1"`,
		`"areas":["49.0001"]`,
		`"name":"max_link_bandwidth","type":9,"value":12500000000`,
		`"name":"ipv4_interface_address","type":6,"value":"10.0.1.1"`,
		`"name":"path_bandwidth","type":200,"value":3.4028235e+38`,
		`"name":"unknown","type":250,"value":"010203"`,
		`"prefix":"10.1.2.0/20"`,
		`"hex":"0aff000100","length":5,"name":"router_capability","type":242`,
		`"length":0,"name":"unknown","type":251`,
		`"metric":16777214`,
		`"external":true`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s in\n%s", want, s)
		}
	}
	// The Path Bandwidth codepoint is configurable.
	if name, v := DescribeSubTLV(TLVExtIPReach, FloatSubTLV(201, 5), 201); name != "path_bandwidth" || v != float32(5) {
		t.Errorf("%s %v", name, v)
	}
	if name, _ := DescribeSubTLV(TLVExtIPReach, FloatSubTLV(200, 5), 201); name != "unknown" {
		t.Errorf("code 200 with 201 configured: %s", name)
	}
	// Wrong length known sub-TLV: name kept, hex value.
	if name, v := DescribeSubTLV(TLVExtISReach, SubTLV{Type: 9, Value: []byte{1}}, 200); name != "max_link_bandwidth" || v != "01" {
		t.Errorf("%s %v", name, v)
	}
	p2p := DescribeTLVs(samplePDUs(t)["p2p_iih"].(*P2PHello).TLVs, 200)
	j, _ = json.Marshal(p2p)
	if !strings.Contains(string(j), `"neighbor_id":"0000.0000.0002","state":"up"`) {
		t.Errorf("3-way: %s", j)
	}
	lan := DescribeTLVs(samplePDUs(t)["lan_iih"].(*LANHello).TLVs, 200)
	j, _ = json.Marshal(lan)
	if !strings.Contains(string(j), `"snpas":["02:00:00:00:00:01","02:00:00:00:00:02"]`) {
		t.Errorf("SNPAs: %s", j)
	}
	// Every RFC 8570 / 5305 sub-TLV describes without panicking at any length.
	for st := 0; st < 256; st++ {
		for _, l := range []int{0, 3, 4, 8, 16, 32} {
			for _, parent := range []uint8{22, 135, 236, 1} {
				DescribeSubTLV(parent, SubTLV{Type: uint8(st), Value: make([]byte, l)}, 200)
			}
		}
	}
}

func TestTLVValueAccessors(t *testing.T) {
	subs := []SubTLV{FloatSubTLV(SubMaxLinkBW, 1e9), {Type: SubTEMetric, Value: []byte{0, 1, 2}}, AddrSubTLV(SubIPv6IfAddr, ip("2001:db8::1"))}
	if v, ok := TEMetric(subs); !ok || v != 258 {
		t.Error("TE metric")
	}
	if a, ok := IPv6IfAddr(subs); !ok || a != ip("2001:db8::1") {
		t.Error("IPv6 if addr")
	}
	if _, ok := IPv4IfAddr(subs); ok {
		t.Error("absent sub-TLV found")
	}
	if _, ok := Float32Of([]byte{1, 2, 3}); ok {
		t.Error("3-byte float")
	}
	if v, ok := PathBandwidth([]SubTLV{pbSub(7)}, DefaultPathBandwidthSubTLV); !ok || v != 7 {
		t.Error("path bandwidth")
	}
	if s := AddrSubTLV(SubIPv4IfAddr, ip("::ffff:10.0.0.1")); len(s.Value) != 4 {
		t.Error("mapped IPv4 is sent as 4 bytes")
	}
}
