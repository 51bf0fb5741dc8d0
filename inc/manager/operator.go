package manager

import (
	"context"
	"errors"
	"fmt"

	"github.com/fared/fared/api/wire"
)

// What the operator does to the manager's state through the daemon's API
// (the local socket, docs/api.md): the draft's manual dismantle of a
// group. None of it is on the gRPC service: a client can only leave (or
// let die) its own membership, which dismantles its own group.

// ErrNoGroup is the answer for a group the manager does not hold.
var ErrNoGroup = errors.New("no such group")

// ErrGroupName is the answer for a name no group can have.
var ErrGroupName = errors.New("not a group name")

// ReasonOperator starts the reason of a group the operator dismantled:
// its members read it in their assignment (GetTree), their next operation
// fails with it.
const ReasonOperator = "dismantled by the operator"

// Dismantle dismantles group name: its tree leaves its switches (the
// configs pushed to them no longer carry it, so they drop its slots and
// QPs), its members' next call answers the dismantled state with the
// reason, and a new join of the name starts a new group. A group already
// dismantled is answered as it is.
func (s *State) Dismantle(name string) (wire.INCGroup, error) {
	if err := checkName("group", name, MaxGroupName); err != nil {
		return wire.INCGroup{}, fmt.Errorf("%w: %q has %d characters or a space or control character (1..%d printable)",
			ErrGroupName, name, len(name), MaxGroupName)
	}
	g := s.groups[name]
	if g == nil {
		return wire.INCGroup{}, fmt.Errorf("%w: %q (farectl inc groups lists them)", ErrNoGroup, name)
	}
	if g.state != StateDismantled {
		why := ReasonOperator
		if g.tree != nil {
			why += fmt.Sprintf(" (tree %d removed from %d switch(es))", g.tree.id, len(g.tree.plan.Nodes))
		}
		s.dismantle(g, why)
	}
	return s.groupView(g), nil
}

// Dismantle is State.Dismantle on the manager's goroutine.
func (m *Manager) Dismantle(ctx context.Context, name string) (v wire.INCGroup, err error) {
	if qerr := m.do(ctx, func() { v, err = m.st.Dismantle(name) }); qerr != nil {
		return v, qerr
	}
	return v, err
}
