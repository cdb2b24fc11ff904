package am

import (
	"fmt"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/launchctx"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// stagedFiles looks up staged files by name (*staging).
type stagedFiles interface {
	Resource(name, alias string) (contract.LocalResource, error)
}

// taskExecutorLaunch is what the launch context of every TaskExecutor is built from.
type taskExecutorLaunch struct {
	Manifest     []contract.LocalResource // the staged manifest.json
	Staged       stagedFiles              // yarn-am, job.toml and flink-conf.yaml are looked up here
	JobFile      string                   // alias of the job file, "job.toml"
	ResourceConf string                   // alias of the flink-conf.yaml, "" if none
	Defines      []string                 // -D key=value passed on to the launcher, in contract.EnvDefines
	Command      string                   // taskexecutor.command
	Env          map[string]string
	ReportURL    string               // https://NM_HOST:PORT/api/v1/containers/ (the HTTPS listener)
	Creds        *yarnrpc.Credentials // the AM's credentials; the AM-RM token is left out
}

// LaunchContext builds the TaskExecutors' ContainerLaunchContext.
func (l taskExecutorLaunch) LaunchContext() (*hadooppb.ContainerLaunchContextProto, error) {
	clc := &hadooppb.ContainerLaunchContextProto{}
	entries := append([]contract.LocalResource{}, l.Manifest...)
	seen := map[string]bool{}
	for _, e := range l.Manifest {
		seen[e.Alias] = true
	}
	own := []string{contract.StagedBinary, l.JobFile}
	if l.ResourceConf != "" {
		own = append(own, l.ResourceConf)
	}
	for _, name := range own {
		if seen[name] {
			continue
		}
		if l.Staged == nil {
			return nil, fmt.Errorf("staged file %s is not in the manifest and no staging directory is open", name)
		}
		lr, err := l.Staged.Resource(name, name)
		if err != nil {
			return nil, err
		}
		entries = append(entries, lr)
	}
	lrs, err := launchctx.LocalResources(entries)
	if err != nil {
		return nil, err
	}
	clc.LocalResources = lrs

	env := map[string]string{}
	for k, v := range l.Env {
		env[k] = v
	}
	env[contract.EnvReportURL] = l.ReportURL
	// Not on the command line, which every user of the node can read (contract.EnvDefines).
	if d := contract.EncodeDefines(l.Defines); d != "" {
		env[contract.EnvDefines] = d
	}
	clc.Environment = launchctx.Environment(env)

	clc.Command = []string{contract.LauncherCommand(l.JobFile, l.ResourceConf, l.Command)}

	if l.Creds != nil {
		clc.Tokens = taskExecutorCredentials(l.Creds).Marshal()
	}
	return clc, nil
}

// taskExecutorCredentials are what TaskExecutors get of the AM's credentials: everything but the
// AM-RM token (theirs to misuse, not to have), the TLS authority's key (TaskExecutors trust the
// AM's authority; they must not be able to act as it), the key of the sealed keytab
// (contract.KeytabKeyAlias; tokenRefresherFromEnv takes it out first, this is the second line) and
// the driver's secrets (contract.DriverSecretPrefix: what job code in a TaskExecutor must not hold,
// TestTaskExecutorsGetNoDriverSecret). Launch contexts and refreshed tokens are both built from it.
func taskExecutorCredentials(am *yarnrpc.Credentials) *yarnrpc.Credentials {
	c := yarnrpc.NewCredentials()
	for alias, t := range am.Tokens {
		if t.Kind != yarnrpc.AMRMTokenKind {
			c.Tokens[alias] = t
		}
	}
	for alias, s := range am.Secrets {
		if alias != contract.TLSCAKeyAlias && alias != contract.KeytabKeyAlias && !contract.IsDriverSecret(alias) {
			c.Secrets[alias] = s
		}
	}
	return c
}

// driverCredentials are what the AM's driver gets: a TaskExecutor's, and the driver's secrets
// (contract.DriverSecretPrefix), which it alone of the application's processes needs.
func driverCredentials(am *yarnrpc.Credentials) *yarnrpc.Credentials {
	c := taskExecutorCredentials(am)
	for alias, s := range am.Secrets {
		if contract.IsDriverSecret(alias) {
			c.Secrets[alias] = s
		}
	}
	return c
}
