package main

import (
	"flag"

	"github.com/yarn-am/yarn-am/container/client"
)

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
