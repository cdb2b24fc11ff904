package main

import (
	"flag"

	"github.com/yarn-am/yarn-am/container/client"
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

// options are the flags as the client package takes them.
func (l *loginFlags) options() client.LoginOptions {
	return client.LoginOptions{Principal: l.principal, Keytab: l.keytab}
}
