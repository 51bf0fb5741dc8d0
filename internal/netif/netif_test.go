package netif

import "testing"

func TestLookupLoopback(t *testing.T) {
	info, err := Lookup("lo")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Running || info.Iface.Index == 0 {
		t.Fatalf("lo: %+v", info)
	}
	if _, err := Lookup("no-such-if0"); err == nil {
		t.Fatal("no error for a missing interface")
	}
}
