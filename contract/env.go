package contract

// The application as YARN lists it: every yarn-am application has this type and tag.
const (
	ApplicationType = "YARN-AM"
	ApplicationTag  = "yarn-am"
)

// SecretAlias is the secret key, in the AM's and the TaskExecutors' credentials, of the
// per-application secret (64 hex characters) the client creates. Writes to the AM's API present it as
// "Authorization: Bearer <secret>".
const SecretAlias = "yarn-am.secret"

// Environment of the AM container (set by the client).
const (
	// EnvStagingDir is the application's staging directory, a full hdfs:// URI
	// (/user/<user>/.yarn-am/<application id> on fs.defaultFS). The AM passes it on to every
	// TaskExecutor, whose launcher finds a restarted AM there (APIAddressXAttr).
	EnvStagingDir = "YARN_AM_STAGING_DIR"
	// EnvLogLevel is the log level of the AM and the launchers (DefaultLogLevel when unset).
	EnvLogLevel     = "YARN_AM_LOG_LEVEL"
	DefaultLogLevel = "info"
	// EnvPrincipal names the principal of the keytab staged for the AM (StagedKeytab), if any.
	EnvPrincipal = "YARN_AM_PRINCIPAL"
)

// The client also sets Hadoop's own HADOOP_CONF_DIR and HADOOP_USER_NAME for the AM; they are
// Hadoop's names, not yarn-am's, so package internal/hadoop holds them, below the wire client.

// Environment of the TaskExecutor containers (set by the AM, read by the launcher).
const (
	// EnvReportURL is the AM's containers URL on its HTTPS port, https://host:port/api/v1/containers/:
	// the launcher appends its CONTAINER_ID and "/report" (ReportPath). The launcher sends the secret
	// to https:// URLs only, trusting only the authority in TLSCACertAlias.
	EnvReportURL = "YARN_AM_REPORT_URL"
	// EnvTokensURL is the AM's token endpoint, https://host:port/api/v1/tokens; set only when the AM
	// refreshes delegation tokens (it was given a keytab).
	EnvTokensURL = "YARN_AM_TOKENS_URL"
	// EnvTokensRefresh is how often the launcher polls EnvTokensURL, a Go duration (default 30s).
	EnvTokensRefresh = "YARN_AM_TOKENS_REFRESH"
)

// Environment of the driver program in driver mode (set by the AM).
const (
	EnvAPI    = "YARN_AM_API"    // https://host:port/api/v1/ (trust EnvCACert)
	EnvSecret = "YARN_AM_SECRET" // the application's secret, for writes to the API
	// EnvDelegationTokens names a token file (Hadoop's HDTS format, 0600, in the AM's working
	// directory) holding the AM's current delegation tokens and nothing else: no secret, no AM-RM
	// token. The AM writes a new file and renames it over this one whenever it obtains new tokens.
	// Set only when the AM refreshes delegation tokens (it was given a keytab): a driver whose own
	// processes, or whose workers' processes, keep their tokens in memory reads it again and hands
	// the new tokens on (Flink's JobManager does, docs/flink.md#tokens-past-their-lifetime).
	EnvDelegationTokens = "YARN_AM_DELEGATION_TOKENS"
)

// What the worker gets (set by the launcher, read by the worker through package resources).
const (
	// InfoFileName is the file, in the container's working directory, that holds every resource's
	// infos as JSON: {"gpu": [{"index": "0"}, {"index": "1"}], "fpga": [...]}.
	InfoFileName = "external-resources.json"
	// EnvInfoFile holds the absolute path of the info file.
	EnvInfoFile = "YARN_AM_EXTERNAL_RESOURCES_FILE"
	// EnvResourcePrefix starts the per-resource variable that lists its main property
	// (resources.EnvResourceVar).
	EnvResourcePrefix = "YARN_AM_RESOURCE_"
)

