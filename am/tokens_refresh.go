package am

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// Keeping a job alive past its delegation tokens' maximum lifetime (submit --principal/--keytab):
//
//   - The AM logs in from the shipped keytab and at once gets its own RM and HDFS delegation tokens
//     with itself as renewer (the tokens submit got name the RM as renewer; only the renewer may renew).
//   - It renews each token at 3/4 of the time to its current expiry (RenewDelegationToken at the RM or
//     NameNode), and gets new ones at 3/4 of their maximum lifetime (or when a renewal fails).
//   - New TaskExecutors get the current tokens in their launch context (config.LaunchTokens); running
//     ones fetch them from GET /api/v1/tokens (the application secret as bearer, HDTS bytes back) and
//     the launcher writes them over its HADOOP_TOKEN_FILE_LOCATION atomically (write + rename).
//   - The AM's own HDFS connection (staging) switches to the new HDFS token.

// tokenRefresher renews and replaces the application's delegation tokens.
type tokenRefresher struct {
	conf    *yarnrpc.Config
	login   *yarnrpc.Kerberos
	renewer string
	log     logrus.FieldLogger
	staging *tokenStaging // may be nil
	now     func() time.Time

	mu        sync.Mutex
	creds     *yarnrpc.Credentials // what TaskExecutors get (taskExecutorCredentials): never the AM-RM token or the TLS key
	renewAt   map[string]time.Time // by alias
	replaceAt time.Time
	hdts      []byte
	extra     map[string][]byte // the framework's worker secrets (addSecrets), kept in every replacement
	// tokenFile, when set (keepTokenFile), is rewritten with the delegation tokens alone after
	// every replacement: the driver's contract.EnvDelegationTokens.
	tokenFile string
}

// tokenRefresherFromEnv starts token refreshing when the AM has a keytab (YARN_AM_PRINCIPAL and
// ./yarn-am.keytab); it returns nil, nil without one. creds are the AM's credentials; staging, when
// it is a *tokenStaging, is kept on the current HDFS token.
func tokenRefresherFromEnv(ctx context.Context, conf *yarnrpc.Config, creds *yarnrpc.Credentials, log logrus.FieldLogger) (*tokenRefresher, error) {
	principal := os.Getenv(contract.EnvPrincipal)
	// The key of the sealed keytab is the AM's alone: out of creds before anything copies them.
	key := creds.Secrets[contract.KeytabKeyAlias]
	delete(creds.Secrets, contract.KeytabKeyAlias)
	if principal == "" {
		return nil, nil
	}
	keytab, err := openStagedKeytab(contract.StagedKeytab, key)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", contract.EnvPrincipal, principal, err)
	}
	login, err := yarnrpc.LoginKerberos(yarnrpc.KerberosOptions{Principal: principal, Keytab: keytab})
	_ = os.Remove(keytab) // the login holds the keys; the opened keytab stays on disk no longer
	if err != nil {
		return nil, err
	}
	renewer, err := conf.ShortNameOf(login.Principal())
	if err != nil {
		return nil, err
	}
	r := &tokenRefresher{conf: conf, login: login, renewer: renewer, log: log, now: time.Now, renewAt: map[string]time.Time{}}
	r.creds = taskExecutorCredentials(creds)
	if err := r.replace(ctx); err != nil {
		return nil, err
	}
	log.WithField("principal", login.Principal()).Info("am: logged in from the shipped keytab; delegation tokens will be renewed and replaced before their maximum lifetime")
	return r, nil
}

// credentials are the tokens the refresher holds now: after tokenRefresherFromEnv, fresh ones got
// with the keytab.
func (r *tokenRefresher) credentials() *yarnrpc.Credentials {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.creds
}

// useStaging makes later replacements re-authenticate the staging directory's NameNode connection
// with the new HDFS token. Call it before Run.
func (r *tokenRefresher) useStaging(staging stagingStore) {
	if ts, ok := staging.(*tokenStaging); ok {
		r.staging = ts
	}
}

