package client

import (
	"context"
	"fmt"

	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// TokenRequest says which delegation tokens an application on a Kerberized cluster gets at submit.
type TokenRequest struct {
	Conf  *yarnrpc.Config
	Login *yarnrpc.Kerberos
	// RM is the client submit already has (logged in as Login).
	RM *yarnrpc.ApplicationClient
	// Namenodes are hdfs:// URIs besides fs.defaultFS (the job's hdfs-namenodes).
	Namenodes []string
}

// DelegationTokens gets an RM delegation token and an HDFS delegation token of fs.defaultFS and of
// every extra NameNode, all with the RM principal's short name as renewer (so the RM renews them
// while the application runs) and services as Hadoop sets them (ip:port). The credentials' aliases
// are the services, as Hadoop's clients key them.
func DelegationTokens(ctx context.Context, req TokenRequest) (*yarnrpc.Credentials, error) {
	renewer, err := yarnrpc.RenewerShortName(ctx, req.Conf)
	if err != nil {
		return nil, fmt.Errorf("delegation tokens: naming the renewer: %w", err)
	}
	creds := yarnrpc.NewCredentials()
	svc, err := yarnrpc.RMTokenService(ctx, req.Conf)
	if err != nil {
		return nil, err
	}
	rt, err := req.RM.GetDelegationToken(ctx, renewer, svc)
	if err != nil {
		return nil, err
	}
	creds.Tokens[rt.Service] = rt
	uris := append([]string{defaultFS(req.Conf)}, req.Namenodes...)
	auth, err := req.Conf.KerberosAuth(req.Login, yarnrpc.NameNodeProtocol)
	if err != nil {
		return nil, err
	}
	for _, u := range uris {
		addr, err := hadoop.NameNodeAddr(u)
		if err != nil {
			return nil, fmt.Errorf("delegation tokens: %w", err)
		}
		nn, err := yarnrpc.NewNameNodeClient(req.Conf, addr, auth)
		if err != nil {
			return nil, err
		}
		t, err := nn.GetDelegationToken(ctx, renewer)
		_ = nn.Close()
		if err != nil {
			return nil, err
		}
		creds.Tokens[t.Service] = t
	}
	return creds, nil
}

// defaultFS is fs.defaultFS (or the deprecated fs.default.name).
func defaultFS(conf *yarnrpc.Config) string {
	if v, ok := conf.Get("fs.defaultFS"); ok && v != "" {
		return v
	}
	v, _ := conf.Get("fs.default.name")
	return v
}
