package resources

import "github.com/yarn-am/yarn-am/internal/boundedread"

// The most yarn-am reads of a configuration file (docs/running.md#limits-on-input-files): far above
// any real one, so a larger file is a mistake (or hostile), and reading it whole would cost the memory.
const (
	MaxJobFileBytes   = 1 << 20 // a job.toml
	MaxFlinkConfBytes = 1 << 20 // a flink-conf.yaml or config.yaml
)

// ReadFile reads a configuration file whole, refusing what is not a regular file or is larger than
// limit (boundedread.ReadFile).
func ReadFile(what, path, want string, limit int64) ([]byte, error) {
	return boundedread.ReadFile(what, path, want, limit)
}
