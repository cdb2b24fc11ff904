package am

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/atomicfile"
	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// Keeping a job alive past its delegation tokens' maximum lifetime (submit --principal/--keytab):
//
//   - The AM logs in from the shipped keytab and at once gets its own RM and HDFS delegation tokens
//     with itself as renewer (the tokens submit got name the RM as renewer; only the renewer may renew).
//   - It renews each token at 3/4 of the time to its current expiry (RenewDelegationToken at the RM or
//     NameNode), and gets new ones at 3/4 of their maximum lifetime (or when a renewal fails).
//   - It goes on renewing the tokens a replacement superseded until their maximum lifetime: a process
//     still holding them (a launcher between polls, a Flink JVM between reads of the token file) keeps
//     working for that last quarter, not only until their last renewal's expiry (a quarter of the
//     renewal interval, 7.5 s at 30 s).
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
	// retired are the AM's own tokens that replacements superseded, renewed until their maximum
	// lifetime (renewRetired).
	retired []retiredToken
	// renewToken renews one token at its issuer and returns its new expiry (Unix ms); nil is
	// renewAtIssuer (a fake in unit tests).
	renewToken func(ctx context.Context, t yarnrpc.Token) (int64, error)
}

// retiredToken is a superseded token of the AM's own, renewed at renewAt until max.
type retiredToken struct {
	token   yarnrpc.Token
	renewAt time.Time
	max     time.Time
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
		renewAt[alias] = threeQuarters(now, time.UnixMilli(expiry))
		if is, mx, ok := yarnrpc.DelegationTokenDates(t); ok {
			at := threeQuarters(is, mx)
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
	r.retire(now)
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
		if t.Kind != yarnrpc.RMDelegationTokenKind && t.Kind != yarnrpc.HDFSDelegationTokenKind {
			continue
		}
		exp, err := r.renewOne(ctx, t)
		if err != nil {
			r.log.WithError(err).WithField("kind", t.Kind).Warn("am: renewing a delegation token failed; getting new ones")
			return r.replace(ctx)
		}
		now := r.now()
		r.mu.Lock()
		r.renewAt[a] = threeQuarters(now, time.UnixMilli(exp))
		r.mu.Unlock()
		r.log.WithFields(logrus.Fields{"kind": t.Kind, "service": t.Service, "expires": time.UnixMilli(exp).UTC().Format(time.RFC3339)}).Info("am: delegation token renewed")
	}
	return nil
}

// renewOne renews t at its issuer (r.renewToken when set).
func (r *tokenRefresher) renewOne(ctx context.Context, t yarnrpc.Token) (int64, error) {
	if r.renewToken != nil {
		return r.renewToken(ctx, t)
	}
	return r.renewAtIssuer(ctx, t)
}

// renewAtIssuer renews an RM or HDFS delegation token at the RM or its NameNode, logged in from the
// keytab, and returns its new expiry (Unix ms).
func (r *tokenRefresher) renewAtIssuer(ctx context.Context, t yarnrpc.Token) (int64, error) {
	switch t.Kind {
	case yarnrpc.RMDelegationTokenKind:
		auth, err := r.conf.KerberosAuth(r.login, yarnrpc.ApplicationClientProtocol)
		if err != nil {
			return 0, err
		}
		rm, err := yarnrpc.NewApplicationClient(r.conf, auth)
		if err != nil {
			return 0, err
		}
		defer rm.Close()
		return rm.RenewDelegationToken(ctx, t)
	case yarnrpc.HDFSDelegationTokenKind:
		auth, err := r.conf.KerberosAuth(r.login, yarnrpc.NameNodeProtocol)
		if err != nil {
			return 0, err
		}
		nn, err := yarnrpc.NewNameNodeClient(r.conf, t.Service, auth)
		if err != nil {
			return 0, err
		}
		defer nn.Close()
		return nn.RenewDelegationToken(ctx, t)
	}
	return 0, fmt.Errorf("a %s token is not renewed by the AM", t.Kind)
}

// retire adds the current tokens the AM got itself (those with a renewal time) to the retired, to be
// renewed until their maximum lifetime (renewRetired, which also drops those whose lifetime is over).
// The caller holds r.mu and is about to replace r.creds.
func (r *tokenRefresher) retire(now time.Time) {
	for _, a := range slices.Sorted(maps.Keys(r.renewAt)) {
		t, ok := r.creds.Tokens[a]
		if !ok {
			continue
		}
		if _, mx, ok := yarnrpc.DelegationTokenDates(t); ok && now.Before(mx) {
			r.retired = append(r.retired, retiredToken{token: t, renewAt: r.renewAt[a], max: mx})
		}
	}
}

// renewRetired renews the retired tokens due, each until its maximum lifetime; one whose renewal
// fails or reaches that lifetime is renewed no more. It never leads to a replacement: the current
// tokens are what processes should use.
func (r *tokenRefresher) renewRetired(ctx context.Context) {
	r.mu.Lock()
	now := r.now()
	var due []retiredToken
	kept := r.retired[:0]
	for _, rt := range r.retired {
		switch {
		case !now.Before(rt.max):
		case !now.Before(rt.renewAt):
			due = append(due, rt)
		default:
			kept = append(kept, rt)
		}
	}
	r.retired = kept
	r.mu.Unlock()
	for _, rt := range due {
		exp, err := r.renewOne(ctx, rt.token)
		f := logrus.Fields{"kind": rt.token.Kind, "service": rt.token.Service, "max_lifetime": rt.max.UTC().Format(time.RFC3339)}
		if err != nil {
			r.log.WithError(err).WithFields(f).Info("am: a replaced delegation token could not be renewed; processes still holding it have until its expiry to read the new ones")
			continue
		}
		end := time.UnixMilli(exp)
		f["expires"] = end.UTC().Format(time.RFC3339)
		r.log.WithFields(f).Info("am: a replaced delegation token renewed, for processes that still hold it")
		if end.Before(rt.max) {
			rt.renewAt = threeQuarters(r.now(), end)
			r.mu.Lock()
			r.retired = append(r.retired, rt)
			r.mu.Unlock()
		}
	}
}

// threeQuarters is the time 3/4 of the way from from to to: when a token is renewed (from now to its
// expiry) and when tokens are replaced (from their issue to their maximum lifetime).
func threeQuarters(from, to time.Time) time.Time { return from.Add(to.Sub(from) * 3 / 4) }

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
		r.renewRetired(c)
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
// (0600): a new file in path's directory renamed over it (atomicfile), so a reader sees the old file
// or the new one, never half of one.
func writeDelegationTokens(path string, creds *yarnrpc.Credentials) error {
	only := yarnrpc.NewCredentials()
	only.Tokens = delegationOnly(creds)
	return atomicfile.Write(path, only.Marshal(), 0o600, atomicfile.TempPattern(".yarn-am-delegation-tokens-*"))
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
