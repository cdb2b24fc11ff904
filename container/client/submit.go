package client

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// SubmitOptions are what `yarn-am submit` adds to the job.
type SubmitOptions struct {
	Service bool
	Driver  string // shell command run by the AM (driver mode); "" = none
	Queue   string // overrides the job's queue when set
	Name    string // overrides the job's name when set
	// Tokens are the delegation tokens for the AM (Kerberized clusters; see DelegationTokens).
	Tokens *yarnrpc.Credentials
}

// Submit is `yarn-am submit` against the cluster once the job is loaded: the pre-flight against the
// cluster (CheckAgainstCluster, which reserves the application id), the delegation tokens, then
// StageAndSubmit with the job's queue and name; progress goes to out. appID is nil when the error
// came before the id was reserved; else it is the application's, also with an error of the staging
// or the submission (whether it was submitted is for the caller to tell from ctx).
func (s *Session) Submit(ctx context.Context, rm *yarnrpc.ApplicationClient, lj *LoadedJob, opts SubmitOptions, out io.Writer) (appID *hadooppb.ApplicationIdProto, err error) {
	facts, err := CheckAgainstCluster(ctx, rm, lj, lj.Job.Queue)
	if err != nil {
		return nil, err
	}
	if opts.Tokens, err = s.DelegationTokens(ctx, rm, lj.Job, out); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "pre-flight OK: %d TaskExecutor(s) of %s\n", lj.Job.TaskExecutor.Instances, lj.DescribeTaskExecutor())
	opts.Queue, opts.Name = lj.Job.Queue, lj.Job.Name
	appID = facts.NewApp.GetApplicationId()
	return appID, s.StageAndSubmit(ctx, rm, lj, opts, appID, out)
}

// StageAndSubmit stages the job's files (this binary, the job, flink-conf.yaml, the site files,
// scripts, user files and, on a Kerberized cluster logged in from a keytab, the keytab) and submits
// the AM under appID. If anything fails after the staging directory exists, the directory is removed.
// First it removes the staging directories of this user's ended applications (RemoveLeftovers).
// Progress goes to out.
func (s *Session) StageAndSubmit(ctx context.Context, rm *yarnrpc.ApplicationClient, lj *LoadedJob, opts SubmitOptions,
	appID *hadooppb.ApplicationIdProto, out io.Writer) (err error) {
	id := yarnrpc.FormatApplicationID(appID)
	user := s.User
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the running yarn-am binary to ship: %w", err)
	}
	fsys, err := s.DialStaging(user)
	if err != nil {
		return err
	}
	defer fsys.Close()
	// Leftovers of ended applications (docs/running.md#nothing-left-behind); a failed sweep only warns.
	if _, err := RemoveLeftovers(ctx, fsys, rm, user, out); err != nil {
		fmt.Fprintf(out, "warning: %v\n", err)
	}
	// Cache entries unused for CacheMaxAge (docs/job-file.md#visibility-and-the-cache); a failed sweep
	// only warns.
	if _, err := SweepCache(ctx, fsys, user, time.Now(), out); err != nil {
		fmt.Fprintf(out, "warning: %v\n", err)
	}
	staged := false
	defer func() {
		if err != nil && staged {
			if rerr := RemoveStaging(fsys, user, id); rerr != nil {
				fmt.Fprintf(out, "could not remove the staging directory: %v\n", rerr)
			} else {
				fmt.Fprintf(out, "removed the staging directory %s\n", StagingDir(user, id))
			}
		}
	}()
	// What earlier applications left for this one in the user's cache (framework.RemoteStager).
	var remote framework.RemoteStaged
	if rs, ok := framework.Of(lj.Job).(framework.RemoteStager); ok {
		remote, err = rs.StageRemote(lj.Job, framework.RemoteStage{FS: fsys, User: user, DefaultFS: fsys.DefaultFS,
			AppID: id, UserKey: UserKey, Out: out})
		if err != nil {
			return err
		}
		for alias := range remote.DriverSecrets {
			if !contract.IsDriverSecret(alias) {
				return fmt.Errorf("the framework's driver secret %q does not start with %q", alias, contract.DriverSecretPrefix)
			}
		}
	}
	staged = true
	fmt.Fprintf(out, "staging to %s%s/\n", fsys.DefaultFS, StagingDir(user, id))
	start := time.Now()
	st, err := Stage(ctx, fsys, StageRequest{
		AppID: id, User: user, DefaultFS: fsys.DefaultFS, Binary: bin, Job: lj.Job,
		ResourceConf: lj.ResourceConf, ConfDir: yarnrpc.ConfigDirFromEnv(), Resources: lj.Resources,
		Progress: func(u Upload) {
			if u.Replaced {
				fmt.Fprintf(out, "  cache entry cache/%s did not match its content; replaced\n", shortName(user, u.Remote))
			}
			switch {
			case u.Reused:
				fmt.Fprintf(out, "  reused %s from the cache (%s)\n", path.Base(u.Remote), humanBytes(u.Size))
			case strings.HasPrefix(u.Remote, CacheDir(user)+"/"):
				fmt.Fprintf(out, "  uploaded %-40s %9s  %s\n", "cache/"+shortName(user, u.Remote), humanBytes(u.Size), u.Local)
			default:
				fmt.Fprintf(out, "  uploaded %-40s %9s  %s\n", strings.TrimPrefix(u.Remote, StagingDir(user, id)+"/"), humanBytes(u.Size), u.Local)
			}
		},
	})
	if err != nil {
		return err
	}
	copied, reused := st.UploadedBytes()
	fmt.Fprintf(out, "staged in %.1f s: %s uploaded, %s reused from the cache\n", time.Since(start).Seconds(), humanBytes(copied), humanBytes(reused))
	principal, keytabKey, err := s.stageKeytab(fsys, st)
	if err != nil {
		return err
	}
	secret, err := NewSecret()
	if err != nil {
		return err
	}
	caCert, caKey, err := NewTLSAuthority(id)
	if err != nil {
		return err
	}
	sc, err := SubmissionContext(AMOptions{
		AppID: appID, Job: lj.Job, Staged: st, User: user, Secret: secret, TLSCACert: caCert, TLSCAKey: caKey, Defines: lj.Defines,
		Service: opts.Service, Driver: opts.Driver, Queue: opts.Queue, Name: opts.Name, Tokens: opts.Tokens,
		Principal: principal, KeytabKey: keytabKey, DriverSecrets: remote.DriverSecrets,
	})
	if err != nil {
		return err
	}
	if err := rm.SubmitApplication(ctx, sc); err != nil {
		return fmt.Errorf("submitting %s: %w", id, err)
	}
	s.submittedApp, s.submittedKey = id, &AppKey{Secret: secret, CACert: caCert} // the follower reads as the owner
	// For yarn-am scale (docs/commands.md#yarn-am-scale); without it only the driver can write.
	if err := SaveAppSecret(id, secret, caCert); err != nil {
		fmt.Fprintf(out, "warning: %v; yarn-am scale will not work for %s\n", err, id)
	}
	return nil
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
