package am

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// Delegation tokens in the AM on a Kerberized cluster: the AM has no Kerberos login of its own (unless
// a keytab was shipped), so it reaches HDFS with the HDFS delegation token submit put into its
// credentials, and it says when the job will die because its tokens reach their maximum lifetime.

// stagingStore is the staging directory as the AM uses it: staged files for launch contexts, deletion
// at the end. *staging (SIMPLE, colinmarc/hdfs) and *tokenStaging (delegation token) are two.
type stagingStore interface {
	stagedFiles
	cleaner
	stateStore
	Close() error
}

// openStagingFor opens the staging directory uri as the cluster requires: with the HDFS delegation
// token of its NameNode from creds on a Kerberized cluster, else as user (SIMPLE).
func openStagingFor(ctx context.Context, uri, user string, conf *yarnrpc.Config, creds *yarnrpc.Credentials) (stagingStore, error) {
	secure, err := conf.SecurityEnabled()
	if err != nil {
		return nil, err
	}
	if !secure {
		s, err := openStaging(ctx, uri, user)
		if err != nil {
			return nil, err
		}
		// The AM's state lives in an extended attribute of the directory (durable.go).
		addr, err := hadoop.NameNodeAddr(uri)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		if s.nn, err = yarnrpc.NewNameNodeClient(conf, addr, yarnrpc.SimpleAuth(user)); err != nil {
			_ = s.Close()
			return nil, err
		}
		return s, nil
	}
	return openTokenStaging(ctx, uri, conf, creds)
}

// tokenStaging is the staging directory reached with an HDFS delegation token (TOKEN/DIGEST-MD5 at the
// cluster's hadoop.rpc.protection).
type tokenStaging struct {
	URI string
	dir *url.URL
	nn  *yarnrpc.NameNodeClient
}

// openTokenStaging connects to the NameNode of uri with the HDFS delegation token whose service is
// that NameNode's ip:port, and checks that the directory exists.
func openTokenStaging(ctx context.Context, uri string, conf *yarnrpc.Config, creds *yarnrpc.Credentials) (*tokenStaging, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "hdfs" || u.Host == "" || u.Path == "" || u.Path == "/" {
		return nil, fmt.Errorf("%s=%q: want the staging directory as hdfs://host:port/user/<user>/.yarn-am/<application id>", contract.EnvStagingDir, uri)
	}
	addr, err := hadoop.NameNodeAddr(uri)
	if err != nil {
		return nil, err
	}
	svc := yarnrpc.TokenService(ctx, addr)
	tok, ok := creds.TokenFor(yarnrpc.HDFSDelegationTokenKind, svc)
	if !ok {
		return nil, fmt.Errorf("the AM's credentials have no %s for the NameNode %s (service %s); 'yarn-am submit' gets one on a Kerberized cluster", yarnrpc.HDFSDelegationTokenKind, addr, svc)
	}
	nn, err := yarnrpc.NewNameNodeClient(conf, addr, yarnrpc.TokenAuth(tok, yarnrpc.CurrentUser()))
	if err != nil {
		return nil, err
	}
	s := &tokenStaging{URI: uri, dir: u, nn: nn}
	if _, err := nn.GetFileInfo(ctx, u.Path); err != nil {
		_ = nn.Close()
		return nil, fmt.Errorf("staging directory %s: %w", uri, err)
	}
	return s, nil
}

// Resource returns the local resource of a staged file under alias, with HDFS's size and time.
func (s *tokenStaging) Resource(name, alias string) (contract.LocalResource, error) {
	p := path.Join(s.dir.Path, name)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := s.nn.GetFileInfo(ctx, p)
	if err != nil {
		return contract.LocalResource{}, fmt.Errorf("staged file %s: %w", p, err)
	}
	u := *s.dir
	u.Path = p
	e := contract.LocalResource{Alias: alias, URL: u.String(), Size: st.Length, Timestamp: st.ModTime.UnixMilli(), Type: contract.TypeFile}
	return e, nil
}

// Delete removes the staging directory; a directory already gone is not an error.
func (s *tokenStaging) Delete(ctx context.Context) error {
	if _, err := s.nn.Delete(ctx, s.dir.Path, true); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("deleting the staging directory %s: %w", s.URI, err)
	}
	return nil
}

// Close closes the NameNode connection.
func (s *tokenStaging) Close() error { return s.nn.Close() }

// tokenDeadline is when the first of the application's delegation tokens reaches its maximum
// lifetime, and which.
type tokenDeadline struct {
	Kind    string
	Service string
	At      time.Time
}

// earliestTokenDeadline returns the earliest maximum date of the delegation tokens in creds of the
// given kind, or of any kind when kind is "" (the AM-RM token, which YARN rolls itself, is not one);
// ok is false when there are none.
func earliestTokenDeadline(creds *yarnrpc.Credentials, kind string) (tokenDeadline, bool) {
	var d tokenDeadline
	if creds == nil {
		return d, false
	}
	for _, a := range creds.Aliases() {
		t := creds.Tokens[a]
		if t.Kind == yarnrpc.AMRMTokenKind || (kind != "" && t.Kind != kind) {
			continue
		}
		if _, mx, ok := yarnrpc.DelegationTokenDates(t); ok && (d.At.IsZero() || mx.Before(d.At)) {
			d = tokenDeadline{Kind: t.Kind, Service: t.Service, At: mx}
		}
	}
	return d, !d.At.IsZero()
}

