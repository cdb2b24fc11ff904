package resources

// The most yarn-am reads of a configuration file (docs/running.md#limits-on-input-files): far above
// any real one, so a larger file is a mistake (or hostile), and reading it whole would cost the memory.
const (
	MaxJobFileBytes   = 1 << 20 // a job.toml
	MaxFlinkConfBytes = 1 << 20 // a flink-conf.yaml or config.yaml
)
