package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fared/fared/interop"
)

func TestExecArgv(t *testing.T) {
	topo, err := interop.ParseTopology([]byte("name: x\nnodes:\n  r1: {kind: frr}\n  f1: {kind: fared}\n  b1: {kind: bird, protocol: ospf}\nlinks:\n  - {a: r1, b: f1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := interop.Plan(topo, interop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.FarectlBin = "/usr/local/bin/farectl"
	for _, tc := range []struct {
		node string
		cmd  []string
		want string
	}{
		{"f1", []string{"farectl", "show", "isis", "neighbors"}, "ip netns exec x-f1 /usr/local/bin/farectl -s /run/farelab/x/f1/fared.sock show isis neighbors"},
		{"r1", []string{"vtysh", "-c", "show isis neighbor"}, "ip netns exec x-r1 vtysh -N x-r1 -c show isis neighbor"},
		{"r1", []string{"ip", "route"}, "ip netns exec x-r1 ip route"},
		{"b1", []string{"birdc", "show", "ospf", "neighbors"}, "ip netns exec x-b1 birdc -s /run/farelab/x/b1/bird.ctl show ospf neighbors"},
	} {
		argv, err := execArgv(l, l.Node(tc.node), tc.cmd)
		if err != nil || strings.Join(argv, " ") != tc.want {
			t.Errorf("execArgv(%s, %v) = %q, %v; want %q", tc.node, tc.cmd, strings.Join(argv, " "), err, tc.want)
		}
	}
	if _, err := execArgv(l, l.Node("r1"), []string{"farectl"}); err == nil {
		t.Error("farectl on an frr node: no error")
	}
	if _, err := execArgv(l, l.Node("r1"), []string{"birdc"}); err == nil {
		t.Error("birdc on an frr node: no error")
	}
}

func TestUpBadTopology(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.yaml")
	if err := os.WriteFile(p, []byte("name: x\nnodes:\n  a: {kind: frr}\nlinks:\n  - {a: a, b: b, bandwidth: 100X}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code, err := run(context.Background(), []string{"up", p}, &out, &errb)
	if code == 0 || err == nil || !strings.Contains(err.Error(), `bad bandwidth "100X"`) || !strings.Contains(err.Error(), `unknown node "b"`) {
		t.Errorf("code %d, err %v", code, err)
	}
	if code, err := run(context.Background(), []string{"exec", "r1"}, &out, &errb); code == 0 || err == nil {
		t.Errorf("exec without command: code %d err %v", code, err)
	}
}

// The live-change commands name the lab first and fail clearly without it.
func TestLinkAndRestartNeedALab(t *testing.T) {
	var out, errb bytes.Buffer
	for _, args := range [][]string{
		{"link", "add", "nolab-x1", "a", "b", "100G"},
		{"link", "del", "nolab-x1", "a", "b"},
		{"restart", "nolab-x1", "a"},
	} {
		code, err := run(context.Background(), args, &out, &errb)
		if code == 0 || err == nil || !strings.Contains(err.Error(), `lab "nolab-x1" not found`) {
			t.Errorf("%v: code %d, err %v", args, code, err)
		}
	}
	if code, err := run(context.Background(), []string{"link", "add", "x", "a"}, &out, &errb); code == 0 || err == nil {
		t.Errorf("link add with one node: code %d, err %v", code, err)
	}
}
