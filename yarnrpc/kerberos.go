package yarnrpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/internal/hadoop"
)

// Kerberos login for SASL GSSAPI: a gokrb5 client logged in from a ticket cache (after kinit) or a
// keytab, the service tickets it gets for the RM and NameNode, and Hadoop's server principal rules.

// Configuration keys holding the Kerberos principal of each server protocol; "_HOST" in their values
// stands for the server's host name.
const (
	KeyRMPrincipal       = "yarn.resourcemanager.principal"
	KeyNMPrincipal       = "yarn.nodemanager.principal"
	KeyNameNodePrincipal = "dfs.namenode.kerberos.principal"
)

// protocolPrincipalKeys maps the protocols we speak to the key of their server's principal (Hadoop
// names the key in each protocol's KerberosInfo).
var protocolPrincipalKeys = map[string]string{
	"org.apache.hadoop.yarn.api.ApplicationClientProtocolPB":                    KeyRMPrincipal,
	"org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB":                    KeyRMPrincipal,
	"org.apache.hadoop.yarn.api.ContainerManagementProtocolPB":                  KeyNMPrincipal,
	"org.apache.hadoop.hdfs.protocol.ClientProtocol":                            KeyNameNodePrincipal,
	"org.apache.hadoop.hdfs.protocolPB.ClientNamenodeProtocolPB":                KeyNameNodePrincipal,
	"org.apache.hadoop.security.token.TokenRenewerProtocolPB":                   KeyRMPrincipal,
	"org.apache.hadoop.yarn.server.api.ResourceManagerAdministrationProtocolPB": KeyRMPrincipal,
}

// PrincipalKeyFor returns the configuration key of the server principal of protocol (e.g.
// yarn.resourcemanager.principal for ApplicationClientProtocolPB), or "" for protocols yarn-am does
// not know.
func PrincipalKeyFor(protocol string) string { return protocolPrincipalKeys[protocol] }

// ServerPrincipal returns the configured Kerberos principal of protocol's server, "_HOST" left in
// (Conn replaces it with the host it dials). The error names the missing key.
func (c *Config) ServerPrincipal(protocol string) (string, error) {
	key := PrincipalKeyFor(protocol)
	if key == "" {
		return "", fmt.Errorf("yarnrpc: no server principal key is known for protocol %s", protocol)
	}
	v := strings.TrimSpace(c.GetString(key, ""))
	if v == "" {
		return "", fmt.Errorf("yarnrpc: %s is not set; a Kerberized cluster names its server principal there (e.g. rm/_HOST@EXAMPLE.COM)", key)
	}
	return v, nil
}

// KerberosAuth returns KERBEROS authentication of login for connections of protocol, with the
// server principal configured for it (ServerPrincipal) and, when "<key>.pattern" is set, the glob
// that server principals must match instead (as in Hadoop, e.g. rm/*@EXAMPLE.COM).
func (c *Config) KerberosAuth(login *Kerberos, protocol string) (Auth, error) {
	key := PrincipalKeyFor(protocol)
	pattern := strings.TrimSpace(c.GetString(key+".pattern", ""))
	p, err := c.ServerPrincipal(protocol)
	if err != nil && pattern == "" {
		return Auth{}, err
	}
	a := KerberosAuth(login, p)
	a.ServerPrincipalPattern = pattern
	if p == "" {
		a.ServerPrincipal = pattern
	}
	return a, nil
}

// canonicalHost is the name Hadoop substitutes for _HOST: the canonical name of the dialed host
// (Java's getCanonicalHostName: the reverse lookup of its address, so 127.0.0.1 is usually
// "localhost"), lower-cased; the host itself when lookups fail.
func canonicalHost(ctx context.Context, addr string) string {
	host := hadoop.NodeHost(addr)
	ip := host
	if net.ParseIP(host) == nil {
		ips, err := net.DefaultResolver.LookupHost(ctx, host)
		if err != nil || len(ips) == 0 {
			return strings.ToLower(host)
		}
		ip = ips[0]
	}
	names, err := net.DefaultResolver.LookupAddr(ctx, ip)
	if err != nil || len(names) == 0 {
		return strings.ToLower(host)
	}
	return strings.ToLower(strings.TrimSuffix(names[0], "."))
}

