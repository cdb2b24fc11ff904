package yarnrpc

import (
	"context"

	"github.com/jcmturner/gokrb5/v8/client"
)

// GokrbClient returns the login's gokrb5 client, for libraries that take one (colinmarc/hdfs's
// KerberosClient). Callers must not Destroy it; use Kerberos.Destroy.
func (k *Kerberos) GokrbClient() *client.Client { return k.client() }

// CanonicalHost is the name Hadoop puts in place of _HOST for a server at addr (host:port): the
// canonical name of its address, lower-cased (127.0.0.1 is usually "localhost").
func CanonicalHost(ctx context.Context, addr string) string { return canonicalHost(ctx, addr) }
