package daemon_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/bfd"
	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
)

// bfdToy asks the daemon's BFD speaker for one session, as IS-IS, OSPF
// and iNOF do: the speaker is the core's, not a module's.
type bfdToy struct {
	core *daemon.Core
	k    bfd.Key
}

var bfdToySpec = daemon.Spec{
	Name:       "bfdtoy",
	Configured: func(c *config.Config) bool { return toyConf(c) != nil },
	New: func(core *daemon.Core, c *config.Config) (daemon.Module, error) {
		// The daemon runs in the test's process (its FIB and link
		// monitor in a namespace, its sockets not): a session on the
		// loopback stays home.
		ifi, err := net.InterfaceByName("lo")
		if err != nil {
			return nil, err
		}
		return &bfdToy{core: core, k: bfd.Key{IfIndex: ifi.Index, Peer: netip.MustParseAddr("127.0.0.2")}}, nil
	},
}

func (b *bfdToy) Run(ctx context.Context) error {
	c := b.core.BFD.NewClient("bfdtoy", func(bfd.Event) {})
	c.Set(b.k, netip.MustParseAddr("127.0.0.1"), "lo", bfd.Params{Interval: time.Second, Multiplier: 3})
	<-ctx.Done()
	c.Close()
	return nil
}
func (b *bfdToy) Check(*config.Config) error { return nil }
func (b *bfdToy) Reconfigure(context.Context, *config.Config) (daemon.Change, error) {
	return daemon.Change{}, nil
}
func (b *bfdToy) Routes(*api.Router) {}

// TestBFDCoreService: /v1/bfd/sessions is the core's (it answers with no
// BFD configured), and a module's session, asked of the core's speaker,
// is listed with the module as its client; it goes with the module.
// (That the speaker opens UDP 3784 only while it has a session is
// bfd's TestListensOnlyWithSessions: this daemon's sockets are the test
// process's.)
func TestBFDCoreService(t *testing.T) {
	h := start(t, toyBase, bfdToySpec)
	ctx := context.Background()
	var v wire.BFDSessions
	if err := h.c.GetJSON(ctx, "/bfd/sessions", &v); err != nil || len(v.Sessions) != 0 || v.Counters == nil {
		t.Fatalf("no BFD configured: %+v %v", v, err)
	}
	h.write(toyBase + "toy: {limit: 1}\n")
	if _, err := h.c.Post(ctx, "/reload", nil); err != nil {
		t.Fatal(err)
	}
	h.poll("the module's session listed", func() error {
		if err := h.c.GetJSON(ctx, "/bfd/sessions", &v); err != nil {
			return err
		}
		if len(v.Sessions) != 1 || strings.Join(v.Sessions[0].Clients, ",") != "bfdtoy" || v.Sessions[0].Peer != "127.0.0.2" {
			return fmt.Errorf("sessions %+v", v.Sessions)
		}
		return nil
	})
	h.write(toyBase)
	if _, err := h.c.Post(ctx, "/reload", nil); err != nil {
		t.Fatal(err)
	}
	h.poll("the session went with the module", func() error {
		if err := h.c.GetJSON(ctx, "/bfd/sessions", &v); err != nil {
			return err
		}
		if len(v.Sessions) != 0 {
			return fmt.Errorf("sessions %+v", v.Sessions)
		}
		return nil
	})
}