// globMatch reports whether s matches Hadoop's glob pattern (* and ? match any characters, slashes
// included; [...] classes; {a,b} alternatives).
func globMatch(pattern, s string) bool {
	var b strings.Builder
	b.WriteString("^")
	inClass, inAlt := false, false
	for _, r := range pattern {
		switch {
		case inClass:
			b.WriteRune(r)
			inClass = r != ']'
		case r == '*':
			b.WriteString(".*")
		case r == '?':
			b.WriteString(".")
		case r == '[':
			b.WriteRune(r)
			inClass = true
		case r == '{':
			b.WriteString("(?:")
			inAlt = true
		case r == '}' && inAlt:
			b.WriteString(")")
			inAlt = false
		case r == ',' && inAlt:
			b.WriteString("|")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(s)
}

// ResolvePrincipal replaces "_HOST" in the host component of principal (service/_HOST@REALM) with
// host (lower-cased; a host:port has its port dropped), as Hadoop's SecurityUtil does with the
// canonical name of the server's address.
func ResolvePrincipal(principal, host string) string {
	host = strings.ToLower(hadoop.NodeHost(host))
	name, realm, _ := strings.Cut(principal, "@")
	parts := strings.Split(name, "/")
	if len(parts) == 2 && parts[1] == "_HOST" {
		parts[1] = host
	}
	out := strings.Join(parts, "/")
	if realm != "" {
		out += "@" + realm
	}
	return out
}

// KerberosOptions say where a Kerberos login comes from.
type KerberosOptions struct {
	// Principal is the user principal (user@REALM or user/host@REALM). Required with Keytab; with a
	// ticket cache it must match the cache's principal when set.
	Principal string
	// Keytab is a keytab file holding Principal's keys; empty means the ticket cache.
	Keytab string
	// CCache is the ticket cache file; empty means KRB5CCNAME (a "FILE:" prefix is accepted), else
	// /tmp/krb5cc_<uid>.
	CCache string
	// Krb5Config is krb5.conf; empty means KRB5_CONFIG, else /etc/krb5.conf.
	Krb5Config string
}

// Kerberos is a logged-in Kerberos identity; it gets and caches service tickets for GSSAPI
// connections. Safe for concurrent use.
type Kerberos struct {
	principal string // user@REALM
	realm     string
	cname     types.PrincipalName
	expires   time.Time // of the TGT; zero when unknown (keytab logins renew themselves)

	mu sync.Mutex
	cl *client.Client
	// tickets, when set, replaces the KDC (tests: rpctest.Kerberos mints tickets).
	tickets func(spn string) (messages.Ticket, types.EncryptionKey, error)
}

// kinitAdvice ends every login error: it says what the user can do, on one line.
func kinitAdvice(principal string) string {
	if principal == "" {
		principal = "<principal>"
	}
	return fmt.Sprintf("run `kinit %s` or pass --principal and --keytab", principal)
}

// LoginKerberos logs in from a keytab (Principal and Keytab set) or from the ticket cache. Errors
// are one line and say to run kinit or pass a keytab; they never contain key material.
func LoginKerberos(o KerberosOptions) (*Kerberos, error) {
	confPath := o.Krb5Config
	if confPath == "" {
		confPath = os.Getenv("KRB5_CONFIG")
	}
	if confPath == "" {
		confPath = "/etc/krb5.conf"
	}
	cfg, err := readKrb5Config(confPath)
	if err != nil {
		var perr config.UnsupportedDirective
		if !errors.As(err, &perr) { // gokrb5 returns a usable config alongside unsupported directives
			return nil, fmt.Errorf("yarnrpc: Kerberos configuration %s (KRB5_CONFIG): %w", confPath, oneLine(err))
		}
	}
	if o.Keytab != "" {
		if o.Principal == "" {
			return nil, errors.New("yarnrpc: --keytab needs --principal (the principal whose keys the keytab holds, e.g. alice@EXAMPLE.COM)")
		}
		user, realm := splitPrincipal(o.Principal, cfg.LibDefaults.DefaultRealm)
		kt, err := readKeytab(o.Keytab)
		if err != nil {
			return nil, fmt.Errorf("yarnrpc: keytab %s: %w; %s", o.Keytab, oneLine(err), kinitAdvice(o.Principal))
		}
		cl := client.NewWithKeytab(user, realm, kt, cfg, client.DisablePAFXFAST(true))
		if err := cl.Login(); err != nil {
			return nil, fmt.Errorf("yarnrpc: Kerberos login of %s@%s with keytab %s failed: %w; %s",
				user, realm, o.Keytab, oneLine(err), kinitAdvice(user+"@"+realm))
		}
		return newKerberos(cl, time.Time{}), nil
	}
	path := o.CCache
	if path == "" {
		path = os.Getenv("KRB5CCNAME")
	}
	if path == "" {
		path = fmt.Sprintf("/tmp/krb5cc_%d", os.Getuid())
	}
	if typ, rest, ok := strings.Cut(path, ":"); ok && !strings.Contains(typ, "/") {
		if typ != "FILE" {
			return nil, fmt.Errorf("yarnrpc: ticket cache %s: only FILE caches can be read; set KRB5CCNAME=FILE:/tmp/krb5cc_%d and %s",
				path, os.Getuid(), kinitAdvice(o.Principal))
		}
		path = rest
	}
	cc, err := loadOwnCCache(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("yarnrpc: no Kerberos ticket (ticket cache %s does not exist); %s", path, kinitAdvice(o.Principal))
		}
		return nil, fmt.Errorf("yarnrpc: Kerberos ticket cache %s: %w; %s", path, oneLine(err), kinitAdvice(o.Principal))
	}
	ccPrincipal := strings.Join(cc.DefaultPrincipal.PrincipalName.NameString, "/") + "@" + cc.DefaultPrincipal.Realm
	if o.Principal != "" {
		user, realm := splitPrincipal(o.Principal, cfg.LibDefaults.DefaultRealm)
		if user+"@"+realm != ccPrincipal {
			return nil, fmt.Errorf("yarnrpc: the ticket cache %s holds %s, not %s; %s", path, ccPrincipal, o.Principal, kinitAdvice(o.Principal))
		}
	}
	expires, err := tgtExpiry(cc)
	if err != nil {
		return nil, fmt.Errorf("yarnrpc: ticket cache %s has %w; %s", path, err, kinitAdvice(ccPrincipal))
	}
	if !expires.After(time.Now()) {
		return nil, fmt.Errorf("yarnrpc: the Kerberos ticket of %s in %s expired at %s; %s",
			ccPrincipal, path, expires.UTC().Format(time.RFC3339), kinitAdvice(ccPrincipal))
	}
	cl, err := client.NewFromCCache(cc, cfg, client.DisablePAFXFAST(true))
	if err != nil {
		return nil, fmt.Errorf("yarnrpc: Kerberos ticket cache %s: %w; %s", path, oneLine(err), kinitAdvice(ccPrincipal))
	}
	return newKerberos(cl, expires), nil
}

func newKerberos(cl *client.Client, expires time.Time) *Kerberos {
	c := cl.Credentials
	return &Kerberos{
		principal: strings.Join(c.CName().NameString, "/") + "@" + c.Realm(),
		realm:     c.Realm(),
		cname:     c.CName(),
		expires:   expires,
		cl:        cl,
	}
}

// tgtExpiry returns the end time of the cache's ticket-granting ticket.
func tgtExpiry(cc *credentials.CCache) (time.Time, error) {
	for _, e := range cc.GetEntries() {
		n := e.Server.PrincipalName.NameString
		if len(n) == 2 && n[0] == "krbtgt" && n[1] == cc.DefaultPrincipal.Realm {
			return e.EndTime, nil
		}
	}
	return time.Time{}, fmt.Errorf("no ticket-granting ticket for realm %s", cc.DefaultPrincipal.Realm)
}

// splitPrincipal splits user@REALM; a principal without a realm gets def.
func splitPrincipal(p, def string) (user, realm string) {
	if i := strings.LastIndex(p, "@"); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, def
}

// oneLine keeps gokrb5's multi-part errors on one line.
func oneLine(err error) error { return oneLineError{err} }

// oneLineError prints its cause on one line (gokrb5's errors span several) and keeps it for errors.Is
// and errors.As.
type oneLineError struct{ err error }

func (e oneLineError) Error() string { return strings.Join(strings.Fields(e.err.Error()), " ") }
func (e oneLineError) Unwrap() error { return e.err }

// Principal returns the logged-in principal, user@REALM.
func (k *Kerberos) Principal() string { return k.principal }

// String names the principal; it never shows keys or tickets.
func (k *Kerberos) String() string { return "kerberos(" + k.principal + ")" }

// Expires returns when the ticket-granting ticket of a ticket-cache login ends (zero for keytab
// logins, which log in again by themselves).
func (k *Kerberos) Expires() time.Time { return k.expires }

// ShortName returns the user name Hadoop's default auth_to_local rules give the principal: its first
// component (alice for alice@REALM and alice/host@REALM). Servers derive it themselves; the
// connection context carries the full principal.
func (k *Kerberos) ShortName() string { return shortName(k.principal) }

func shortName(principal string) string {
	name, _, _ := strings.Cut(principal, "@")
	first, _, _ := strings.Cut(name, "/")
	return first
}

// serviceTicket gets (or takes from the cache) a ticket for spn ("service/host"). A ticket-cache
// login whose TGT expired gets the kinit advice.
func (k *Kerberos) serviceTicket(spn string) (messages.Ticket, types.EncryptionKey, error) {
	if !k.expires.IsZero() && !k.expires.After(time.Now()) {
		return messages.Ticket{}, types.EncryptionKey{}, fmt.Errorf("the Kerberos ticket of %s expired at %s; %s",
			k.principal, k.expires.UTC().Format(time.RFC3339), kinitAdvice(k.principal))
	}
	if k.tickets != nil {
		return k.tickets(spn)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	tkt, key, err := k.cl.GetServiceTicket(spn)
	if err != nil {
		return tkt, key, fmt.Errorf("Kerberos service ticket for %s: %w", spn, oneLine(err))
	}
	return tkt, key, nil
}

// client exposes the gokrb5 client to the GSSAPI mechanism.
func (k *Kerberos) client() *client.Client { return k.cl }

// Destroy forgets the login's tickets and keys.
func (k *Kerberos) Destroy() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.cl.Destroy()
}

// MaxCCacheBytes bounds a ticket cache file: a real one holds a few tickets of a few KiB each.
const MaxCCacheBytes = 1 << 20

// loadOwnCCache reads a FILE ticket cache that is this user's own: a regular file (not a symlink)
// owned by the current uid and writable by no one else. A cache another user owns or can write would
// make yarn-am act as whoever put the ticket there (/tmp is shared: a name like /tmp/krb5cc_<uid> can be
// taken first); docs/security.md#logging-in, TestLoginRefusesATicketCacheThatIsNotOurs.
func loadOwnCCache(path string) (*credentials.CCache, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("is a symbolic link; yarn-am reads only a ticket cache file of your own (kinit writes one)")
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("is owned by uid %d, not by you (uid %d); yarn-am uses only your own ticket cache", st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("is writable by others (mode %04o); kinit writes it 0600", fi.Mode().Perm())
	}
	b, err := boundedread.ReadFile("ticket cache", path, "a ticket cache file", MaxCCacheBytes)
	if err != nil {
		return nil, err
	}
	return parseCCache(b)
}
