package manager

import (
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/lsdb"
)

// FuzzJoin: whatever a client sends in a Join (as protobuf bytes off the
// wire) is accepted or refused with a gRPC status, never a panic, and an
// accepted join is consistent with what ValidateJoin allows.
func FuzzJoin(f *testing.F) {
	seed, _ := proto.Marshal(&protos.JoinRequest{Group: "g", Rank: 1, Size: 2, Address: "10.1.1.1", Qpn: 5, Host: "h"})
	f.Add(seed)
	f.Add([]byte{0x0a, 0x01, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r protos.JoinRequest
		if proto.Unmarshal(b, &r) != nil {
			return
		}
		now := time.Unix(0, 0)
		st := NewState(Config{}, func() time.Time { return now }, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil)
		resp, err := st.Join(&r, anyone)
		if err != nil {
			if _, ok := status.FromError(err); !ok || status.Code(err) == codes.Unknown {
				t.Fatalf("not a gRPC status: %v", err)
			}
			return
		}
		if _, verr := ValidateJoin(&r); verr != nil || resp.ClientId == "" {
			t.Fatalf("accepted %v despite %v", &r, verr)
		}
		if _, err := st.Assignment(resp.ClientId, anyone); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzSwitchMessages: a switch's registration and reports, as bytes.
func FuzzSwitchMessages(f *testing.F) {
	reg, _ := proto.Marshal(&protos.SwitchMessage{Msg: &protos.SwitchMessage_Register{Register: &protos.SwitchRegister{
		NodeId: "s1", Address: "10.255.0.5", MaxTrees: 1, MaxSlots: 1, MaxRanks: 1, MaxPayload: 64}}})
	stat, _ := proto.Marshal(&protos.SwitchMessage{Msg: &protos.SwitchMessage_Status{Status: &protos.SwitchStatus{AppliedVersion: 9, Error: "x"}}})
	rep, _ := proto.Marshal(&protos.TimeoutReport{ClientId: "c1", TreeId: 1, Timeouts: 3})
	f.Add(reg, stat, rep)
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		now := time.Unix(0, 0)
		st := NewState(Config{}, func() time.Time { return now }, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil)
		var m1, m2 protos.SwitchMessage
		var tr protos.TimeoutReport
		if proto.Unmarshal(a, &m1) != nil || proto.Unmarshal(b, &m2) != nil || proto.Unmarshal(c, &tr) != nil {
			return
		}
		// Admission against the LSDB: refused with a status, never a panic.
		st.SetGraphs([]*lsdb.Graph{clos(nil, nil)})
		aerr := st.Admit(m1.GetRegister(), auth.Identity{IPs: []netip.Addr{lo(1)}, Names: []string{"l1"}}, "fuzz")
		if c := status.Code(aerr); aerr != nil && c != codes.InvalidArgument && c != codes.PermissionDenied {
			t.Fatalf("admission refused with %v", aerr)
		}
		ser, err := st.SwitchUp(m1.GetRegister())
		if err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("registration refused with %v", err)
			}
			return
		}
		for key := range st.switches {
			st.SwitchStatus(key, ser, m2.GetStatus())
			st.SwitchDown(key, ser)
		}
		if _, err := st.ReportTimeouts(&tr, anyone); err != nil && status.Code(err) == codes.Unknown {
			t.Fatalf("report: %v", err)
		}
		st.Switches()
	})
}