// replace gets new delegation tokens for the RM and every NameNode the credentials name, renews
// each once to learn its expiry, and publishes them.
func (r *tokenRefresher) replace(ctx context.Context) error {
	r.mu.Lock()
	old := r.creds
	r.mu.Unlock()
	fresh := yarnrpc.NewCredentials()
	for a, s := range old.Secrets {
		fresh.Secrets[a] = s
	}
	renewAt := map[string]time.Time{}
	var earliestMax time.Time
	now := r.now()
	note := func(alias string, t yarnrpc.Token, expiry int64) {
		fresh.Tokens[alias] = t
		renewAt[alias] = now.Add(time.UnixMilli(expiry).Sub(now) * 3 / 4)
		if is, mx, ok := yarnrpc.DelegationTokenDates(t); ok {
			at := is.Add(mx.Sub(is) * 3 / 4)
			if earliestMax.IsZero() || at.Before(earliestMax) {
				earliestMax = at
			}
		}
	}

	auth, err := r.conf.KerberosAuth(r.login, yarnrpc.ApplicationClientProtocol)
	if err != nil {
		return err
	}
	rm, err := yarnrpc.NewApplicationClient(r.conf, auth)
	if err != nil {
		return err
	}
	defer rm.Close()
	svc, err := yarnrpc.RMTokenService(ctx, r.conf)
	if err != nil {
		return err
	}
	rt, err := rm.GetDelegationToken(ctx, r.renewer, svc)
	if err != nil {
		return err
	}
	exp, err := rm.RenewDelegationToken(ctx, rt)
	if err != nil {
		return err
	}
	note(rt.Service, rt, exp)

	nnAuth, err := r.conf.KerberosAuth(r.login, yarnrpc.NameNodeProtocol)
	if err != nil {
		return err
	}
	for _, a := range old.Aliases() {
		t := old.Tokens[a]
		if t.Kind != yarnrpc.HDFSDelegationTokenKind {
			continue
		}
		nn, err := yarnrpc.NewNameNodeClient(r.conf, t.Service, nnAuth)
		if err != nil {
			return err
		}
		nt, err := nn.GetDelegationToken(ctx, r.renewer)
		if err == nil {
			nt.Service = t.Service
			exp, err = nn.RenewDelegationToken(ctx, nt)
		}
		_ = nn.Close()
		if err != nil {
			return err
		}
		note(a, nt, exp)
		if r.staging != nil && r.staging.nn.Addr() != "" && yarnrpc.TokenService(ctx, r.staging.nn.Addr()) == nt.Service {
			if err := r.staging.nn.SetAuth(yarnrpc.TokenAuth(nt, yarnrpc.CurrentUser())); err != nil {
				return err
			}
		}
	}
	r.mu.Lock()
	maps.Copy(fresh.Secrets, r.extra) // added while these tokens were got
	hdts := fresh.Marshal()
	r.creds, r.renewAt, r.replaceAt, r.hdts = fresh, renewAt, earliestMax, hdts
	tokenFile := r.tokenFile
	r.mu.Unlock()
	if tokenFile != "" {
		if err := writeDelegationTokens(tokenFile, fresh); err != nil {
			r.log.WithError(err).Warn("am: the driver's copy of the new delegation tokens could not be written; its processes keep the old ones")
		}
	}
	fields := logrus.Fields{"tokens": len(fresh.Tokens)}
	if !earliestMax.IsZero() {
		fields["next_replacement"] = earliestMax.UTC().Format(time.RFC3339)
	}
	r.log.WithFields(fields).Info("am: new delegation tokens obtained; new and running TaskExecutors get them")
	return nil
}

// renew renews the tokens due; a failure leads to replacing them all.
func (r *tokenRefresher) renew(ctx context.Context) error {
	r.mu.Lock()
	creds := r.creds
	r.mu.Unlock()
	_, due := r.due()
	for _, a := range due {
		t := creds.Tokens[a]
		var exp int64
		var err error
		switch t.Kind {
		case yarnrpc.RMDelegationTokenKind:
			var auth yarnrpc.Auth
			if auth, err = r.conf.KerberosAuth(r.login, yarnrpc.ApplicationClientProtocol); err == nil {
				var rm *yarnrpc.ApplicationClient
				if rm, err = yarnrpc.NewApplicationClient(r.conf, auth); err == nil {
					exp, err = rm.RenewDelegationToken(ctx, t)
					_ = rm.Close()
				}
			}
		case yarnrpc.HDFSDelegationTokenKind:
			var auth yarnrpc.Auth
			if auth, err = r.conf.KerberosAuth(r.login, yarnrpc.NameNodeProtocol); err == nil {
				var nn *yarnrpc.NameNodeClient
				if nn, err = yarnrpc.NewNameNodeClient(r.conf, t.Service, auth); err == nil {
					exp, err = nn.RenewDelegationToken(ctx, t)
					_ = nn.Close()
				}
			}
		default:
			continue
		}
		if err != nil {
			r.log.WithError(err).WithField("kind", t.Kind).Warn("am: renewing a delegation token failed; getting new ones")
			return r.replace(ctx)
		}
		now := r.now()
		r.mu.Lock()
		r.renewAt[a] = now.Add(time.UnixMilli(exp).Sub(now) * 3 / 4)
		r.mu.Unlock()
		r.log.WithFields(logrus.Fields{"kind": t.Kind, "service": t.Service, "expires": time.UnixMilli(exp).UTC().Format(time.RFC3339)}).Info("am: delegation token renewed")
	}
	return nil
}

