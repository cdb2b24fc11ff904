package client

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/contract/launchctx"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
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
	// TLSCACert and TLSCAKey are the application's TLS authority (NewTLSAuthority), from which the AM
	// issues its HTTPS certificate; empty: the AM makes its own, and only its TaskExecutors and
	// driver can reach its HTTPS API.
	TLSCACert, TLSCAKey []byte
	// Defines are the user's -D flags; Staged.Defines are added after them. They reach the AM in its
	// environment (contract.EnvDefines), never on its command line, which every user of the node can
	// read.
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
	// KeytabKey is the key StageKeytab sealed the keytab with; it goes into the AM's credentials
	// (contract.KeytabKeyAlias) and nowhere else.
	KeytabKey []byte
	// DriverSecrets go into the AM's credentials by alias (contract.DriverSecretPrefix), from which
	// the AM gives them to its driver and to no TaskExecutor.
	DriverSecrets map[string][]byte
}

// hasResourceConf reports whether flink-conf.yaml was staged.
func (o AMOptions) hasResourceConf() bool {
	for _, r := range o.Staged.AM {
		if r.Alias == contract.StagedResourceConf {
			return true
		}
	}
	return false
}

// AMCommand is the AM container's command line, already escaped for YARN's launch script (which runs
// it as `exec /bin/bash -c "<command>"`).
func AMCommand(o AMOptions) string {
	args := []string{"./" + contract.StagedBinary, "am", "--job", contract.StagedJob}
	if o.hasResourceConf() {
		args = append(args, "--flink-conf", contract.StagedResourceConf)
	}
	if o.Service {
		args = append(args, "--service")
	}
	if o.Driver != "" {
		args = append(args, "--driver", contract.QuoteForLaunch(o.Driver))
	}
	cmd := strings.Join(args, " ") + " 1>" + contract.LogDirVar + "/am.stdout 2>" + contract.LogDirVar + "/am.stderr"
	return contract.EscapeForLaunchScript(cmd)
}

// AMEnvironment is the AM container's environment.
func AMEnvironment(o AMOptions) map[string]string {
	lvl := o.LogLevel
	if lvl == "" {
		lvl = contract.DefaultLogLevel
	}
	// The job's am.env first: yarn-am's own variables are set over it (jobfile refuses them there).
	env := map[string]string{}
	if o.Job != nil {
		for k, v := range o.Job.AM.Env {
			env[k] = v
		}
		if v := o.Job.AM.Env[contract.EnvLogLevel]; v != "" && o.LogLevel == "" {
			lvl = v
		}
	}
	env[hadoop.EnvConfDir] = "$PWD" // the launch script expands it: the site files are localised there
	env[contract.EnvStagingDir] = o.Staged.DirURI
	env[hadoop.EnvUserName] = o.User
	env[contract.EnvLogLevel] = lvl
	if o.Principal != "" {
		env[contract.EnvPrincipal] = o.Principal
	}
	if d := contract.EncodeDefines(append(append([]string{}, o.Defines...), o.Staged.Defines...)); d != "" {
		env[contract.EnvDefines] = d
	}
	return env
}

// AMCredentials are the AM's credentials: the application secret, the TLS authority, the delegation
// tokens and the driver's secrets.
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
	for a, s := range o.DriverSecrets {
		c.Secrets[a] = s
	}
	c.Secrets[contract.SecretAlias] = []byte(o.Secret)
	if len(o.KeytabKey) > 0 {
		c.Secrets[contract.KeytabKeyAlias] = o.KeytabKey
	}
	if len(o.TLSCACert) > 0 && len(o.TLSCAKey) > 0 {
		c.Secrets[contract.TLSCACertAlias] = o.TLSCACert
		c.Secrets[contract.TLSCAKeyAlias] = o.TLSCAKey
	}
	return c
}

// NewTLSAuthority creates the application's TLS authority (PEM certificate and key) for AMOptions:
// the AM serves the application secret's endpoints over HTTPS with a certificate it issues, and
// everything that sends the secret trusts only it (docs/design.md#security).
func NewTLSAuthority(app string) (cert, key []byte, err error) {
	return amtls.NewAuthority(app)
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
	lr, err := launchctx.LocalResources(o.Staged.AM)
	if err != nil {
		return nil, err
	}
	return &hadooppb.ContainerLaunchContextProto{
		LocalResources: lr,
		Environment:    launchctx.Environment(AMEnvironment(o)),
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
	for _, t := range append(append([]string{}, o.Job.Tags...), contract.ApplicationTag) {
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
		ApplicationType: proto.String(contract.ApplicationType),
		ApplicationTags: tags,
	}
	if l := o.Job.AM.NodeLabel; l != "" {
		// am.node-label: the AM container's own request, so that the TaskExecutors' partition stays
		// taskexecutor.node-label's (the application-wide node_label_expression would be the
		// default of their requests too; docs/job-file.md#node-labels).
		sc.AmContainerResourceRequest = []*hadooppb.ResourceRequestProto{{
			Priority:            &hadooppb.PriorityProto{Priority: proto.Int32(0)},
			ResourceName:        proto.String("*"),
			Capability:          proto.Clone(sc.Resource).(*hadooppb.ResourceProto),
			NumContainers:       proto.Int32(1),
			RelaxLocality:       proto.Bool(true),
			NodeLabelExpression: proto.String(l),
		}}
	}
	if o.Job.MaxAttempts > 0 {
		sc.MaxAppAttempts = proto.Int32(o.Job.MaxAttempts)
	}
	sc.LogAggregationContext = logAggregationContext(o.Job.LogAggregation)
	if o.Job.KeepContainers {
		sc.KeepContainersAcrossApplicationAttempts = proto.Bool(true)
	}
	return sc, nil
}

// logAggregationContext is the job's [log-aggregation] table as YARN's LogAggregationContext (nil
// when the job gives none): the patterns it sets, the others absent, which the NodeManager reads as
// no filter (docs/job-file.md#log-aggregation). A rolled-logs include pattern turns on the
// NodeManagers' rolling aggregation for the application, where they run it at all.
func logAggregationContext(la jobfile.LogAggregation) *hadooppb.LogAggregationContextProto {
	if !la.Set {
		return nil
	}
	c := &hadooppb.LogAggregationContextProto{}
	for _, f := range []struct {
		v   string
		dst **string
	}{{la.Include, &c.IncludePattern}, {la.Exclude, &c.ExcludePattern}, {la.RolledInclude, &c.RolledLogsIncludePattern}, {la.RolledExclude, &c.RolledLogsExcludePattern}} {
		if f.v != "" {
			*f.dst = proto.String(f.v)
		}
	}
	return c
}
