package fib

import (
	"errors"
	"fmt"

	"github.com/fared/fared/internal/nlmsg"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Capabilities is what the kernel's nexthop code supports.
type Capabilities struct {
	NexthopObjects bool // RTM_NEWNEXTHOP (Linux 5.3)
	Weight16       bool // nexthop_grp.weight_high (Linux 6.12)
	Resilient      bool // NEXTHOP_GRP_TYPE_RES (Linux 5.13)
}

// probeIDs are where Probe creates its throw-away objects: the top of the
// id space, far from IDBase and from what iproute2 users pick by hand.
// Objects are created with NLM_F_EXCL, so an id someone else holds is
// skipped, never replaced.
const probeIDs = 0xFFFF_FF00

// Probe reports what the kernel of ns (0 = current namespace) supports by
// trying it: a blackhole nexthop (nexthop objects), a one-member group of
// it with weight 1000 (older kernels reject a non-zero weight_high, then
// reserved, with EINVAL), and a resilient group of it. Everything it
// creates is deleted again.
func Probe(ns netns.NsHandle) (Capabilities, error) {
	c, err := dial(ns)
	if err != nil {
		return Capabilities{}, err
	}
	defer c.close()
	return c.probe()
}

// isNoNexthops: kernels before 5.3 do not know RTM_*NEXTHOP messages.
func isNoNexthops(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EAFNOSUPPORT)
}

func (c *conn) one(build func(m *nlmsg.Buf, seq uint32)) error {
	b := c.newBatch()
	build(&b.Buf, b.Next())
	errs, err := c.run(b, func(int) string { return "probe" }, nil)
	if err != nil {
		return err
	}
	return errs[0]
}

func (c *conn) probe() (Capabilities, error) {
	var caps Capabilities
	// Three free ids: blackhole, then the two test groups.
	var ids []uint32
	for id := uint32(probeIDs); id != 0 && len(ids) < 3; id++ {
		err := c.one(func(m *nlmsg.Buf, seq uint32) {
			// Probe for existence with the blackhole itself: EEXIST = taken.
			m.Blackhole(seq, id, 0)
		})
		switch {
		case err == nil:
			ids = append(ids, id)
			if len(ids) > 1 { // only the first blackhole is kept
				_ = c.one(func(m *nlmsg.Buf, seq uint32) { m.DelNexthop(seq, id) })
			}
		case errors.Is(err, unix.EEXIST):
			continue
		case isNoNexthops(err):
			return caps, nil // no nexthop objects: RTA_MULTIPATH fallback
		default:
			return caps, fmt.Errorf("fib: probe nexthop objects: %w", err)
		}
	}
	if len(ids) < 3 {
		return caps, errors.New("fib: probe: no free nexthop id")
	}
	caps.NexthopObjects = true
	bh, g16, gres := ids[0], ids[1], ids[2]
	defer func() { _ = c.one(func(m *nlmsg.Buf, seq uint32) { m.DelNexthop(seq, bh) }) }()

	err := c.one(func(m *nlmsg.Buf, seq uint32) {
		_ = appendGroup(m, seq, unix.NLM_F_CREATE|unix.NLM_F_EXCL, g16, 0, []GroupMember{{ID: bh, Weight: 1000}}, nil)
	})
	switch {
	case err == nil:
		caps.Weight16 = true
		_ = c.one(func(m *nlmsg.Buf, seq uint32) { m.DelNexthop(seq, g16) })
	case errors.Is(err, unix.EINVAL):
	default:
		return caps, fmt.Errorf("fib: probe 16-bit weights: %w", err)
	}

	err = c.one(func(m *nlmsg.Buf, seq uint32) {
		_ = appendGroup(m, seq, unix.NLM_F_CREATE|unix.NLM_F_EXCL, gres, 0, []GroupMember{{ID: bh, Weight: 1}}, &Resilient{Buckets: 8})
	})
	switch {
	case err == nil:
		caps.Resilient = true
		_ = c.one(func(m *nlmsg.Buf, seq uint32) { m.DelNexthop(seq, gres) })
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.EOPNOTSUPP):
	default:
		return caps, fmt.Errorf("fib: probe resilient groups: %w", err)
	}
	return caps, nil
}
