// Package nsenter runs a function with its thread in another network
// namespace. A socket keeps the namespace it was created in, so creating
// it there is all a process needs to work in several namespaces at once:
// fared's FIB and metrics listener, the RoCEv2 raw sockets, the lab's
// packet sockets and the benchmarks' injectors all open theirs this way.
//
// A namespace belongs to a thread, not to a goroutine, and Go hands
// threads from goroutine to goroutine. The rules, the same for every
// caller (they were six copies that had drifted):
//
//   - the goroutine is locked to its thread from before the switch until
//     the thread is back in its own namespace;
//   - a thread that cannot be switched back stays locked: the runtime then
//     retires it with its goroutine instead of handing a thread in the
//     wrong namespace to the next goroutine;
//   - Do and DoNamed switch on a goroutine of their own that ends right
//     after, so such a thread is retired at once and the caller's own
//     thread never moves (a test's thread left in a lab's namespace would
//     make the test process one of the namespace's pids, which the lab's
//     teardown terminates). Here switches the caller's thread, for a
//     function that must run on the caller's goroutine (one that may call
//     t.Fatal).
package nsenter

import (
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netns"
)

// current reports whether ns names the namespace the caller is in
// already: the zero handle (a config's zero value; fd 0 is never a
// namespace handle we were given) or a closed one.
func current(ns netns.NsHandle) bool { return ns == 0 || !ns.IsOpen() }

// Do runs f with a thread switched into ns, then switches back; f runs on
// a goroutine of its own (a panic in f is raised again in the caller). ns
// 0 or closed means the current namespace: f then runs right here. An
// error of the switch back wins over f's.
func Do(ns netns.NsHandle, f func() error) error {
	if current(ns) {
		return f()
	}
	type result struct {
		err      error
		panicked bool
		p        any
	}
	ch := make(chan result, 1)
	go func() {
		var r result
		defer func() { ch <- r }()
		r.err = Here(ns, func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					r.panicked, r.p = true, p
				}
			}()
			return f()
		})
	}()
	r := <-ch
	if r.panicked {
		panic(r.p)
	}
	return r.err
}

// DoNamed is Do for a namespace named as ip-netns(8) does (a name under
// /run/netns) or by the path of its handle ("/proc/PID/ns/net", a bind
// mount).
func DoNamed(name string, f func() error) error {
	h, err := Open(name)
	if err != nil {
		return err
	}
	defer h.Close()
	return Do(h, f)
}

// Open opens a namespace's handle by name (under /run/netns) or by path
// (a name starting with "/").
func Open(name string) (netns.NsHandle, error) {
	path := name
	if !filepath.IsAbs(name) {
		path = filepath.Join("/run/netns", name)
	}
	h, err := netns.GetFromPath(path)
	if err != nil {
		return netns.None(), fmt.Errorf("netns %s: %w", name, err)
	}
	return h, nil
}

// Here is Do on the calling goroutine's own thread. Use it only where f
// must run on the caller's goroutine (runtime.Goexit, t.Fatal): if the
// thread cannot be switched back, the caller's goroutine stays locked to
// it, in ns, until the goroutine exits.
func Here(ns netns.NsHandle, f func() error) (err error) {
	if current(ns) {
		return f()
	}
	runtime.LockOSThread()
	home, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("current netns: %w", err)
	}
	defer home.Close()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns: %w", err)
	}
	defer func() {
		if rerr := netns.Set(home); rerr != nil {
			// Stay locked: see the package comment.
			err = fmt.Errorf("restore netns: %w", rerr)
			return
		}
		runtime.UnlockOSThread()
	}()
	return f()
}
