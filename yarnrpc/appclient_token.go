package yarnrpc

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// RM delegation tokens: what submit puts into the AM's credentials so that the application (and the
// RM's own DelegationTokenRenewer) can reach the RM without a Kerberos login.

// RMDelegationTokenKind is the kind of the ResourceManager's delegation tokens.
const RMDelegationTokenKind = "RM_DELEGATION_TOKEN"

// TokenService is the service Hadoop gives a token of the server at addr (host:port): "ip:port" of its
// resolved address (hadoop.security.token.service.use_ip, true by default). A host that does not
// resolve stays as it is.
func TokenService(ctx context.Context, addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if net.ParseIP(host) == nil {
		ips, err := net.DefaultResolver.LookupHost(ctx, host)
		if err != nil || len(ips) == 0 {
			return addr
		}
		host = ips[0]
		for _, ip := range ips { // Hadoop resolves to an IPv4 address where there is one
			if net.ParseIP(ip).To4() != nil {
				host = ip
				break
			}
		}
	}
	return net.JoinHostPort(host, port)
}

// RMTokenService is the service of an RM delegation token: the RM client addresses of conf as
// ip:port, comma-separated for RM HA (as Hadoop's client names it, so the token matches whichever RM
// is active).
func RMTokenService(ctx context.Context, conf *Config) (string, error) {
	addrs, err := conf.RMAddresses(RMClient)
	if err != nil {
		return "", err
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = TokenService(ctx, a)
	}
	return strings.Join(out, ","), nil
}

// RenewerShortName is the renewer YARN expects in the delegation tokens of an application: the short
// name of the RM's principal (yarn.resourcemanager.principal with _HOST as the first RM's host),
// mapped by the cluster's auth_to_local rules (rm/host@REALM often becomes "yarn"). The RM's
// DelegationTokenRenewer renews the application's tokens as that user.
func RenewerShortName(ctx context.Context, conf *Config) (string, error) {
	p, err := conf.ServerPrincipal(ApplicationClientProtocol)
	if err != nil {
		return "", err
	}
	addrs, err := conf.RMAddresses(RMClient)
	if err != nil {
		return "", err
	}
	return conf.ShortNameOf(ResolvePrincipal(p, canonicalHost(ctx, addrs[0])))
}

// GetDelegationToken asks the RM for a delegation token that renewer may renew. The token's service
// is set to service (RMTokenService), which the RM leaves empty.
func (a *ApplicationClient) GetDelegationToken(ctx context.Context, renewer, service string) (Token, error) {
	if renewer == "" {
		return Token{}, fmt.Errorf("yarnrpc: getDelegationToken needs a renewer (the RM principal's short name, e.g. yarn)")
	}
	resp := &hadooppb.GetDelegationTokenResponseProto{}
	if err := a.rpc.Call(ctx, "getDelegationToken", &hadooppb.GetDelegationTokenRequestProto{Renewer: proto.String(renewer)}, resp); err != nil {
		return Token{}, fmt.Errorf("getting an RM delegation token (renewer %s): %w", renewer, err)
	}
	if resp.GetToken() == nil {
		return Token{}, fmt.Errorf("getting an RM delegation token: the RM returned none (is the cluster Kerberized? the RM issues delegation tokens only to Kerberos callers)")
	}
	t := TokenFromProto(resp.GetToken())
	t.Service = service
	return t, nil
}

// RenewDelegationToken renews an RM delegation token (the caller must be its renewer) and returns the
// new expiry time in milliseconds since the epoch.
func (a *ApplicationClient) RenewDelegationToken(ctx context.Context, tok Token) (int64, error) {
	resp := &hadooppb.RenewDelegationTokenResponseProto{}
	if err := a.rpc.Call(ctx, "renewDelegationToken", &hadooppb.RenewDelegationTokenRequestProto{Token: tok.Proto()}, resp); err != nil {
		return 0, fmt.Errorf("renewing %s: %w", tok, err)
	}
	return int64(resp.GetNewExpiryTime()), nil
}

// Proto converts the token to its wire form.
func (t Token) Proto() *hadooppb.TokenProto {
	return &hadooppb.TokenProto{Identifier: t.Identifier, Password: t.Password, Kind: proto.String(t.Kind), Service: proto.String(t.Service)}
}

// Aliases returns the aliases of the credentials' tokens, sorted.
func (c *Credentials) Aliases() []string { return slices.Sorted(maps.Keys(c.Tokens)) }
