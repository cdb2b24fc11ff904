package launcher

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// Following the AM across its restarts (docs/running.md#kept-taskexecutors-find-the-new-attempt). A
// TaskExecutor YARN keeps across application attempts still has the first attempt's URLs in its
// environment; when a post to the AM gets no HTTP answer at all (connection refused, host
// unreachable, a timeout, a certificate the application's authority did not issue), the launcher
// reads the current attempt's address from the staging directory (contract.APIAddressXAttr) and moves
// its report, liveness and token requests there. The new address is taken only after a TLS handshake
// with it verified a certificate of the application's own authority for that host: the same pin as
// before, so nothing but the application's AM ever sees the secret. Look-ups back off (doubling up to
// locateBackoffMax, with jitter) and a failing post never waits for one that is not due.

const (
	locateBackoffMin = 2 * time.Second
	// locateBackoffMax stays below the AM's default liveness timeout (30 s), so a kept launcher speaks
	// to a new attempt before it would ask the NodeManager about it.
	locateBackoffMax = 15 * time.Second
	// locateTimeout bounds one look-up with its TLS check.
	locateTimeout = 10 * time.Second
)

// AMLookup returns the current attempt's API URL (https://host:port/) and the attempt's name.
type AMLookup func(ctx context.Context) (contract.APIAddress, error)

// AMLocator holds the AM's current HTTPS origin for the launcher's clients and moves it when the AM
// restarted. A nil *AMLocator never moves anything.
type AMLocator struct {
	Lookup AMLookup
	// TLS is the pinned client configuration (amtls.ClientConfig of the application's authority): a
	// new address must complete a handshake with it before it is used.
	TLS *tls.Config
	Log logrus.FieldLogger
	// Now is time.Now unless a test sets it.
	Now func() time.Time

	mu      sync.Mutex
	host    string // the current host:port; "" = the one in each URL
	busy    bool
	next    time.Time
	backoff time.Duration
	moves   int
}

// URL returns u with its host:port replaced by the AM's current one.
func (l *AMLocator) URL(u string) string {
	if l == nil {
		return u
	}
	l.mu.Lock()
	host := l.host
	l.mu.Unlock()
	if host == "" {
		return u
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == host {
		return u
	}
	p.Host = host
	return p.String()
}

// Moves says how often the locator moved to a new address.
func (l *AMLocator) Moves() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.moves
}

// Reached says a request to the AM got an HTTP answer: the next failure looks up at once.
func (l *AMLocator) Reached() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.backoff, l.next = 0, time.Time{}
	l.mu.Unlock()
}

// Failed is told of a request to the AM that got no HTTP answer (err). When a look-up is due it reads
// the current address and, if it changed and presents the application's authority, moves there; it
// reports whether the address moved (the caller may retry at once).
func (l *AMLocator) Failed(ctx context.Context, err error) bool {
	if l == nil || l.Lookup == nil || errors.Is(ctx.Err(), context.Canceled) {
		return false
	}
	if ctx.Err() != nil {
		// The request's own deadline passed (a host that does not answer): the look-up gets its own.
		ctx = context.WithoutCancel(ctx)
	}
	now := l.now()
	l.mu.Lock()
	if l.busy || now.Before(l.next) {
		l.mu.Unlock()
		return false
	}
	l.busy = true
	l.backoff = min(max(2*l.backoff, locateBackoffMin), locateBackoffMax)
	// Jitter (up to a quarter) keeps the launchers of a large job from asking the NameNode in step.
	l.next = now.Add(l.backoff + rand.N(l.backoff/4+1))
	cur := l.host
	l.mu.Unlock()
	moved := false
	defer func() {
		l.mu.Lock()
		l.busy = false
		l.mu.Unlock()
	}()
	c, cancel := context.WithTimeout(ctx, locateTimeout)
	defer cancel()
	addr, lerr := l.Lookup(c)
	if lerr != nil {
		l.log().WithError(lerr).WithField("cause", err.Error()).Warn("yarn-am launch: the AM does not answer and its current address could not be read; trying again later")
		return false
	}
	host, herr := apiHost(addr.URL)
	if herr != nil {
		l.log().WithError(herr).Warn("yarn-am launch: the staging directory names no usable AM address")
		return false
	}
	if host == cur {
		return false
	}
	if verr := l.verify(c, host); verr != nil {
		l.log().WithError(verr).WithField("address", host).Warn("yarn-am launch: not moving to the address the staging directory names: it does not present the application's TLS authority")
		return false
	}
	l.mu.Lock()
	if l.host == cur {
		l.host, l.moves, moved = host, l.moves+1, true
		l.backoff, l.next = 0, time.Time{}
	}
	l.mu.Unlock()
	if moved {
		l.log().WithFields(logrus.Fields{"address": host, "attempt": addr.Attempt}).Info("yarn-am launch: the AM moved (a new application attempt); reporting, liveness and token refresh follow it")
	}
	return moved
}

