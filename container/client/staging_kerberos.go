package client

import (
	"context"
	"net"
	"strings"
	"time"

	hdfs "github.com/colinmarc/hdfs/v2"

	"github.com/yarn-am/yarn-am/yarnrpc"
)

// DialHDFSKerberos connects to the NameNode(s) of fs.defaultFS on a Kerberized cluster
// (hadoop.security.authentication=kerberos) as login. The NameNode's principal is
// dfs.namenode.kerberos.principal with _HOST resolved as Hadoop does; dfs.data.transfer.protection,
// when set, protects the block transfers to and from DataNodes (SASL with block access tokens;
// colinmarc/hdfs reads it from the configuration). On a cluster without Kerberos it is DialHDFS as
// the login's short name.
func DialHDFSKerberos(conf *yarnrpc.Config, login *yarnrpc.Kerberos) (*HDFS, error) {
	return dialHDFS(conf, login.ShortName(), login)
}

// kerberosOptions fills the Kerberos fields of colinmarc/hdfs's options. Its _HOST substitution uses
// the literal host of each NameNode address (127.0.0.1), Hadoop's the canonical name (localhost): so
// each address is rewritten to its canonical host, which then also names the principal.
func kerberosOptions(opts *hdfs.ClientOptions, conf *yarnrpc.Config, login *yarnrpc.Kerberos) error {
	p, err := conf.ServerPrincipal(yarnrpc.NameNodeProtocol)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var addrs []string
	for _, a := range opts.Addresses {
		if strings.TrimSpace(a) == "" {
			continue
		}
		if _, port, err := net.SplitHostPort(a); err == nil {
			a = net.JoinHostPort(yarnrpc.CanonicalHost(ctx, a), port)
		}
		addrs = append(addrs, a)
	}
	opts.Addresses = addrs
	opts.KerberosClient = login.GokrbClient()
	opts.KerberosServicePrincipleName, _, _ = strings.Cut(p, "@")
	opts.User = ""
	return nil
}
