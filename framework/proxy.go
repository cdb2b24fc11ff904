package framework

import (
	"crypto/tls"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// Authority issues certificates from the application's own TLS authority (contract/amtls) for a
// framework's processes to present to each other: the AM holds the authority's key, the framework
// gets certificates. It issues no server or client certificate for an API that must answer the AM
// alone: every TaskExecutor may hold a peer certificate of this authority (a client's too), so such
// an API trusts an authority of its own, which the framework makes itself.
type Authority interface {
	// CACert is the authority's certificate (PEM), what a server or client of the application trusts.
	CACert() []byte
	// PeerCertificate is a certificate named name for both server and client authentication, which
	// the framework's processes present to each other under mutual TLS.
	PeerCertificate(name string) (tls.Certificate, error)
}

// Proxy is a framework's own web UI and API that the AM serves to users under its tracking URL
// (docs/security.md#framework-uis-through-the-am): requests to <tracking URL>/<Path>/... go to Target
// through Transport. It is the framework's policy, which the AM enforces and never widens: who may
// reach a path is the framework's Access (an anonymous reader of the AM's page may GET and HEAD only
// the paths it declares Public, what its dashboard needs to draw; every other path and method, the
// ones that act included, needs the application secret over HTTPS, as every write to the AM; a path
// it declares Withheld is never forwarded), and what its pages may run beyond their own files is
// InlineHandlers and InlineStyles. The AM never forwards the secret itself, nor a request to any
// other host.
type Proxy struct {
	// Path is the first path segment it is served under ("ui": /ui/).
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
	// Access says who may reach a path below Path; nil: the owner alone, for every path.
	Access func(path string) Access
	// InlineHandlers are the inline event handlers its pages need, each the text of the attribute
	// (onload="this.media='all'": "this.media='all'"): the AM's Content-Security-Policy for the pages
	// allows each by its hash, and no other inline script. None: scripts from the server's own files
	// only.
	InlineHandlers []string
	// InlineStyles lets its pages set inline styles (a single-page UI that writes style attributes);
	// false: styles from the server's own files only.
	InlineStyles bool
}

// Access is who may reach one path of a framework's server through the AM's proxy.
type Access struct {
	// Level is who may reach it.
	Level AccessLevel
	// Why says, for Withheld, what the path serves that never leaves the node (the AM's refusal
	// quotes it).
	Why string
}

// AccessLevel is who may reach a path through the AM's proxy.
type AccessLevel int

// Access levels, from the most closed. The zero value is OwnerOnly: a path a framework does not name
// is closed to anonymous readers, so a framework's new release cannot open one.
const (
	// OwnerOnly: the application secret over HTTPS, any method.
	OwnerOnly AccessLevel = iota
	// Public: GET and HEAD by whoever may read the AM's page (the plain port, the RM's web proxy,
	// HTTPS without the secret); other methods are the owner's.
	Public
	// OwnerLog: the owner's, and the answer is a log the AM redacts of the secrets it knows (the
	// application secret, the delegation tokens' passwords) before it forwards it.
	OwnerLog
	// Withheld: never forwarded, secret or not (a file beside the framework's logs that is not one
	// of them: the container's launch script, its environment).
	Withheld
)

// CleanPath is p as an Access rule sees it and the AM forwards it: rooted, without empty, "." or
// ".." segments, without a trailing slash ("/" for the root). The AM matches and forwards the same
// string, so a spelling (a double slash, a dot segment, a trailing slash, an encoded slash decoded
// into the path) cannot reach a path its rule did not see.
func CleanPath(p string) string { return path.Clean("/" + p) }

// Paths is a list of path patterns (Paths.Match). A pattern is a clean path (CleanPath) whose segments
// are literal, a variable, a glob of one segment ("*.js", path.Match's syntax), or, as the last
// segment only, "{name...}": one or more segments. A variable is "{name}", one segment of letters,
// digits and ._:- that is neither "." nor ".." (the name says what fills it), or "{name:class}", one
// of a class: hex32 (32 lower-case hex digits: an id such as a job's) or int (1 to 10
// digits). A variable does not match what a literal of the framework's router takes at its place
// only when its class rules it out: /jobs/{jobid:hex32} is not /jobs/config.
type Paths []string

// Match reports whether the clean path p (CleanPath) matches one of ps; matching is case-sensitive,
// as the servers' routers are.
func (ps Paths) Match(p string) bool {
	for _, pat := range ps {
		if matchPath(pat, p) {
			return true
		}
	}
	return false
}

func matchPath(pat, p string) bool {
	if pat == "/" || p == "/" {
		return pat == p
	}
	want := strings.Split(strings.TrimPrefix(pat, "/"), "/")
	got := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, w := range want {
		if strings.HasPrefix(w, "{") && strings.HasSuffix(w, "...}") && i == len(want)-1 {
			if len(got) <= i {
				return false
			}
			for _, g := range got[i:] {
				if !safeSegment(g) {
					return false
				}
			}
			return true
		}
		if i >= len(got) {
			return false
		}
		g := got[i]
		switch {
		case strings.HasPrefix(w, "{") && strings.HasSuffix(w, "}"):
			if !safeSegment(g) || !inClass(w, g) {
				return false
			}
		case strings.ContainsAny(w, "*?["):
			if ok, err := path.Match(w, g); err != nil || !ok || !safeSegment(g) {
				return false
			}
		default:
			if w != g {
				return false
			}
		}
	}
	return len(want) == len(got)
}

// inClass says segment g is of variable v's class ({name:class}); a variable without one takes any
// safe segment, one of an unknown class none.
func inClass(v, g string) bool {
	_, class, ok := strings.Cut(strings.Trim(v, "{}"), ":")
	if !ok {
		return true
	}
	digits := func(hex bool) bool {
		for _, c := range g {
			if !(c >= '0' && c <= '9' || hex && c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	switch class {
	case "hex32":
		return len(g) == 32 && digits(true)
	case "int":
		return len(g) <= 10 && digits(false)
	}
	return false
}

// safeSegment is a path segment a pattern's variable may take: an id or a file name, nothing that
// climbs, nothing that needs escaping.
func safeSegment(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}