// due says, at r.now(), whether the tokens must be replaced (3/4 of the earliest maximum lifetime has
// passed) and otherwise which aliases are due for renewal (3/4 of the time to their expiry), sorted.
func (r *tokenRefresher) due() (replace bool, renew []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if !r.replaceAt.IsZero() && !now.Before(r.replaceAt) {
		return true, nil
	}
	for a, at := range r.renewAt {
		if !now.Before(at) {
			renew = append(renew, a)
		}
	}
	sort.Strings(renew)
	return false, renew
}

// Run renews and replaces tokens until ctx ends; failures are logged and retried.
func (r *tokenRefresher) Run(ctx context.Context) {
	defer r.login.Destroy()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		replace, _ := r.due()
		c, cancel := context.WithTimeout(ctx, time.Minute)
		var err error
		if replace {
			err = r.replace(c)
		} else {
			err = r.renew(c)
		}
		cancel()
		if err != nil && ctx.Err() == nil {
			r.log.WithError(err).Warn("am: refreshing delegation tokens failed; retrying")
		}
	}
}

// keepTokenFile writes the current delegation tokens to path now, and again after every replacement
// (contract.EnvDelegationTokens).
func (r *tokenRefresher) keepTokenFile(path string) error {
	r.mu.Lock()
	r.tokenFile = path
	creds := r.creds
	r.mu.Unlock()
	return writeDelegationTokens(path, creds)
}

// delegationTokens returns the current delegation tokens by alias (driverConfig.FreshTokens).
func (r *tokenRefresher) delegationTokens() map[string]yarnrpc.Token {
	r.mu.Lock()
	defer r.mu.Unlock()
	return delegationOnly(r.creds)
}

// delegationOnly returns the tokens of creds but an AM-RM token, by alias: no secret.
func delegationOnly(creds *yarnrpc.Credentials) map[string]yarnrpc.Token {
	out := make(map[string]yarnrpc.Token, len(creds.Tokens))
	for alias, t := range creds.Tokens {
		if t.Kind != yarnrpc.AMRMTokenKind {
			out[alias] = t
		}
	}
	return out
}

// writeDelegationTokens writes the delegation tokens of creds, without their secrets, to path
// (0600): a new file in path's directory renamed over it, so a reader sees the old file or the new
// one, never half of one.
func writeDelegationTokens(path string, creds *yarnrpc.Credentials) error {
	only := yarnrpc.NewCredentials()
	only.Tokens = delegationOnly(creds)
	f, err := os.CreateTemp(filepath.Dir(path), ".yarn-am-delegation-tokens-*") // 0600
	if err != nil {
		return err
	}
	_, err = f.Write(only.Marshal())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// LaunchTokens returns the current credentials of TaskExecutors (HDTS), for new launch contexts.
func (r *tokenRefresher) LaunchTokens() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hdts
}

// openStagedKeytab opens the keytab submit sealed (contract.SealKeytab) and staged at staged, with the
// key from the AM's credentials, into a new 0600 file in the container's working directory, and
// returns that file's path for the login, which removes it.
func openStagedKeytab(staged string, key []byte) (string, error) {
	sealed, err := boundedread.ReadFile("the staged keytab", staged, "the keytab submit staged", contract.MaxKeytab+1024)
	if err != nil {
		return "", fmt.Errorf("the keytab %s: %w", staged, err)
	}
	kt, err := contract.OpenKeytab(key, sealed)
	if err != nil {
		return "", fmt.Errorf("the keytab %s: %w", staged, err)
	}
	f, err := os.CreateTemp(filepath.Dir(staged), ".yarn-am-keytab-*") // 0600
	if err != nil {
		return "", err
	}
	_, err = f.Write(kt)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
