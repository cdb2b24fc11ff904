package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/container/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// loginUsage documents the login flags every client command shares; each command's usage includes it.
const loginUsage = `  --principal P          Kerberos principal (alice@EXAMPLE.COM) to log in as on a Kerberized cluster
                         (hadoop.security.authentication=kerberos); with --keytab
  --keytab FILE          keytab holding the keys of --principal; without both, the ticket cache
                         ($KRB5CCNAME, default /tmp/krb5cc_<uid>, after kinit) is used`

// loginFlags are --principal and --keytab.
type loginFlags struct {
	principal, keytab string
}

func (l *loginFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.principal, "principal", "", "Kerberos principal")
	fs.StringVar(&l.keytab, "keytab", "", "Kerberos keytab")
}

// identity is who a client command speaks as.
type identity struct {
	auth yarnrpc.Auth      // for the RM's client port; zero = SIMPLE as CurrentUser
	krb  *yarnrpc.Kerberos // nil without Kerberos
	user string            // the short user name (owner of /user/<user>)
}

// clientKerberos is the process's Kerberos login once a command logged in: the staging helpers
// shared by submit and kill (ensureStagingGone) dial HDFS with it. One command runs per process.
var clientKerberos *yarnrpc.Kerberos

// login logs in as the cluster requires: on a Kerberized cluster from --principal/--keytab or the
// ticket cache (failing at once with the one-line kinit advice), else SIMPLE as CurrentUser (login
// flags are then ignored, with a note on stderr).
func (l *loginFlags) login(conf *yarnrpc.Config, stderr io.Writer) (*identity, error) {
	secure, err := conf.SecurityEnabled()
	if err != nil {
		return nil, err
	}
	if l.keytab != "" && l.principal == "" {
		return nil, fmt.Errorf("--keytab needs --principal (the principal whose keys the keytab holds, e.g. alice@EXAMPLE.COM)")
	}
	if !secure {
		if l.principal != "" || l.keytab != "" {
			fmt.Fprintln(stderr, "yarn-am: note: hadoop.security.authentication is not kerberos; --principal/--keytab are ignored")
		}
		return &identity{user: yarnrpc.CurrentUser()}, nil
	}
	if l.keytab != "" {
		if _, err := os.Stat(l.keytab); err != nil {
			return nil, fmt.Errorf("--keytab %s: %v", l.keytab, err)
		}
	}
	krb, err := yarnrpc.LoginKerberos(yarnrpc.KerberosOptions{Principal: l.principal, Keytab: l.keytab})
	if err != nil {
		return nil, err
	}
	auth, err := conf.KerberosAuth(krb, yarnrpc.ApplicationClientProtocol)
	if err != nil {
		return nil, err
	}
	user, err := conf.ShortNameOf(krb.Principal())
	if err != nil {
		return nil, err
	}
	clientKerberos = krb
	return &identity{auth: auth, krb: krb, user: user}, nil
}

// newRM connects to the RM of conf as id.
func (id *identity) newRM(conf *yarnrpc.Config) (*yarnrpc.ApplicationClient, error) {
	return yarnrpc.NewApplicationClient(conf, id.auth)
}

// dialStagingFS connects to fs.defaultFS as the process's login (Kerberos when logged in, else
// SIMPLE as user).
func dialStagingFS(conf *yarnrpc.Config, user string) (*client.HDFS, error) {
	if clientKerberos != nil {
		return client.DialHDFSKerberos(conf, clientKerberos)
	}
	return client.DialHDFS(conf, user)
}

// delegationTokens gets the application's delegation tokens on a Kerberized cluster (nil otherwise)
// and says which it got (kind and service, never their secrets).
func (id *identity) delegationTokens(ctx context.Context, conf *yarnrpc.Config, rm *yarnrpc.ApplicationClient, job *jobfile.Job, out io.Writer) (*yarnrpc.Credentials, error) {
	if id.krb == nil {
		return nil, nil
	}
	creds, err := client.DelegationTokens(ctx, client.TokenRequest{Conf: conf, Login: id.krb, RM: rm, Namenodes: job.HDFSNamenodes})
	if err != nil {
		return nil, err
	}
	for _, a := range creds.Aliases() {
		fmt.Fprintf(out, "delegation token %s\n", creds.Tokens[a])
	}
	return creds, nil
}

// stageKeytab ships --keytab to the AM when submit logged in with it on a Kerberized cluster, and
// returns the principal the AM logs in as ("" when nothing was shipped).
func stageKeytab(fsys *client.HDFS, st *client.Staged, krb *yarnrpc.Kerberos, keytab string) (string, error) {
	if krb == nil || keytab == "" {
		return "", nil
	}
	if err := client.StageKeytab(fsys, st, fsys.DefaultFS, keytab); err != nil {
		return "", err
	}
	return krb.Principal(), nil
}
