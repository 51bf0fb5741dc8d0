package auth

import (
	"context"
	"strings"

	"google.golang.org/grpc/metadata"
)

// MetadataKey carries the token: "authorization: Bearer <token>", as
// gRPC's own OAuth credentials send it.
const MetadataKey = "authorization"

// TokenCredentials sends a join token with every call (grpc.WithPerRPCCredentials).
type TokenCredentials struct {
	Token string
	// Plaintext allows sending it without TLS: only towards a manager on
	// loopback (a manager without tls listens nowhere else).
	Plaintext bool
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (t TokenCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	if t.Token == "" {
		return nil, nil
	}
	return map[string]string{MetadataKey: "Bearer " + t.Token}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (t TokenCredentials) RequireTransportSecurity() bool { return !t.Plaintext }

// TokenFrom returns the token of an incoming call's metadata, or "".
func TokenFrom(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get(MetadataKey) {
		if tok, ok := strings.CutPrefix(v, "Bearer "); ok {
			return strings.TrimSpace(tok)
		}
	}
	return ""
}
