package scenarios

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/interop"
)

// BFD authentication (RFC 5880 §6.7) against BIRD 2.0.12's BFD: f1 and b1
// are OSPF neighbours with BFD (BIRD's OSPF asks its protocol bfd for the
// session, `bfd yes`), both sides with the same key chain.
const birdBFDTopo = `name: bbfd
protocol: ospf
nodes:
  f1: {kind: fared, bfd: {interval: 200ms, multiplier: 5, auth: [{id: 1, algorithm: meticulous-keyed-sha1, secret: fared-and-bird}]}}
  b1: {kind: bird, bfd: {interval: 200ms, multiplier: 5, auth: [{id: 1, algorithm: meticulous-keyed-sha1, secret: fared-and-bird}]}}
links:
  - {a: f1, b: b1}
`

// birdBFDState is b1's session with f1 as BIRD shows it.
func birdBFDState(ctx context.Context, l *interop.Lab, bird, peer string) (string, error) {
	out, err := l.Birdc(ctx, bird, "show bfd sessions")
	if err != nil {
		return "", err
	}
	for _, s := range interop.ParseBIRDBFDSessions(out) {
		if s.Address == peer {
			return s.State, nil
		}
	}
	return "", fmt.Errorf("%s: no BFD session with %s:\n%s", bird, peer, out)
}

// setBFDKeys gives f1 and b1 these keys (a reload of fared, birdc
// configure): key rollovers and type changes apply live.
func setBFDKeys(t *testing.T, ctx context.Context, l *interop.Lab, fared, bird []interop.AuthKey) {
	t.Helper()
	l.Node("f1").BFD.Auth = fared
	l.Node("b1").BFD.Auth = bird
	if _, err := l.ReloadFared(ctx, "f1"); err != nil {
		t.Fatal(err)
	}
	if err := l.ReconfigureBIRD(ctx, "b1"); err != nil {
		t.Fatal(err)
	}
}

func TestBIRDBFDAuth(t *testing.T) {
	l := startLab(t, birdBFDTopo)
	ctx := ctxT(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("b1 bird.log (tail):\n%s", tailFile(filepath.Join(l.Node("b1").Dir, "bird.log"), 6000))
		}
	})
	f1, b1 := ifaceAddr(t, l, "f1", "b1-1").String(), ifaceAddr(t, l, "b1", "f1-1").String()

	// Up with each type BIRD has, switched live on both sides.
	for _, alg := range []string{"meticulous-keyed-sha1", "keyed-sha1", "meticulous-keyed-md5", "keyed-md5", "simple"} {
		keys := []interop.AuthKey{{ID: 7, Algorithm: alg, Secret: "fared-and-bird"}}
		if alg != "meticulous-keyed-sha1" { // the topology's to begin with
			setBFDKeys(t, ctx, l, keys, keys)
		}
		var s wire.BFDSession
		poll(t, ctx, 60*time.Second, "BFD Up with "+alg+" on both sides", func() error {
			var err error
			s, _, err = bfdSessionOn(ctx, l, "f1", "b1-1", b1)
			if err != nil {
				return err
			}
			want := alg
			if s.State != "Up" || s.Auth != want || s.AuthKeyID == nil || (alg != "meticulous-keyed-sha1" && *s.AuthKeyID != 7) {
				return fmt.Errorf("f1: session %+v", s)
			}
			st, err := birdBFDState(ctx, l, "b1", f1)
			if err != nil || st != "Up" {
				return fmt.Errorf("b1: %q %v", st, err)
			}
			return nil
		})
		// Both sides switched within the detection time, so the session
		// may have stayed Up through it: hold it for four detection
		// times and check that BIRD's packets keep arriving, accepted,
		// and that both ends stay Up.
		_, c1, _ := bfdSessionOn(ctx, l, "f1", "b1-1", b1)
		time.Sleep(4 * s.DetectTime)
		s2, c2, err := bfdSessionOn(ctx, l, "f1", "b1-1", b1)
		if err != nil {
			t.Fatal(err)
		}
		if s2.State != "Up" || s2.Downs != s.Downs || s2.Received < s.Received+10 || s2.Auth != alg {
			t.Fatalf("%s: f1's session did not hold: %+v, then %+v", alg, s, s2)
		}
		for k, n := range c2 {
			if strings.HasPrefix(k, "rx_rejected_") && n != c1[k] {
				t.Fatalf("%s: %s moved from %d to %d with both sides on %s", alg, k, c1[k], n, alg)
			}
		}
		if st, err := birdBFDState(ctx, l, "b1", f1); err != nil || st != "Up" {
			t.Fatalf("%s: b1's session %q %v", alg, st, err)
		}
		t.Logf("%s: Up both ways (f1 received %d packets from BIRD in %v, none rejected)", alg, s2.Received-s.Received, 4*s.DetectTime)
	}

	// A wrong key on fared's side: BIRD's packets fail fared's check
	// (counted) and fared's fail BIRD's: no session comes Up.
	right := []interop.AuthKey{{ID: 1, Algorithm: "meticulous-keyed-sha1", Secret: "fared-and-bird"}}
	setBFDKeys(t, ctx, l, right, right)
	poll(t, ctx, 60*time.Second, "Up again with key 1", func() error {
		s, _, err := bfdSessionOn(ctx, l, "f1", "b1-1", b1)
		if err == nil && s.State != "Up" {
			err = fmt.Errorf("%+v", s)
		}
		return err
	})
	_, c0, _ := bfdSessionOn(ctx, l, "f1", "b1-1", b1)
	setBFDKeys(t, ctx, l, []interop.AuthKey{{ID: 1, Algorithm: "meticulous-keyed-sha1", Secret: "not-birds-key"}}, right)
	poll(t, ctx, 60*time.Second, "wrong key: both sides down, f1 counts BIRD's packets", func() error {
		var v wire.BFDSessions
		if err := l.FarectlJSON(ctx, "f1", &v, "bfd", "sessions"); err != nil {
			return err
		}
		for _, s := range v.Sessions {
			if s.State == "Up" {
				return fmt.Errorf("f1: session %+v", s)
			}
		}
		if v.Counters["rx_rejected_auth_digest"] < c0["rx_rejected_auth_digest"]+10 {
			return fmt.Errorf("f1 counters %v", v.Counters)
		}
		if st, _ := birdBFDState(ctx, l, "b1", f1); st == "Up" {
			return fmt.Errorf("b1 still Up")
		}
		return nil
	})
	// And it stays so: what is asserted is that nothing comes Up.
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		var v wire.BFDSessions
		if err := l.FarectlJSON(ctx, "f1", &v, "bfd", "sessions"); err != nil {
			t.Fatal(err)
		}
		for _, s := range v.Sessions {
			if s.State == "Up" || s.State == "Init" {
				t.Fatalf("f1: a session with the wrong key reached %s: %+v", s.State, s)
			}
		}
		if st, _ := birdBFDState(ctx, l, "b1", f1); st == "Up" || st == "Init" {
			t.Fatalf("b1 reached %s with the wrong key", st)
		}
	}
	// The right key again (a live reload): Up.
	setBFDKeys(t, ctx, l, right, right)
	poll(t, ctx, 60*time.Second, "Up with the right key again", func() error {
		s, _, err := bfdSessionOn(ctx, l, "f1", "b1-1", b1)
		if err == nil && s.State != "Up" {
			err = fmt.Errorf("%+v", s)
		}
		if st, e := birdBFDState(ctx, l, "b1", f1); err == nil && (e != nil || st != "Up") {
			err = fmt.Errorf("b1: %q %v", st, e)
		}
		return err
	})
}