// verify completes a TLS handshake with host under the pinned configuration; no request is sent.
func (l *AMLocator) verify(ctx context.Context, host string) error {
	if l.TLS == nil {
		return errors.New("no TLS configuration pinned to the application's authority")
	}
	cfg := l.TLS.Clone()
	if h, _, err := net.SplitHostPort(host); err == nil {
		cfg.ServerName = h
	}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: locateTimeout}, Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return err
	}
	return conn.Close()
}

// SetHost sets the current host:port (the origin of the environment's URLs at start).
func (l *AMLocator) SetHost(host string) {
	l.mu.Lock()
	l.host = host
	l.mu.Unlock()
}

func (l *AMLocator) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *AMLocator) log() logrus.FieldLogger {
	if l.Log != nil {
		return l.Log
	}
	return logrus.StandardLogger()
}

// apiHost checks an address the staging directory names (https://host:port/, nothing more) and
// returns its host:port.
func apiHost(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", fmt.Errorf("user.%s: %.100q is not an https://host:port/ address", contract.APIAddressXAttr, raw)
	}
	return u.Host, nil
}

// ParseAPIAddress reads the value of contract.APIAddressXAttr (JSON, at most
// contract.MaxAPIAddressBytes).
func ParseAPIAddress(data []byte) (contract.APIAddress, error) {
	var a contract.APIAddress
	if len(data) > contract.MaxAPIAddressBytes {
		return a, fmt.Errorf("user.%s is %d bytes; at most %d are read", contract.APIAddressXAttr, len(data), contract.MaxAPIAddressBytes)
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return a, fmt.Errorf("user.%s: %.100q is not the AM's address document: %w", contract.APIAddressXAttr, data, err)
	}
	if _, err := apiHost(a.URL); err != nil {
		return a, err
	}
	return a, nil
}

// StagingLookup reads the current attempt's address from the staging directory's extended attribute
// through the NameNode: with the HDFS delegation token for that NameNode from the token file (read
// again each time: the launcher keeps it fresh), or SIMPLE as the container's user on a cluster
// without Kerberos. authentication is the cluster's hadoop.security.authentication
// (contract.EnvHadoopAuthentication): on a Kerberized cluster a NameNode that asks the token
// connection to fall back to SIMPLE is refused (TestStagingLookupRefusesASimpleFallback), and so is a
// look-up without a token. "" (an AM of an older release) counts as Kerberized when the token file
// holds an HDFS token: submit gets those only from a Kerberized cluster.
func StagingLookup(stagingURI, protection, authentication, tokenFile string) (AMLookup, error) {
	u, err := url.Parse(stagingURI)
	if err != nil || u.Scheme != "hdfs" || u.Path == "" || u.Path == "/" {
		return nil, fmt.Errorf("%s=%.200q: want the staging directory as hdfs://host:port/path", contract.EnvStagingDir, stagingURI)
	}
	addr, err := hadoop.NameNodeAddr(stagingURI)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", contract.EnvStagingDir, err)
	}
	conf, err := lookupConf(protection, authentication)
	if err != nil {
		return nil, err
	}
	secure, _ := conf.SecurityEnabled()
	// With the mode unknown, a token connection is held to Kerberos' rule (no fallback) all the same.
	tokenConf := conf
	if authentication == "" {
		tokenConf, _ = lookupConf(protection, "kerberos")
	}
	dir := u.Path
	return func(ctx context.Context) (contract.APIAddress, error) {
		auth := yarnrpc.SimpleAuth(containerUser())
		if tokenFile != "" {
			creds, err := yarnrpc.ReadCredentialsFile(tokenFile)
			if err != nil {
				return contract.APIAddress{}, err
			}
			if t, ok := creds.TokenFor(yarnrpc.HDFSDelegationTokenKind, yarnrpc.TokenService(ctx, addr)); ok {
				auth = yarnrpc.TokenAuth(t, containerUser())
			}
		}
		c := conf
		switch {
		case auth.Method == yarnrpc.AuthToken:
			c = tokenConf
		case secure:
			return contract.APIAddress{}, fmt.Errorf("the token file %s holds no HDFS delegation token for %s, and the cluster uses Kerberos (%s=kerberos): the staging directory cannot be read", tokenFile, addr, contract.EnvHadoopAuthentication)
		}
		nn, err := yarnrpc.NewNameNodeClient(c, addr, auth, yarnrpc.FailFast(func(string) {}))
		if err != nil {
			return contract.APIAddress{}, err
		}
		defer nn.Close()
		data, err := nn.GetXAttr(ctx, dir, contract.APIAddressXAttr)
		if err != nil {
			return contract.APIAddress{}, err
		}
		return ParseAPIAddress(data)
	}, nil
}