// GPU visibility variables: the launcher sets the vendor's variable to the GPUs it assigned
// (docs/gpus.md#what-the-worker-gets), and a job may not set any of them itself, or its worker would
// see GPUs that are not its own.
const (
	EnvCUDAVisibleDevices = "CUDA_VISIBLE_DEVICES" // NVIDIA
	EnvHIPVisibleDevices  = "HIP_VISIBLE_DEVICES"  // AMD (HIP)
	EnvROCRVisibleDevices = "ROCR_VISIBLE_DEVICES" // AMD (the ROCm runtime below HIP)
)

// GPUVisibilityEnv lists the GPU visibility variables.
func GPUVisibilityEnv() []string {
	return []string{EnvCUDAVisibleDevices, EnvHIPVisibleDevices, EnvROCRVisibleDevices}
}

// The application's TLS authority (docs/design.md#security): the client creates it at submit and puts
// both into the AM's credentials; the AM issues itself a server certificate for NM_HOST from it and
// serves its secret-bearing API over HTTPS. TaskExecutors get the certificate only, never the key.
const (
	TLSCACertAlias = "yarn-am.tls.ca-cert" // PEM certificate
	TLSCAKeyAlias  = "yarn-am.tls.ca-key"  // PEM EC private key; the AM's credentials only
)

// DriverSecretPrefix starts the alias of a secret that the AM's credentials and its driver's token
// file hold, and no TaskExecutor's: key material a framework's driver needs and job code in the
// TaskExecutors must not have (the key with which a Flink JobManager's driver signs the
// class-data-sharing archive it made, docs/flink.md#class-data-sharing). The client adds such
// secrets at submit (framework.RemoteStaged.DriverSecrets).
const DriverSecretPrefix = "yarn-am.driver."

// IsDriverSecret reports whether alias is a driver's secret (DriverSecretPrefix).
func IsDriverSecret(alias string) bool {
	return len(alias) > len(DriverSecretPrefix) && alias[:len(DriverSecretPrefix)] == DriverSecretPrefix
}

// EnvCACert is the path of the authority's PEM certificate in the driver's environment (driver mode),
// for TLS clients of EnvAPI (curl --cacert "$YARN_AM_CA_CERT").
const EnvCACert = "YARN_AM_CA_CERT"

// CACertFile is the name of that file in the AM container's working directory.
const CACertFile = "yarn-am-ca.pem"

// What a framework's TaskExecutors share (framework.AM.WorkerEnv carries a framework's own names).
const (
	// EnvFramework is the job's framework (framework.Framework's Name: "flink", "gang"), set by the
	// AM in every TaskExecutor's environment of a job that has one; the launcher runs the framework's
	// PrepareWorker before the worker starts (docs/design.md#adding-a-framework).
	EnvFramework = "YARN_AM_FRAMEWORK"
	// EnvDeviceEnv set to DeviceEnvOff in a TaskExecutor's environment tells the launcher not to set
	// the drivers' visibility variables (CUDA_VISIBLE_DEVICES, ...): a Flink TaskManager hands its
	// operators physical GPU indexes (FLIP-108), which must stay valid inside the process
	// (docs/flink.md#the-taskmanager-command). Coordination still keeps co-located workers apart.
	EnvDeviceEnv = "YARN_AM_DEVICE_ENV"
	DeviceEnvOff = "off"
)

// A driver's outcome in its own words (docs/running.md#modes-batch-service-driver): the AM names a file
// in the driver's environment; a driver may write one short text there (the first MaxOutcomeBytes are
// read), which the AM puts, redacted of the application's secrets, into the application's diagnostics
// and so the ResourceManager's. The driver's stderr never goes there (it is shown to the application's
// owner only); what a driver writes here it publishes. yarn-am's own drivers write it (a Flink job's
// state and root cause); a user's --driver may.
const (
	EnvOutcomeFile  = "YARN_AM_OUTCOME_FILE"
	OutcomeFileName = "yarn-am-driver-outcome.txt"
	MaxOutcomeBytes = 4096
)
