package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
)

func TestPrintBFDSessions(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	id := 3
	v := wire.BFDSessions{
		Sessions: []wire.BFDSession{
			{Interface: "s1-1", Peer: "10.254.0.9", Local: "10.254.0.8", State: "Up", RemoteState: "Up", Diag: "none",
				Clients: []string{"inof", "isis"}, Auth: "meticulous-keyed-sha1", AuthKeyID: &id, TxInterval: 200 * time.Millisecond,
				DetectTime: time.Second, UpSince: now.Add(-25 * time.Second), Ups: 1, Sent: 137, Received: 129},
			{Interface: "s2-1", Peer: "10.254.0.11", Local: "10.254.0.10", State: "Down", RemoteState: "Down", Diag: "control detection time expired",
				Clients: []string{"isis"}, Downs: 2, Rejected: 4},
		},
		Counters: map[string]uint64{"rx_rejected_my_disc_mismatch": 4, "rx_no_session": 1},
	}
	var b strings.Builder
	if err := printBFDSessions(&b, v, now); err != nil {
		t.Fatal(err)
	}
	want := `Interface  Peer         Local        State  Remote  Diag                            Clients    Auth                     Tx     Detect  Up since  Ups  Downs  Sent  Received  Rejected
s1-1       10.254.0.9   10.254.0.8   Up     Up      none                            inof,isis  meticulous-keyed-sha1/3  200ms  1s      25s ago   1    0      137   129       0
s2-1       10.254.0.11  10.254.0.10  Down   Down    control detection time expired  isis       -                        0s     0s      -         0    2      0     0         4
rx_no_session: 1
rx_rejected_my_disc_mismatch: 4
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
