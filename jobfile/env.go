package jobfile

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/text"
)

// This file holds the environment variables a job may not set in [taskexecutor.env].

// and the container launch script); a value in the job would be overwritten or would break the
// container.
var yarnEnv = []string{"CONTAINER_ID", "NM_HOST", "NM_PORT", "NM_HTTP_PORT", "LOCAL_DIRS", "LOCAL_USER_DIRS", "LOG_DIRS",
	"USER", "LOGNAME", "HOME", "PWD", "JVM_PID", "HADOOP_TOKEN_FILE_LOCATION", "APPLICATION_WEB_PROXY_BASE", "APP_SUBMIT_TIME_ENV"}

// ReservedEnv says why an environment variable cannot be set in [taskexecutor.env], or "" when it can.
// The GPU visibility variables are reserved only when a GPU resource is configured (the client checks
// those: GPUEnv).
func ReservedEnv(k string) string {
	switch {
	case slices.Contains(yarnEnv, k):
		return "YARN's NodeManager sets it in every container"
	case strings.HasPrefix(k, "NM_AUX_SERVICE_"):
		return "YARN's NodeManager sets the NM_AUX_SERVICE_* variables in every container"
	case k == contract.EnvTokensRefresh || k == contract.EnvLogLevel:
		return "" // the user's to tune (docs/job-file.md#files-archives-and-environment)
	case strings.HasPrefix(k, "YARN_AM_"):
		return "variables starting with YARN_AM_ are set by yarn-am's ApplicationMaster and launcher (only YARN_AM_TOKENS_REFRESH and YARN_AM_LOG_LEVEL may be set)"
	}
	return ""
}

// GPUEnv are the variables the GPU driver sets to the GPUs it assigned; the launcher keeps a value the
// user set, so a job that sets one would see GPUs that are not its own.
var GPUEnv = contract.GPUVisibilityEnv()

// LogLevels are the values YARN_AM_LOG_LEVEL takes (docs/job-file.md#files-archives-and-environment).
var LogLevels = []string{"debug", "info", "warn", "error"}

// CheckLogLevel refuses a YARN_AM_LOG_LEVEL that is not one of LogLevels: the AM and the launcher
// would otherwise log at info without a word.
func CheckLogLevel(v string) error {
	if slices.Contains(LogLevels, strings.ToLower(v)) {
		return nil
	}
	return fmt.Errorf("%s = %s is not a log level; use one of %s", contract.EnvLogLevel, text.Quote(v), strings.Join(LogLevels, ", "))
}

// MinTokensRefresh is the shortest YARN_AM_TOKENS_REFRESH a job may set: each poll is a request to the
// AM, and tokens live for hours.
const MinTokensRefresh = time.Second

// CheckTokensRefresh refuses a YARN_AM_TOKENS_REFRESH that is not a Go duration of at least
// MinTokensRefresh: the launcher, given one, cannot start its token refresher, and the worker runs on
// without renewed tokens until they expire (TestJobEnvValidatesYarnAMVariables).
func CheckTokensRefresh(v string) error {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < MinTokensRefresh {
		return fmt.Errorf("%s = %s is not a duration of at least 1s; write a number with a unit, e.g. 30s or 5m (the default is 30s)", contract.EnvTokensRefresh, text.Quote(v))
	}
	return nil
}
