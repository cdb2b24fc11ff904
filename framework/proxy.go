package framework

import (
	"crypto/tls"
	"net/http"
	"net/url"
)

// Authority issues certificates from the application's own TLS authority (contract/amtls) for a
// framework's processes to present to each other: the AM holds the authority's key, the framework
// gets certificates. It issues no server or client certificate for an API that must answer the AM
// alone: every TaskExecutor may hold a peer certificate of this authority (a client's too), so such
// an API trusts an authority of its own (a Flink JobManager's REST API, framework/flink/resttls.go;
// TestRESTRefusesTheTaskExecutorsPeerCertificate).
type Authority interface {
	// CACert is the authority's certificate (PEM), what a server or client of the application trusts.
	CACert() []byte
	// PeerCertificate is a certificate named name for both server and client authentication, which
	// the framework's processes present to each other under mutual TLS (Flink's internal TLS).
	PeerCertificate(name string) (tls.Certificate, error)
}

// Proxy is a framework's own web UI and API that the AM serves to users under its tracking URL
// (docs/security.md#framework-uis-through-the-am): requests to <tracking URL>/<Path>/... go to Target
// through Transport. Reads (GET, HEAD) are open to whoever may read the AM's page; any other method
// changes the work, and the AM forwards it only over HTTPS with the application secret, as every write
// to the AM. The AM never forwards the secret itself, nor a request to any other host.
type Proxy struct {
	// Path is the first path segment it is served under ("flink": /flink/).
	Path string
	// Name and Note are its link in status, the API and the page (contract.Link).
	Name, Note string
	// Target is the framework's server, scheme://host:port; the request's path below Path is
	// appended to it.
	Target *url.URL
	// Transport reaches Target (the client certificate of a server that asks for one); nil: http's
	// default.
	Transport http.RoundTripper
	// MaxBody bounds a forwarded request's body (a jar upload); 0: the AM's default.
	MaxBody int64
	// Changes, when set, says that a read (GET or HEAD) changes the work all the same, so the AM
	// treats it as a write: a framework's API that acts on a GET (Flink's yarn-cancel and yarn-stop,
	// kept for proxies that forward GETs only). r's path is the part below Path, decoded.
	Changes func(r *http.Request) bool
}
