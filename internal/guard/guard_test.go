package guard

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRecoverCountsLogsOnceAndKeepsGoing(t *testing.T) {
	var buf bytes.Buffer
	g := New("guardtest", slog.New(slog.NewTextHandler(&buf, nil)))
	var thenRan int
	for i := 0; i < 3; i++ {
		func() {
			defer g.Recover("rx", []byte{0xde, 0xad, 0xbe, 0xef}, func(any) { thenRan++ })
			var m map[string]int
			m["x"] = 1 // nil map write: a panic
		}()
	}
	if Count("guardtest") != 3 || thenRan != 3 {
		t.Fatalf("count %d, then ran %d; want 3 and 3", Count("guardtest"), thenRan)
	}
	if n := strings.Count(buf.String(), "BUG: panic"); n != 1 {
		t.Fatalf("logged %d times, want once per site:\n%s", n, buf.String())
	}
	for _, want := range []string{"module=guardtest", "site=rx", "head=deadbeef", "len=4", "stack="} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf.String())
		}
	}
	// A second site is logged once too; a second guard of the same module
	// shares the count (a module rebuilt by a reload).
	g2 := New("guardtest", slog.New(slog.NewTextHandler(&buf, nil)))
	if ok := g2.Do("grpc Join", nil, func() { panic("boom") }); ok {
		t.Fatal("Do reported ok after a panic")
	}
	if ok := g2.Do("grpc Join", nil, func() {}); !ok {
		t.Fatal("Do reported a panic without one")
	}
	if Count("guardtest") != 4 || strings.Count(buf.String(), "BUG: panic") != 2 {
		t.Fatalf("count %d, logs %d; want 4 and 2", Count("guardtest"), strings.Count(buf.String(), "BUG: panic"))
	}
	if Counts()["guardtest"] != 4 {
		t.Fatalf("Counts = %v", Counts())
	}
}

func TestRecoverWithoutPanicDoesNothing(t *testing.T) {
	g := New("guardquiet", slog.New(slog.DiscardHandler))
	func() {
		defer g.Recover("rx", nil, func(any) { t.Fatal("then ran without a panic") })
	}()
	if Count("guardquiet") != 0 {
		t.Fatal("counted without a panic")
	}
}

func TestCollector(t *testing.T) {
	g := New("guardmetric", slog.New(slog.DiscardHandler))
	g.Do("rx", nil, func() { panic(1) })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Collector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == "fared_panics_total" && m.GetLabel()[0].GetValue() == "guardmetric" {
				if v := m.GetCounter().GetValue(); v != 1 {
					t.Fatalf("fared_panics_total{module=guardmetric} = %v, want 1", v)
				}
				return
			}
		}
	}
	t.Fatal("no fared_panics_total{module=guardmetric}")
}
