package yarnrpc

import (
	"fmt"
	"strings"
)

// Token is a Hadoop security token (delegation token, AM-RM token, NM token): the serialized
// identifier, its password, its kind (e.g. YARN_AM_RM_TOKEN) and the service it is for ("host:port").
type Token struct {
	Identifier []byte
	Password   []byte
	Kind       string
	Service    string
}

// String names the token without its secrets, for logs and errors.
func (t Token) String() string {
	return fmt.Sprintf("token(kind=%s, service=%s)", t.Kind, t.Service)
}

// AuthMethod is how a connection authenticates.
type AuthMethod int

const (
	// AuthSimple sends the user name in the connection context, unauthenticated (clusters without
	// Kerberos).
	AuthSimple AuthMethod = iota
	// AuthToken authenticates with a Hadoop token over SASL DIGEST-MD5. Servers that do not need it
	// may switch the connection to SIMPLE, which is then used with Auth.User.
	AuthToken
	// AuthKerberos authenticates a Kerberos login over SASL GSSAPI (clusters with
	// hadoop.security.authentication=kerberos).
	AuthKerberos
)

// String returns Hadoop's spelling: SIMPLE, TOKEN, KERBEROS.
func (m AuthMethod) String() string {
	switch m {
	case AuthSimple:
		return "SIMPLE"
	case AuthToken:
		return "TOKEN"
	case AuthKerberos:
		return "KERBEROS"
	}
	return fmt.Sprintf("AuthMethod(%d)", int(m))
}

// Auth says who a connection speaks for and how it proves it.
type Auth struct {
	// Method selects SIMPLE, TOKEN or KERBEROS.
	Method AuthMethod
	// User is the effective user (SIMPLE, and TOKEN connections the server switches to SIMPLE).
	User string
	// RealUser is set when User is impersonated by a proxy user (SIMPLE only).
	RealUser string
	// Token is required for AuthToken.
	Token *Token
	// Kerberos is the login of AuthKerberos; the connection context names its principal.
	Kerberos *Kerberos
	// ServerPrincipal is the server's configured Kerberos principal for AuthKerberos (e.g. the value
	// of yarn.resourcemanager.principal, "_HOST" allowed: the dialed host replaces it). The server
	// must present exactly this principal.
	ServerPrincipal string
	// ServerPrincipalPattern, when set, replaces the exact check: the server's principal must match
	// this glob (Hadoop's "<principal key>.pattern", e.g. rm/*@EXAMPLE.COM).
	ServerPrincipalPattern string
}

// SimpleAuth returns SIMPLE authentication as user.
func SimpleAuth(user string) Auth { return Auth{Method: AuthSimple, User: user} }

// TokenAuth returns TOKEN authentication with tok; user is used only if the server switches the
// connection to SIMPLE.
func TokenAuth(tok Token, user string) Auth { return Auth{Method: AuthToken, Token: &tok, User: user} }

// KerberosAuth returns KERBEROS authentication of login to a server whose principal is
// serverPrincipal (Config.ServerPrincipal gives it for a protocol).
func KerberosAuth(login *Kerberos, serverPrincipal string) Auth {
	a := Auth{Method: AuthKerberos, Kerberos: login, ServerPrincipal: serverPrincipal}
	if login != nil {
		a.User = login.ShortName()
	}
	return a
}

func (a Auth) validate() error {
	switch a.Method {
	case AuthSimple:
		if a.User == "" {
			return fmt.Errorf("yarnrpc: SIMPLE authentication needs a user name (Auth.User is empty)")
		}
	case AuthToken:
		if a.Token == nil || len(a.Token.Identifier) == 0 {
			return fmt.Errorf("yarnrpc: TOKEN authentication needs a token with an identifier (Auth.Token is empty)")
		}
	case AuthKerberos:
		if a.Kerberos == nil {
			return fmt.Errorf("yarnrpc: KERBEROS authentication needs a Kerberos login (Auth.Kerberos is nil; see LoginKerberos)")
		}
		if a.ServerPrincipal == "" {
			return fmt.Errorf("yarnrpc: KERBEROS authentication needs the server's principal (Auth.ServerPrincipal is empty; set %s or %s)",
				KeyRMPrincipal, KeyNameNodePrincipal)
		}
	default:
		return fmt.Errorf("yarnrpc: authentication method %v is not supported; valid: SIMPLE, TOKEN, KERBEROS", a.Method)
	}
	return nil
}

// userKey identifies the principal of a connection for connection sharing.
func (a Auth) userKey() string {
	k := a.Method.String() + ":" + a.User + ":" + a.RealUser
	if a.Token != nil {
		k += ":" + a.Token.Kind + ":" + a.Token.Service + ":" + string(a.Token.Identifier)
	}
	if a.Kerberos != nil {
		k += ":" + a.Kerberos.Principal() + ":" + a.ServerPrincipal + ":" + a.ServerPrincipalPattern
	}
	return k
}

// protectionQOPs turns a hadoop.rpc.protection value ("authentication", "integrity", "privacy", or a
// comma list of them, most preferred first) into SASL QOP names. Empty means authentication.
func protectionQOPs(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return []string{qopAuth}, nil
	}
	var out []string
	for _, p := range splitList(v) {
		switch strings.ToLower(p) {
		case "authentication":
			out = append(out, qopAuth)
		case "integrity":
			out = append(out, qopAuthInt)
		case "privacy":
			out = append(out, qopAuthConf)
		default:
			return nil, fmt.Errorf("yarnrpc: hadoop.rpc.protection=%q: %q is not one of authentication, integrity, privacy", v, p)
		}
	}
	return out, nil
}
