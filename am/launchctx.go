package am

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// EnvReportURL tells the launcher where to report: the AM's containers URL, to which the launcher
// appends its CONTAINER_ID and "/report".
const EnvReportURL = "YARN_AM_REPORT_URL"

// StagedFiles looks up staged files by name (*Staging).
type StagedFiles interface {
	Resource(name, alias string) (*hadooppb.StringLocalResourceMapProto, error)
}

// TaskExecutorLaunch is what the launch context of every TaskExecutor is built from.
type TaskExecutorLaunch struct {
	Manifest  []ManifestEntry // the staged manifest.json
	Staged    StagedFiles     // yarn-am, job.toml and flink-conf.yaml are looked up here
	JobFile   string          // alias of the job file, "job.toml"
	FlinkConf string          // alias of the flink-conf.yaml, "" if none
	Defines   []string        // -D key=value passed on to the launcher
	Command   string          // taskexecutor.command
	Env       map[string]string
	ReportURL string               // http://NM_HOST:PORT/api/v1/containers/
	Creds     *yarnrpc.Credentials // the AM's credentials; the AM-RM token is left out
}

// LaunchContext builds the TaskExecutors' ContainerLaunchContext.
func (l TaskExecutorLaunch) LaunchContext() (*hadooppb.ContainerLaunchContextProto, error) {
	clc := &hadooppb.ContainerLaunchContextProto{}
	seen := map[string]bool{}
	for _, e := range l.Manifest {
		lr, err := e.LocalResource()
		if err != nil {
			return nil, err
		}
		seen[e.Alias] = true
		clc.LocalResources = append(clc.LocalResources, lr)
	}
	own := []string{"yarn-am", l.JobFile}
	if l.FlinkConf != "" {
		own = append(own, l.FlinkConf)
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
		clc.LocalResources = append(clc.LocalResources, lr)
	}

	env := map[string]string{}
	for k, v := range l.Env {
		env[k] = v
	}
	env[EnvReportURL] = l.ReportURL
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		clc.Environment = append(clc.Environment, &hadooppb.StringStringMapProto{Key: proto.String(k), Value: proto.String(env[k])})
	}

	clc.Command = []string{LauncherCommand(l.JobFile, l.FlinkConf, l.Defines, l.Command)}

	if l.Creds != nil {
		c := yarnrpc.NewCredentials()
		for alias, t := range l.Creds.Tokens {
			if t.Kind != yarnrpc.AMRMTokenKind {
				c.Tokens[alias] = t
			}
		}
		for alias, s := range l.Creds.Secrets {
			c.Secrets[alias] = s
		}
		clc.Tokens = c.Marshal()
	}
	return clc, nil
}

// LauncherCommand is the TaskExecutor's command line: the user's command run by bash inside
// `yarn-am launch`, with its output in the container's log directory. It is escaped for YARN's launch
// script, which embeds it in double quotes (exec /bin/bash -c "<command>"), so the user's $VARS are
// expanded by the worker's bash, after the launcher has set them.
func LauncherCommand(jobFile, flinkConf string, defines []string, command string) string {
	parts := []string{"./yarn-am", "launch", "-f", ShellQuote(jobFile)}
	if flinkConf != "" {
		parts = append(parts, "--flink-conf", ShellQuote(flinkConf))
	}
	for _, d := range defines {
		parts = append(parts, "-D", ShellQuote(d))
	}
	parts = append(parts, "--", "/bin/bash", "-c", ShellQuote(command), "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr")
	return launchScriptEscaper.Replace(strings.Join(parts, " "))
}

// launchScriptEscaper escapes what is special inside bash double quotes.
var launchScriptEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")

// ShellQuote quotes s for bash: plain words stay as they are, anything else goes in single quotes.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
