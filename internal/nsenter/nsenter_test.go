package nsenter_test

import (
	"errors"
	"os"
	"testing"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/internal/testns"
)

// inode names a namespace: two handles are the same namespace when their
// inodes are.
func inode(t *testing.T, h netns.NsHandle) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(int(h), &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

func threadNS(t *testing.T) uint64 {
	t.Helper()
	h, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	return inode(t, h)
}

// Do runs f in the namespace and leaves the caller where it was; a name
// and a path reach the same namespace; f's error and panic come back.
func TestDo(t *testing.T) {
	n := testns.New(t, "nsen")
	want := inode(t, n.Handle)
	home := threadNS(t)
	check := func(how string, run func(f func() error) error) {
		t.Helper()
		var got uint64
		if err := run(func() error { got = threadNS(t); return nil }); err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if got != want {
			t.Errorf("%s: f ran in namespace %d, want %d", how, got, want)
		}
		if h := threadNS(t); h != home {
			t.Errorf("%s: the caller's thread is in namespace %d afterwards, want %d", how, h, home)
		}
	}
	check("Do", func(f func() error) error { return nsenter.Do(n.Handle, f) })
	check("DoNamed(name)", func(f func() error) error { return nsenter.DoNamed(n.Name, f) })
	check("DoNamed(path)", func(f func() error) error { return nsenter.DoNamed("/run/netns/"+n.Name, f) })
	check("Here", func(f func() error) error { return nsenter.Here(n.Handle, f) })

	boom := errors.New("boom")
	if err := nsenter.Do(n.Handle, func() error { return boom }); err != boom {
		t.Errorf("f's error: %v", err)
	}
	func() {
		defer func() {
			if p := recover(); p != "panic in f" {
				t.Errorf("recovered %v", p)
			}
		}()
		_ = nsenter.Do(n.Handle, func() error { panic("panic in f") })
		t.Error("Do returned after f panicked")
	}()
	if h := threadNS(t); h != home {
		t.Errorf("after the panic the caller's thread is in namespace %d", h)
	}
	if err := nsenter.DoNamed("no-such-ns-"+n.Name, func() error { return nil }); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unknown namespace: %v", err)
	}
}

// The zero handle and a closed one mean the current namespace (a
// config's zero value): f runs right there.
func TestDoCurrent(t *testing.T) {
	for _, h := range []netns.NsHandle{0, netns.None()} {
		ran := false
		if err := nsenter.Do(h, func() error { ran = true; return nil }); err != nil || !ran {
			t.Errorf("handle %d: ran %v, err %v", h, ran, err)
		}
	}
}
