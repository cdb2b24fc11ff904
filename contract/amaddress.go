package contract

// Finding the AM after it restarted (docs/running.md#kept-taskexecutors-find-the-new-attempt): every
// attempt writes its HTTPS API address into an extended attribute of the application's staging
// directory, and a launcher whose posts to the AM stop getting through reads it again and moves to
// the new address, trusting only the application's TLS authority (TLSCACertAlias) there as before.
const (
	// APIAddressXAttr is that attribute: user.yarn-am.api on the staging directory (EnvStagingDir).
	APIAddressXAttr = "yarn-am.api"
	// MaxAPIAddressBytes bounds what a launcher reads of it.
	MaxAPIAddressBytes = 1024
	// EnvRPCProtection is the cluster's hadoop.rpc.protection, set by the AM in every TaskExecutor's
	// environment: the launcher has no Hadoop site files, and its NameNode connection (with the HDFS
	// delegation token of its token file, or SIMPLE) must speak it.
	EnvRPCProtection = "YARN_AM_RPC_PROTECTION"
	// EnvHadoopAuthentication is the cluster's hadoop.security.authentication ("kerberos" or
	// "simple"), set by the AM beside EnvRPCProtection: on a Kerberized cluster the launcher's
	// NameNode connection refuses a server that asks it to fall back to SIMPLE, as every other
	// client of yarn-am does (docs/security.md#no-fallback-to-simple).
	EnvHadoopAuthentication = "YARN_AM_HADOOP_AUTHENTICATION"
)

// APIAddress is the JSON value of APIAddressXAttr.
type APIAddress struct {
	// URL is the attempt's HTTPS API, https://host:port/ (the origin of EnvReportURL and EnvTokensURL).
	URL string `json:"url"`
	// Attempt is the attempt that wrote it (appattempt_..._000002), for the logs.
	Attempt string `json:"attempt"`
}
