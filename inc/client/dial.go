package client

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/fared/fared/inc/auth"
)

// Credentials are how a client authenticates to the manager (docs/inc.md,
// "Control-plane trust"): over TLS verified against the fabric's CA, with
// a join token for its group.
type Credentials struct {
	// Roots verify the manager's certificate (fareinc --ca, FAREINC_CA).
	Roots *x509.CertPool
	// Token is the join token (fareinc --token/--token-file,
	// FAREINC_TOKEN/FAREINC_TOKEN_FILE).
	Token string
	// Plaintext talks to a manager without tls, which only listens on its
	// own node's loopback: allowed only towards a loopback address.
	Plaintext bool
}

// Errors of missing credentials, before anything is sent.
var (
	ErrNoCA    = errors.New("no CA to verify the INC manager with: give --ca FILE or FAREINC_CA (the fabric's INC CA certificate; in a farelab lab it is set for you), or --plaintext for a manager on this node's loopback")
	ErrNoToken = errors.New("no join token: give --token, --token-file, FAREINC_TOKEN or FAREINC_TOKEN_FILE (from the job's scheduler, or minted with fareinc token --key-file; in a farelab lab it is set for you)")
)

// dialOptions are the gRPC options for cfg's manager: TLS and the token,
// or plaintext towards loopback only.
func dialOptions(cfg Config) ([]grpc.DialOption, error) {
	ka := grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: time.Second, Timeout: 2 * time.Second, PermitWithoutStream: true})
	cr := cfg.Creds
	if cr.Plaintext {
		ap, err := netip.ParseAddrPort(cfg.Manager)
		if err != nil || !ap.Addr().IsLoopback() {
			return nil, fmt.Errorf("manager %s: plaintext only towards a manager on loopback (a manager without tls listens nowhere else); use --ca and a token", cfg.Manager)
		}
		opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), ka}
		if cr.Token != "" {
			opts = append(opts, grpc.WithPerRPCCredentials(auth.TokenCredentials{Token: cr.Token, Plaintext: true}))
		}
		return opts, nil
	}
	if cr.Roots == nil {
		return nil, ErrNoCA
	}
	if cr.Token == "" {
		return nil, ErrNoToken
	}
	return []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(auth.ClientConfig(cr.Roots))),
		grpc.WithPerRPCCredentials(auth.TokenCredentials{Token: cr.Token}), ka}, nil
}

// explain adds what to check to a refused or failed join.
func explain(err error, manager string) error {
	switch status.Code(err) {
	case codes.Unavailable:
		host := manager
		if ap, perr := netip.ParseAddrPort(manager); perr == nil {
			host = ap.Addr().String()
		}
		return fmt.Errorf("%w (is the manager at %s reachable and running, with tls, its certificate naming %s and signed by your CA?)", err, manager, host)
	case codes.Unauthenticated:
		return fmt.Errorf("%w (the manager did not accept the join token)", err)
	case codes.PermissionDenied:
		return fmt.Errorf("%w (the join token is not for this group)", err)
	}
	return err
}
