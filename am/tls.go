package am

import (
	"crypto/tls"
	"fmt"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// amTLS is the AM's server TLS and the authority's certificate its clients trust.
type amTLS struct {
	Config *tls.Config
	CACert []byte // PEM
	caKey  []byte // PEM; only in the AM's memory, for the certificates a framework asks for
}

// amAuthority is the application's authority as a framework sees it (framework.Authority).
type amAuthority struct{ t *amTLS }

func (a amAuthority) CACert() []byte { return a.t.CACert }

func (a amAuthority) PeerCertificate(name string) (tls.Certificate, error) {
	return amtls.PeerCertificate(a.t.CACert, a.t.caKey, name)
}

// tlsFromCredentials issues the AM's HTTPS certificate for host from the application's authority in
// creds (the client put it there at submit) and takes the authority's key out of creds, so nothing
// built from them afterwards — TaskExecutor launch contexts, refreshed tokens — carries it; the
// certificate stays, for TaskExecutors to trust. Without an authority in creds (a submitter that does
// not make one) the AM makes its own: TaskExecutors and the driver still get its certificate from the
// AM, only the submitter cannot reach the HTTPS API (docs/design.md#security).
func tlsFromCredentials(creds *yarnrpc.Credentials, host, app string, log logrus.FieldLogger) (*amTLS, error) {
	caCert, caKey := creds.Secrets[contract.TLSCACertAlias], creds.Secrets[contract.TLSCAKeyAlias]
	delete(creds.Secrets, contract.TLSCAKeyAlias)
	switch {
	case len(caCert) == 0 && len(caKey) == 0:
		var err error
		if caCert, caKey, err = amtls.NewAuthority(app); err != nil {
			return nil, err
		}
		log.Info("am: the credentials hold no TLS authority (" + contract.TLSCACertAlias + "); the AM created one, which only its TaskExecutors and driver trust")
	case len(caCert) == 0 || len(caKey) == 0:
		return nil, fmt.Errorf("the credentials hold only one of %s and %s: the AM needs both to serve HTTPS", contract.TLSCACertAlias, contract.TLSCAKeyAlias)
	}
	cert, err := amtls.ServerCertificate(caCert, caKey, host)
	if err != nil {
		return nil, err
	}
	creds.Secrets[contract.TLSCACertAlias] = caCert
	return &amTLS{Config: amtls.ServerConfig(cert), CACert: caCert, caKey: caKey}, nil
}
