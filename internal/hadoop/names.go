package hadoop

// Hadoop's own environment variables: the AM finds its site files in its working directory through
// EnvConfDir and acts as the submitting user named by EnvUserName (docs/design.md#contracts).
const (
	EnvConfDir  = "HADOOP_CONF_DIR"
	EnvUserName = "HADOOP_USER_NAME"
)

// Hadoop's configuration files: read from HADOOP_CONF_DIR (EnvConfDir) by every process, staged
// under the same names into the AM's working directory (core-site.xml and yarn-site.xml are required:
// they say where the RM and HDFS are).
const (
	CoreSiteFile = "core-site.xml"
	HDFSSiteFile = "hdfs-site.xml"
	YARNSiteFile = "yarn-site.xml"
)

// ConfigFiles lists them in the order Hadoop's Configuration loads them, later files overriding
// earlier ones.
func ConfigFiles() []string { return []string{CoreSiteFile, HDFSSiteFile, YARNSiteFile} }
