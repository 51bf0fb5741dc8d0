package fib

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/fared/fared/internal/nlmsg"
	"golang.org/x/sys/unix"
)

// The requests are encoded by internal/nlmsg, which bench/ceiling's bare
// loop uses too: the ceiling measures the same bytes. What is here is
// fib's side of it: its group and resilient types, and decoding.

// ne is the host byte order netlink uses for every integer that is not
// explicitly big-endian (gateways are byte strings, ports are BE).
var ne = binary.NativeEndian

// GroupMember is one entry of a kernel nexthop group.
type GroupMember struct {
	ID     uint32
	Weight uint32 // 1..65536 (1..256 on kernels without weight_high)
}

// Resilient configures resilient (consistent-hash) nexthop groups.
type Resilient struct {
	// Buckets is the size of the hash table; the kernel refuses to change it
	// on an existing group, so a changed value means new groups.
	Buckets uint16 `json:"buckets"`
	// IdleTimer: a bucket idle this long may be migrated to rebalance.
	IdleTimer time.Duration `json:"idle_timer"`
	// UnbalancedTimer: after this long unbalanced, buckets are migrated
	// even if busy. 0 = never force.
	UnbalancedTimer time.Duration `json:"unbalanced_timer"`
}

// appendGroup appends RTM_NEWNEXTHOP for a group (nil res: mpath).
// Replace (NLM_F_REPLACE on an existing id) swaps members/weights
// atomically under every route that references the id. On an error (a
// weight out of range) nothing is appended.
func appendGroup(m *nlmsg.Buf, seq uint32, flags uint16, id uint32, proto uint8, members []GroupMember, res *Resilient) error {
	m.BeginGroup(seq, flags, id, proto)
	for _, x := range members {
		if err := m.Member(x.ID, x.Weight); err != nil {
			m.Abort()
			return err
		}
	}
	if res == nil {
		m.EndGroup(nil)
		return nil
	}
	m.EndGroup(&nlmsg.Resilient{Buckets: res.Buckets, IdleTimer: res.IdleTimer, UnbalancedTimer: res.UnbalancedTimer})
	return nil
}

// decodeGroup decodes an NHA_GROUP payload: an array of struct
// nexthop_grp (nlmsg.GroupEntry).
func decodeGroup(p []byte) ([]GroupMember, error) {
	if len(p)%unix.SizeofNexthopGrp != 0 {
		return nil, fmt.Errorf("NHA_GROUP length %d is not a multiple of %d", len(p), unix.SizeofNexthopGrp)
	}
	out := make([]GroupMember, 0, len(p)/unix.SizeofNexthopGrp)
	for i := 0; i < len(p); i += unix.SizeofNexthopGrp {
		id, w := nlmsg.GroupEntry(p[i:])
		out = append(out, GroupMember{ID: id, Weight: w})
	}
	return out, nil
}
