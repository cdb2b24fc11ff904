package client

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/container/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// The client ↔ AM contract (issue 4): application type and tag, the secret's alias in the credentials,
// and the AM container's environment.
const (
	ApplicationType = "YARN-AM"
	ApplicationTag  = "yarn-am"
	// SecretAlias is the secret key, in the AM's and the TaskExecutors' credentials, of the
	// per-application secret (64 hex characters) that writes to the AM's API must present as
	// "Authorization: Bearer <secret>".
	SecretAlias = "yarn-am.secret"

	EnvStagingDir   = "YARN_AM_STAGING_DIR"
	EnvLogLevel     = "YARN_AM_LOG_LEVEL"
	EnvHadoopConf   = "HADOOP_CONF_DIR"
	EnvHadoopUser   = "HADOOP_USER_NAME"
	EnvReportURL    = "YARN_AM_REPORT_URL"
	DefaultLogLevel = "info"

	// LogDirVar is expanded by YARN to the container's log directory.
	LogDirVar = "<LOG_DIR>"
)

// NewSecret returns a fresh per-application secret: 32 random bytes, hex-encoded.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating the application secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// AMOptions is everything the AM's launch context and the submission are built from.
type AMOptions struct {
	AppID  *hadooppb.ApplicationIdProto
	Job    *jobfile.Job
	Staged *Staged
	User   string
	Secret string
	// Defines are the user's -D flags; Staged.Defines are added after them.
	Defines  []string
	Service  bool
	Driver   string // shell command run by the AM (driver mode); "" = none
	Queue    string // overrides the job's queue when set
	Name     string // overrides the job's name when set
	LogLevel string // YARN_AM_LOG_LEVEL; default info
	// Tokens are delegation tokens for the AM (and, through it, the TaskExecutors); nil on clusters
	// without Kerberos.
	Tokens *yarnrpc.Credentials
	// Principal is the principal of the keytab staged with StageKeytab ("" = none shipped): the AM
	// logs in from it to replace tokens before their maximum lifetime.
	Principal string
}

// hasFlinkConf reports whether flink-conf.yaml was staged.
func (o AMOptions) hasFlinkConf() bool {
	for _, r := range o.Staged.AM {
		if r.Alias == StagedFlinkConf {
			return true
		}
	}
	return false
}

// AMCommand is the AM container's command line, already escaped for YARN's launch script (which runs
// it as `exec /bin/bash -c "<command>"`).
func AMCommand(o AMOptions) string {
	args := []string{"./" + StagedBinary, "am", "--job", StagedJob}
	if o.hasFlinkConf() {
		args = append(args, "--flink-conf", StagedFlinkConf)
	}
	for _, d := range append(append([]string{}, o.Defines...), o.Staged.Defines...) {
		args = append(args, "-D", ShellQuote(d))
	}
	if o.Service {
		args = append(args, "--service")
	}
	if o.Driver != "" {
		args = append(args, "--driver", ShellQuote(o.Driver))
	}
	cmd := strings.Join(args, " ") + " 1>" + LogDirVar + "/am.stdout 2>" + LogDirVar + "/am.stderr"
	return EscapeForLaunchScript(cmd)
}

// AMEnvironment is the AM container's environment.
func AMEnvironment(o AMOptions) map[string]string {
	lvl := o.LogLevel
	if lvl == "" {
		lvl = DefaultLogLevel
	}
	env := map[string]string{
		EnvHadoopConf: "$PWD", // the launch script expands it: the site files are localised there
		EnvStagingDir: o.Staged.DirURI,
		EnvHadoopUser: o.User,
		EnvLogLevel:   lvl,
	}
	if o.Principal != "" {
		env[EnvPrincipal] = o.Principal
	}
	return env
}

// AMCredentials are the AM's credentials: the application secret and the delegation tokens.
func AMCredentials(o AMOptions) *yarnrpc.Credentials {
	c := yarnrpc.NewCredentials()
	if o.Tokens != nil {
		for a, t := range o.Tokens.Tokens {
			c.Tokens[a] = t
		}
		for a, s := range o.Tokens.Secrets {
			c.Secrets[a] = s
		}
	}
	c.Secrets[SecretAlias] = []byte(o.Secret)
	return c
}

// AMLaunchContext builds the AM's ContainerLaunchContext: local resources from staging, environment,
// command and credentials.
func AMLaunchContext(o AMOptions) (*hadooppb.ContainerLaunchContextProto, error) {
	if o.Staged == nil || o.Job == nil {
		return nil, errors.New("AM launch context: staging result and job are required")
	}
	if o.Secret == "" {
		return nil, errors.New("AM launch context: the application secret is empty")
	}
	lr, err := LocalResourcesProto(o.Staged.AM)
	if err != nil {
		return nil, err
	}
	return &hadooppb.ContainerLaunchContextProto{
		LocalResources: lr,
		Environment:    EnvironmentProto(AMEnvironment(o)),
		Command:        []string{AMCommand(o)},
		Tokens:         AMCredentials(o).Marshal(),
	}, nil
}

// SubmissionContext builds the ApplicationSubmissionContext: name, queue, priority, type YARN-AM, the
// job's tags plus yarn-am, max attempts, the AM's size and launch context.
func SubmissionContext(o AMOptions) (*hadooppb.ApplicationSubmissionContextProto, error) {
	if o.AppID == nil {
		return nil, errors.New("submission: application id is required")
	}
	clc, err := AMLaunchContext(o)
	if err != nil {
		return nil, err
	}
	name, queue := o.Job.Name, o.Job.Queue
	if o.Name != "" {
		name = o.Name
	}
	if o.Queue != "" {
		queue = o.Queue
	}
	tags := []string{}
	seen := map[string]bool{}
	for _, t := range append(append([]string{}, o.Job.Tags...), ApplicationTag) {
		if !seen[t] {
			seen[t] = true
			tags = append(tags, t)
		}
	}
	sc := &hadooppb.ApplicationSubmissionContextProto{
		ApplicationId:   o.AppID,
		ApplicationName: proto.String(name),
		Queue:           proto.String(queue),
		Priority:        &hadooppb.PriorityProto{Priority: proto.Int32(o.Job.Priority)},
		AmContainerSpec: clc,
		Resource: &hadooppb.ResourceProto{
			Memory:       proto.Int64(o.Job.AM.MemoryMB),
			VirtualCores: proto.Int32(o.Job.AM.VCores),
		},
		ApplicationType: proto.String(ApplicationType),
		ApplicationTags: tags,
	}
	if o.Job.MaxAttempts > 0 {
		sc.MaxAppAttempts = proto.Int32(o.Job.MaxAttempts)
	}
	return sc, nil
}

// EnvironmentProto converts an environment to the launch context's list, sorted by name.
func EnvironmentProto(env map[string]string) []*hadooppb.StringStringMapProto {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*hadooppb.StringStringMapProto, 0, len(keys))
	for _, k := range keys {
		out = append(out, &hadooppb.StringStringMapProto{Key: proto.String(k), Value: proto.String(env[k])})
	}
	return out
}

// ShellQuote quotes s as one word for bash: unchanged when it has only safe characters, else in single
// quotes with each embedded single quote written as '\”.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// EscapeForLaunchScript escapes a command line for YARN's launch script, which embeds the command in
// double quotes (`exec /bin/bash -c "<command>"`): without this, $, `, " and \ in a command would be
// interpreted by the launch script instead of reaching bash -c unchanged.
func EscapeForLaunchScript(cmd string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return r.Replace(cmd)
}
