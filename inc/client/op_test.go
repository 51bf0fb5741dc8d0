package client

import (
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/inc/packet"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		err  bool
	}{
		{"4096", 4096, false}, {"1KB", 1024, false}, {"1kib", 1024, false}, {"64MB", 64 << 20, false}, {"1.5K", 1536, false},
		{" 2M ", 2 << 20, false}, {"1G", 1 << 30, false}, {"100B", 100, false},
		{"", 0, true}, {"-1", 0, true}, {"3GB", 0, true}, {"lots", 0, true},
	} {
		got, err := ParseSize(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// An Op's empty fields take fareinc's defaults; a malformed one says which
// field is wrong.
func TestOpParse(t *testing.T) {
	p, err := Op{Size: "64KB"}.parse()
	if err != nil || p.size != 64<<10 || p.dt != packet.FP32 || p.op != packet.Sum || p.pattern != Ints || p.timeout != 60*time.Second || p.mode != "inc" {
		t.Fatalf("defaults: %+v %v", p, err)
	}
	for _, c := range []struct {
		op   Op
		want string
	}{
		{Op{Size: "1x"}, "size"},
		{Op{Size: "1K", DType: "int8"}, "int8"},
		{Op{Size: "1K", Op: "avg"}, "avg"},
		{Op{Size: "1K", Pattern: "rand"}, "pattern"},
		{Op{Size: "6", DType: "fp32"}, "whole number of fp32"},
		{Op{Size: "1K", Timeout: "soon"}, "soon"},
	} {
		if _, err := c.op.parse(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.op, err, c.want)
		}
	}
}
