package zones

import (
	"fmt"
	"math/rand"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/fared/fared/inof/record"
)

func TestMembership(t *testing.T) {
	c := New(true)
	mustAdd := func(z string, h ...string) {
		if _, err := c.Add(z, h...); err != nil {
			t.Fatal(err)
		}
	}
	mustAdd("z1", "h1", "h2")
	mustAdd("z2", "h2", "h3")
	mustAdd(Default, "h3")
	ix := c.Index()
	for _, tc := range []struct {
		host string
		want []string
	}{
		{"h1", []string{"z1"}},
		{"h2", []string{"z1", "z2"}},
		{"h3", []string{Default, "z2"}}, // explicit default member stays in default
		{"free", []string{Default}},     // auto-added
	} {
		if got := ix.Of(tc.host); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.host, got, tc.want)
		}
	}
	if got := ix.Share("h1", "h2"); !slices.Equal(got, []string{"z1"}) {
		t.Errorf("share h1 h2: %v", got)
	}
	if got := ix.Share("h1", "h3"); len(got) != 0 {
		t.Errorf("share h1 h3: %v", got)
	}
	if got := ix.Share("free", "other-free"); !slices.Equal(got, []string{Default}) {
		t.Errorf("free hosts share the default zone: %v", got)
	}
	c.AutoAdd = false
	if got := c.Index().Of("free"); len(got) != 0 {
		t.Errorf("without auto-add a free host is in no zone: %v", got)
	}
}

func TestEdits(t *testing.T) {
	c := New(false)
	if changed, err := c.Add("z1", "b", "a", "a"); err != nil || !changed || !slices.Equal(c.Zones["z1"], []string{"a", "b"}) {
		t.Fatalf("%v %v %v", changed, err, c.Zones)
	}
	if changed, _ := c.Add("z1", "a"); changed {
		t.Fatal("adding a member twice changed the zone")
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{c.Remove(Default), "the default zone cannot be deleted"},
		{c.Remove("nope"), `no zone "nope"`},
		{c.Remove("z1", "c"), `zone z1 has no member "c"`},
		{func() error { _, err := c.Add("bad name"); return err }(), `zone name "bad name"`},
		{func() error { _, err := c.Add("z", "x\ny"); return err }(), "control character"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%v, want %q", tc.err, tc.want)
		}
	}
	if err := c.Remove("z1", "a"); err != nil || !slices.Equal(c.Zones["z1"], []string{"b"}) {
		t.Fatal(err, c.Zones)
	}
	if err := c.Remove("z1"); err != nil || c.Zones["z1"] != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Names(), []string{Default}) {
		t.Fatal(c.Names())
	}
}

var r1 = netip.MustParseAddr("10.255.0.1")
var r2 = netip.MustParseAddr("10.255.0.2")

// A configuration cut into records and collected back is the same; a big
// zone spans several chunks, each within record.MaxLen.
func TestRecordsRoundTrip(t *testing.T) {
	c := New(true)
	var big []string
	for i := 0; i < 2000; i++ {
		big = append(big, fmt.Sprintf("host-%04d.example", i))
	}
	c.Add("big", big...)
	c.Add("z1", "h1")
	c.Add("empty")
	recs := c.Records(r1, 42)
	chunks := 0
	for _, r := range recs {
		if n := record.Len(r); n > record.MaxLen {
			t.Fatalf("record of %d bytes", n)
		}
		if z, ok := r.(*record.Zone); ok && z.Name == "big" {
			chunks++
		}
	}
	if chunks < 10 {
		t.Fatalf("2000 members in %d chunks", chunks)
	}
	col := NewCollector()
	// Arrival order does not matter; completeness does.
	rand.New(rand.NewSource(1)).Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	for i, r := range recs {
		if _, _, _, ok := col.Best(); ok {
			t.Fatalf("complete after %d of %d records", i, len(recs))
		}
		col.Put(r)
	}
	got, origin, stamp, ok := col.Best()
	if !ok || origin != r1 || stamp != 42 || !got.Equal(c) {
		t.Fatalf("collected %v %v %v", ok, origin, stamp)
	}
}

// Two reflectors: the newest complete configuration wins; a partial update
// of the newer one is not used until it is whole; when its records go,
// the other's is used.
func TestCollectorChoice(t *testing.T) {
	old := New(false)
	old.Add("z1", "a")
	cur := New(false)
	cur.Add("z1", "a", "b")
	cur.Add("z2", "c")
	col := NewCollector()
	for _, r := range old.Records(r1, 100) {
		col.Put(r)
	}
	newRecs := cur.Records(r2, 200)
	for _, r := range newRecs[:len(newRecs)-1] {
		col.Put(r)
	}
	if got, o, _, _ := col.Best(); o != r1 || !got.Equal(old) {
		t.Fatalf("partial newer configuration used: %v", o)
	}
	col.Put(newRecs[len(newRecs)-1])
	if got, o, _, _ := col.Best(); o != r2 || !got.Equal(cur) {
		t.Fatalf("complete newer configuration not used: %v", o)
	}
	// r2 changes: z2 deleted, stamp 300. Until the old z2 chunk is
	// withdrawn, r2's set is inconsistent and r1's is used.
	next := cur.Clone()
	next.Remove("z2")
	for _, r := range next.Records(r2, 300) {
		col.Put(r)
	}
	if _, o, _, _ := col.Best(); o != r1 {
		t.Fatalf("inconsistent set used (%v)", o)
	}
	col.Remove((&record.Zone{Origin: r2, Name: "z2"}).Key())
	if got, o, s, _ := col.Best(); o != r2 || s != 300 || !got.Equal(next) {
		t.Fatalf("after the withdrawal: %v %v", o, s)
	}
	// r2 dies: its records are withdrawn.
	for _, r := range next.Records(r2, 300) {
		col.Remove(r.Key())
	}
	if got, o, _, _ := col.Best(); o != r1 || !got.Equal(old) {
		t.Fatalf("fallback: %v", o)
	}
}
