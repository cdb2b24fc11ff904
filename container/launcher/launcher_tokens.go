package launcher

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/internal/atomicfile"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// Token file refresh in TaskExecutor containers: when the AM replaces the application's delegation
// tokens (it has a keytab), it names its token endpoint in YARN_AM_TOKENS_URL; the launcher polls it
// with the application secret over HTTPS (trusting only the application's TLS authority) and writes what it gets over the container's token file
// (HADOOP_TOKEN_FILE_LOCATION) atomically — a temporary file in the same directory, then rename — so
// a worker reading the file sees either the old or the new credentials, never half of them.

const (

	// DefaultTokenRefresh is how often the launcher asks the AM for new tokens.
	DefaultTokenRefresh = 30 * time.Second
)

// TokenFileRefresher keeps a container's token file in step with the AM's current credentials.
type TokenFileRefresher struct {
	URL      string // the AM's token endpoint
	Secret   string // the application secret
	Path     string // the token file to replace
	Interval time.Duration
	Client   *http.Client // trusting only the AM's TLS authority (TokenFileRefresherFromEnv builds it); nil refuses to send
	Log      logrus.FieldLogger
	// Locator moves URL's host:port to a restarted AM's (amlocate.go); nil keeps URL.
	Locator *AMLocator
}

// TokenFileRefresherFromEnv returns the refresher the container's environment asks for, or nil when
// YARN_AM_TOKENS_URL is unset (the AM does not refresh tokens).
func TokenFileRefresherFromEnv(log logrus.FieldLogger) (*TokenFileRefresher, error) {
	url := os.Getenv(contract.EnvTokensURL)
	if url == "" {
		return nil, nil
	}
	// Checked first, before any file is read: the value is the job's (taskexecutor.env), echoed
	// bounded and with its control characters escaped (TestTokensRefreshValueIsEchoedBounded).
	every := DefaultTokenRefresh
	if v := os.Getenv(contract.EnvTokensRefresh); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s=%s: want a positive duration such as 30s", contract.EnvTokensRefresh, text.Quote(v))
		}
		every = d
	}
	path := os.Getenv("HADOOP_TOKEN_FILE_LOCATION")
	if path == "" {
		return nil, fmt.Errorf("%s is set but HADOOP_TOKEN_FILE_LOCATION is not: there is no token file to refresh", contract.EnvTokensURL)
	}
	creds, err := yarnrpc.ReadCredentialsFile(path)
	if err != nil {
		return nil, err
	}
	secret := creds.Secrets[contract.SecretAlias]
	if len(secret) == 0 {
		return nil, fmt.Errorf("the token file %s has no secret %q; the AM puts it into every TaskExecutor's credentials", path, contract.SecretAlias)
	}
	client, err := pinnedClient(creds, path, url, contract.EnvTokensURL, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &TokenFileRefresher{URL: url, Secret: string(secret), Path: path, Interval: every, Client: client, Log: log}, nil
}

// Run polls until ctx ends. Failures are logged (never fatal: the worker keeps its current tokens).
func (r *TokenFileRefresher) Run(ctx context.Context) {
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		changed, err := r.Once(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.Log.WithError(err).Warn("yarn-am launch: refreshing the token file failed; keeping the current one")
		case changed:
			r.Log.WithField("file", r.Path).Info("yarn-am launch: token file refreshed with the AM's new delegation tokens")
		}
	}
}

// Once fetches the AM's credentials and replaces the token file if they differ; it reports whether
// the file changed.
func (r *TokenFileRefresher) Once(ctx context.Context) (bool, error) {
	url := r.Locator.URL(r.URL)
	if err := amtls.RequireHTTPS(url, contract.EnvTokensURL); err != nil {
		return false, err
	}
	hc := r.Client
	if hc == nil {
		return false, fmt.Errorf("no HTTP client pinned to the AM's TLS authority; refusing to send the application secret to %s", url)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, fmt.Errorf("%s=%q: %w", contract.EnvTokensURL, url, err)
	}
	resp, data, moved, err := r.Locator.Send(hc, req, r.Secret, 16<<20)
	if moved {
		return r.Once(ctx) // the AM moved: ask the new attempt now
	}
	if resp == nil {
		return false, err
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if err != nil {
		return false, err
	}
	creds, err := yarnrpc.ParseCredentials(data)
	if err != nil {
		return false, fmt.Errorf("GET %s: not a token file: %w", url, err)
	}
	if len(creds.Secrets[contract.SecretAlias]) == 0 {
		return false, fmt.Errorf("GET %s: the credentials lack the application secret; not replacing the token file", url)
	}
	if old, err := os.ReadFile(r.Path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	mode := os.FileMode(0o600) // keep the token file's permission bits when it exists
	if fi, err := os.Stat(r.Path); err == nil {
		mode = fi.Mode().Perm()
	}
	// A temporary file in the same directory, synced, then renamed over the token file.
	return true, atomicfile.Write(r.Path, data, mode, atomicfile.Sync())
}