// keyAuthentication is Hadoop's key for the cluster's authentication mode.
const keyAuthentication = "hadoop.security.authentication"

// lookupConf is the NameNode client's configuration: the launcher has no Hadoop site files, so the
// AM passes on what the connection must follow (contract.EnvRPCProtection,
// contract.EnvHadoopAuthentication); a bad value is an error naming the variable.
func lookupConf(protection, authentication string) (*yarnrpc.Config, error) {
	conf := yarnrpc.NewConfig(nil)
	if protection != "" {
		conf.Set("hadoop.rpc.protection", protection)
		if _, err := conf.Protection(); err != nil {
			return nil, fmt.Errorf("%s: %w", contract.EnvRPCProtection, err)
		}
	}
	if authentication != "" {
		conf.Set(keyAuthentication, authentication)
		if _, err := conf.SecurityEnabled(); err != nil {
			return nil, fmt.Errorf("%s: %w", contract.EnvHadoopAuthentication, err)
		}
	}
	return conf, nil
}

// containerUser is the user HDFS knows the container's application by: HADOOP_USER_NAME if the job
// set it, else USER (YARN sets it to the application's user), else the OS user.
func containerUser() string {
	if u := os.Getenv(hadoop.EnvUserName); u != "" {
		return u
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return yarnrpc.CurrentUser()
}

// LocatorFromEnv builds the locator of a container the AM started: it follows the staging directory
// (YARN_AM_STAGING_DIR) and pins the authority of the token file. nil, nil when the AM named no
// staging directory (an AM of an older release): the launcher then stays with the first address.
func LocatorFromEnv(firstURL string, log logrus.FieldLogger) (*AMLocator, error) {
	staging := os.Getenv(contract.EnvStagingDir)
	if staging == "" || firstURL == "" {
		return nil, nil
	}
	tokenFile := os.Getenv("HADOOP_TOKEN_FILE_LOCATION")
	if tokenFile == "" {
		return nil, errors.New("HADOOP_TOKEN_FILE_LOCATION is not set: the launcher pins the AM's authority from the token file")
	}
	creds, err := yarnrpc.ReadCredentialsFile(tokenFile)
	if err != nil {
		return nil, err
	}
	ca := creds.Secrets[contract.TLSCACertAlias]
	if len(ca) == 0 {
		return nil, fmt.Errorf("the token file %s has no %q: without the application's authority no new AM address can be trusted", tokenFile, contract.TLSCACertAlias)
	}
	cfg, err := amtls.ClientConfig(ca)
	if err != nil {
		return nil, err
	}
	lookup, err := StagingLookup(staging, os.Getenv(contract.EnvRPCProtection), os.Getenv(contract.EnvHadoopAuthentication), tokenFile)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(firstURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s=%.200q: not a URL", contract.EnvReportURL, firstURL)
	}
	l := &AMLocator{Lookup: lookup, TLS: cfg, Log: log}
	l.SetHost(u.Host)
	return l, nil
}

// Send is every launcher request to the AM: it sends req with the application secret as a bearer
// token and reads at most limit bytes of the answer. A request that gets no HTTP answer is told to
// Failed, and moved says whether the AM has a new address to retry at once; an answer is told to
// Reached. resp's body is closed.
func (l *AMLocator) Send(client *http.Client, req *http.Request, secret string, limit int64) (resp *http.Response, body []byte, moved bool, err error) {
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err = client.Do(req)
	if err != nil {
		return nil, nil, l.Failed(req.Context(), err), err
	}
	defer resp.Body.Close()
	l.Reached()
	body, err = io.ReadAll(io.LimitReader(resp.Body, limit))
	return resp, body, false, err
}