// tokenKindName is how users know a token kind.
func tokenKindName(kind string) string {
	switch kind {
	case yarnrpc.HDFSDelegationTokenKind:
		return "HDFS delegation token"
	case yarnrpc.RMDelegationTokenKind:
		return "RM delegation token"
	}
	return kind + " token"
}

// DeathMessage says when and why a job without a keytab will die.
func (d tokenDeadline) DeathMessage() string {
	return fmt.Sprintf("%s (%s) expires at %s (max lifetime); pass --principal/--keytab to submit to keep the job alive past it",
		tokenKindName(d.Kind), d.Service, d.At.UTC().Format(time.RFC3339))
}

// announceTokenDeadline logs, at start, when the job will die of its tokens' maximum lifetime
// (nothing when creds hold no delegation tokens), and returns the message ("" if none).
func announceTokenDeadline(log logrus.FieldLogger, creds *yarnrpc.Credentials) string {
	d, ok := earliestTokenDeadline(creds, "")
	if !ok || os.Getenv(contract.EnvPrincipal) != "" { // with a keytab the tokens are replaced in time
		return ""
	}
	msg := d.DeathMessage()
	log.WithFields(logrus.Fields{"kind": d.Kind, "service": d.Service, "expires": d.At.UTC().Format(time.RFC3339)}).Warn("am: " + msg)
	return msg
}

// eventTokenDeadline announces when the job will die of its delegation tokens' maximum lifetime.
const eventTokenDeadline contract.EventType = "token-deadline"

// tokenDeadlineEvent is the warning event of d.
func tokenDeadlineEvent(d tokenDeadline) contract.Event {
	return contract.Event{Type: eventTokenDeadline, Severity: contract.SeverityWarning, Message: d.DeathMessage(), Reason: d.Kind}
}

// addTokenDeadlineEvent puts the death notice (announceTokenDeadline's) into cfg's event log, creating
// the log if cfg has none, so that submit, status and the driver see it too. Nothing happens with a
// shipped keytab or without delegation tokens.
func addTokenDeadlineEvent(cfg *config, creds *yarnrpc.Credentials) {
	d, ok := earliestTokenDeadline(creds, "")
	if !ok || os.Getenv(contract.EnvPrincipal) != "" {
		return
	}
	addStartEvent(cfg, tokenDeadlineEvent(d))
}

// addStartEvent puts ev into cfg's event log before newAM runs, creating the log if cfg has none.
func addStartEvent(cfg *config, ev contract.Event) {
	if cfg.Events == nil {
		cfg.Events = events.NewLog(events.DefaultCapacity)
	}
	cfg.Events.Add(ev)
}

// proxyUserPrivilegesKey is the ResourceManager's setting that lets it get new HDFS delegation
// tokens for an application's user when the ones submit gave it reach their maximum lifetime.
const proxyUserPrivilegesKey = "yarn.resourcemanager.proxy-user-privileges.enabled"

// restartLimit is when a new AM attempt may no longer start (docs/security.md#am-restarts-past-the-maximum-lifetime):
// the NodeManagers localise every attempt's AM container with the HDFS delegation tokens submit got,
// which a shipped keytab does not replace (only the RM holds them). ok is false when that does not
// apply: no keytab (the job itself ends then; announceTokenDeadline says so), no attempt left, no
// HDFS token, or the site files say the RM gets new tokens itself (proxyUserPrivilegesKey).
func restartLimit(conf *yarnrpc.Config, creds *yarnrpc.Credentials, attemptsLeft bool) (tokenDeadline, bool) {
	if !attemptsLeft || os.Getenv(contract.EnvPrincipal) == "" {
		return tokenDeadline{}, false
	}
	if on, err := conf.GetBool(proxyUserPrivilegesKey, false); err == nil && on {
		return tokenDeadline{}, false
	}
	return earliestTokenDeadline(creds, yarnrpc.HDFSDelegationTokenKind)
}

// RestartMessage says until when a keytab job's AM can be restarted on any node.
func (d tokenDeadline) RestartMessage() string {
	return fmt.Sprintf("the %s (%s) YARN starts new AM attempts with expires at %s (max lifetime; the keytab renews the job's own tokens, not this one): an AM restart after it can fail to localise its files (\"token has expired\") unless the ResourceManager has %s",
		tokenKindName(d.Kind), d.Service, d.At.UTC().Format(time.RFC3339), proxyUserPrivilegesKey)
}

// addRestartLimitEvent logs restartLimit's message and puts it into cfg's event log (severity info:
// nothing has failed), creating the log if cfg has none.
func addRestartLimitEvent(cfg *config, conf *yarnrpc.Config, creds *yarnrpc.Credentials, attemptsLeft bool, log logrus.FieldLogger) {
	d, ok := restartLimit(conf, creds, attemptsLeft)
	if !ok {
		return
	}
	msg := d.RestartMessage()
	log.WithFields(logrus.Fields{"kind": d.Kind, "service": d.Service, "expires": d.At.UTC().Format(time.RFC3339)}).Info("am: " + msg)
	addStartEvent(cfg, contract.Event{Type: eventTokenDeadline, Severity: contract.SeverityInfo, Message: msg, Reason: "am-restart"})
}
