package wire

import "time"

// BFDSession is one BFD session (GET /v1/bfd/sessions).
type BFDSession struct {
	Interface   string        `json:"interface"`
	Peer        string        `json:"peer"`
	Local       string        `json:"local"`
	State       string        `json:"state"`
	RemoteState string        `json:"remote_state"`
	Diag        string        `json:"diag"`
	LocalDisc   uint32        `json:"local_discriminator"`
	RemoteDisc  uint32        `json:"remote_discriminator"`
	Interval    time.Duration `json:"interval_ns"` // configured
	Multiplier  int           `json:"multiplier"`
	TxInterval  time.Duration `json:"tx_interval_ns"` // in force, before jitter
	DetectTime  time.Duration `json:"detect_time_ns"` // in force
	RemoteMinRx time.Duration `json:"remote_min_rx_ns"`
	RemoteMinTx time.Duration `json:"remote_min_tx_ns"`
	RemoteMult  int           `json:"remote_multiplier"`
	UpSince     time.Time     `json:"up_since,omitzero"`
	Sent        uint64        `json:"sent"`
	Received    uint64        `json:"received"`
	Ups         uint64        `json:"ups"`
	Downs       uint64        `json:"downs"`
	LastDown    time.Time     `json:"last_down,omitzero"`
	LastDownWhy string        `json:"last_down_diag,omitempty"`
}

// BFDSessions is GET /v1/bfd/sessions: the sessions and the manager's
// counters (drops by reason, send errors).
type BFDSessions struct {
	Sessions []BFDSession      `json:"sessions"`
	Counters map[string]uint64 `json:"counters"`
}
