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
	// Clients are the modules that asked for the session (isis, ospf,
	// inof): one session per (interface, peer), shared.
	Clients []string `json:"clients"`
	// Rejected counts packets that reached the session and were dropped
	// (another remote discriminator, authentication); the counters say
	// why.
	Rejected uint64 `json:"rejected"`
	// Auth is the RFC 5880 authentication type the session sends with
	// ("keyed-sha1" ...), absent without authentication; AuthKeyID its
	// key; AuthExpiredKey: every send key's lifetime has ended and the
	// last one is used.
	Auth           string `json:"auth,omitempty"`
	AuthKeyID      *int   `json:"auth_key_id,omitempty"`
	AuthExpiredKey bool   `json:"auth_expired_key,omitempty"`
}

// BFDSessions is GET /v1/bfd/sessions: the sessions and the manager's
// counters (drops by reason, send errors).
type BFDSessions struct {
	Sessions []BFDSession      `json:"sessions"`
	Counters map[string]uint64 `json:"counters"`
}
