package client

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// LoginOptions are the client commands' --principal and --keytab.
type LoginOptions struct {
	Principal string
	Keytab    string
}

// Session is who a client command speaks as, and to which cluster: the Hadoop configuration, the
// login (Kerberos on a Kerberized cluster, else SIMPLE as the current user) and the short user name
// that owns /user/<user>. Every call that needs the login takes the Session, so nothing carries it
// between commands behind their backs.
type Session struct {
	Conf     *yarnrpc.Config
	Auth     yarnrpc.Auth      // for the RM's client port; zero = SIMPLE as CurrentUser
	Kerberos *yarnrpc.Kerberos // nil without Kerberos
	User     string
	keytab   string // the keytab logged in from, shipped to the AM by Submit
	// notes receives progress lines while a cluster call waits on a silent server.
	notes io.Writer
	// submittedApp and submittedKey: the application StageAndSubmit submitted and its key, for the
	// follower that reads its AM as its owner (OwnerReader).
	submittedApp string
	submittedKey *AppKey
}

// LoadConfig loads the Hadoop configuration of HADOOP_CONF_DIR (or YARN_CONF_DIR) and insists on a
// yarn-site.xml there: without one every address would silently be the 0.0.0.0 default. Errors name
// the variable that was used (yarnrpc.ConfigDirFromEnv: HADOOP_CONF_DIR, else YARN_CONF_DIR) and its
// value.
func LoadConfig() (*yarnrpc.Config, error) {
	dir := yarnrpc.ConfigDirFromEnv()
	for _, v := range []string{hadoop.EnvConfDir, "YARN_CONF_DIR"} {
		d := os.Getenv(v)
		if d == "" {
			continue
		}
		st, err := os.Stat(d)
		switch {
		case err != nil && os.IsNotExist(err):
			return nil, fmt.Errorf("%s=%s does not exist; set %s to the directory with the cluster's core-site.xml and yarn-site.xml", v, d, v)
		case err != nil:
			return nil, fmt.Errorf("%s=%s cannot be read: %w", v, d, err)
		case !st.IsDir():
			return nil, fmt.Errorf("%s=%s is not a directory; set %s to the directory with the cluster's core-site.xml and yarn-site.xml", v, d, v)
		}
	}
	conf, err := yarnrpc.LoadConfigFromEnv()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, hadoop.YARNSiteFile)); err != nil {
		v := hadoop.EnvConfDir
		if os.Getenv(v) == "" {
			v = "YARN_CONF_DIR"
		}
		return nil, fmt.Errorf("%s=%s has no yarn-site.xml; point %s at the directory with the cluster's core-site.xml and yarn-site.xml", v, dir, v)
	}
	return conf, nil
}

// Login logs in as the cluster requires: on a Kerberized cluster from the principal and keytab or the
// ticket cache (failing at once with the one-line kinit advice), else SIMPLE as the current user (the
// login options are then ignored, with a note on notes).
func Login(conf *yarnrpc.Config, opts LoginOptions, notes io.Writer) (*Session, error) {
	secure, err := conf.SecurityEnabled()
	if err != nil {
		return nil, err
	}
	if opts.Keytab != "" && opts.Principal == "" {
		return nil, fmt.Errorf("--keytab needs --principal (the principal whose keys the keytab holds, e.g. alice@EXAMPLE.COM)")
	}
	if !secure {
		if opts.Principal != "" || opts.Keytab != "" {
			fmt.Fprintln(notes, "yarn-am: note: hadoop.security.authentication is not kerberos; --principal/--keytab are ignored")
		}
		// SIMPLE: HADOOP_USER_NAME is who we are, and a path segment of the staging directory.
		if err := yarnrpc.CheckHadoopUserName(); err != nil {
			return nil, err
		}
		return &Session{Conf: conf, User: yarnrpc.CurrentUser(), notes: notes}, nil
	}
	if opts.Keytab != "" {
		if _, err := os.Stat(opts.Keytab); err != nil {
			return nil, fmt.Errorf("--keytab %s: %w", opts.Keytab, err)
		}
	}
	krb, err := yarnrpc.LoginKerberos(yarnrpc.KerberosOptions{Principal: opts.Principal, Keytab: opts.Keytab})
	if err != nil {
		return nil, err
	}
	auth, err := conf.KerberosAuth(krb, yarnrpc.ApplicationClientProtocol)
	if err != nil {
		return nil, err
	}
	user, err := conf.ShortNameOf(krb.Principal())
	if err != nil {
		return nil, err
	}
	return &Session{Conf: conf, Auth: auth, Kerberos: krb, User: user, keytab: opts.Keytab, notes: notes}, nil
}

// ConnectRM connects to the RM of the session's configuration as its login. A client command gives
// up on a dead cluster in seconds, naming each RM's address, where it came from and what happened to
// it; a silent RM gets one progress line on the session's notes and the caller's context bounds the
// wait (yarnrpc.FailFast; the AM keeps the patient default).
func (s *Session) ConnectRM() (*yarnrpc.ApplicationClient, error) {
	return yarnrpc.NewApplicationClient(s.Conf, s.Auth, yarnrpc.FailFast(s.progress))
}

// progress prints a cluster call's progress line.
func (s *Session) progress(msg string) {
	if s.notes != nil {
		fmt.Fprintln(s.notes, "yarn-am: "+msg)
	}
}

// DialStaging connects to fs.defaultFS as the session's login (Kerberos when logged in, else SIMPLE as
// user).
func (s *Session) DialStaging(user string) (*HDFS, error) {
	if s.Kerberos != nil {
		return DialHDFSKerberos(s.Conf, s.Kerberos)
	}
	return DialHDFS(s.Conf, user)
}

// DelegationTokens gets the application's delegation tokens on a Kerberized cluster (nil otherwise)
// and says on out which it got (kind and service, never their secrets).
func (s *Session) DelegationTokens(ctx context.Context, rm *yarnrpc.ApplicationClient, job *jobfile.Job, out io.Writer) (*yarnrpc.Credentials, error) {
	if s.Kerberos == nil {
		return nil, nil
	}
	creds, err := DelegationTokens(ctx, TokenRequest{Conf: s.Conf, Login: s.Kerberos, RM: rm, Namenodes: job.HDFSNamenodes})
	if err != nil {
		return nil, err
	}
	for _, a := range creds.Aliases() {
		fmt.Fprintf(out, "delegation token %s\n", creds.Tokens[a])
	}
	return creds, nil
}

// stageKeytab ships the session's keytab to the AM when it logged in with one on a Kerberized cluster,
// and returns the principal the AM logs in as ("" when nothing was shipped).
func (s *Session) stageKeytab(fsys *HDFS, st *Staged) (principal string, key []byte, err error) {
	if s.Kerberos == nil || s.keytab == "" {
		return "", nil, nil
	}
	key, err = StageKeytab(fsys, st, fsys.DefaultFS, s.keytab)
	if err != nil {
		return "", nil, err
	}
	return s.Kerberos.Principal(), key, nil
}
