package scratch

import (
	"context"
	"os"
	"testing"

	"github.com/fared/fared/interop"
)

func TestUp(t *testing.T) {
	topo, err := interop.LoadTopology(os.Getenv("TOPO"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := interop.Up(context.Background(), topo, interop.Options{FaredBin: "/work/main/bin/fared", FarectlBin: "/work/main/bin/farectl", Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(l.Name)
}
