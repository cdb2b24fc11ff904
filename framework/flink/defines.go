package flink

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/yarn-am/yarn-am/internal/text"
)

// The environment the AM gives a Flink job's driver (the JobManager) and TaskExecutors (the
// TaskManagers): framework.AM's DriverEnv and WorkerEnv (docs/flink.md#integration-design).
const (
	// envJobManager is the JobManager's RPC address host:port in a TaskManager's environment. The
	// launcher sets it before the worker starts, from what the AM publishes once the JobManager's
	// JVM has bound its port (publishedJobManager; docs/flink.md#the-jobmanager-as-the-driver).
	envJobManager = "YARN_AM_FLINK_JOBMANAGER"
	// envHost is the AM's host, set by the AM in the driver's environment: the JobManager's address
	// (its JVM binds the ports itself, bound.go).
	envHost = "YARN_AM_FLINK_HOST"
	// envBoundFile is the file in the AM container where the driver writes the ports the
	// JobManager's JVM bound, for the AM (bound.go), set in the driver's environment.
	envBoundFile = "YARN_AM_FLINK_BOUND_FILE"
	// envUI is the JobManager's web UI and REST API through the AM, http://amhost:port/flink/, set by
	// the AM in the driver's and every TaskExecutor's environment: its reads need no credential, and
	// a TaskManager polls it before its JVM starts when it waits for the JobManager
	// (docs/flink.md#taskmanagers-on-the-jobmanagers-host).
	envUI = "YARN_AM_FLINK_UI"
	// envDefines is the job's -D Flink keys ("key=value" in order; encodeDefines), set by
	// the AM in the driver's and every TaskExecutor's environment: the staged job.toml lacks them, and
	// they win over it and over the home's configuration, as flink run -D does
	// (docs/flink.md#configuration).
	envDefines = "YARN_AM_FLINK_DEFINES"
)

// maxDefines bounds envDefines' value (the -D Flink keys of a job: a few KiB at most).
const maxDefines = 1 << 20

// encodeDefines renders -D Flink keys for envDefines: a JSON array of "key=value" in
// unpadded URL-safe base64, so that no quote or shell character of a value meets YARN's launch
// script, which drops the quotes of a plain JSON value (docs/flink.md#configuration).
func encodeDefines(defines []string) (string, error) {
	b, err := json.Marshal(defines)
	if err != nil {
		return "", err
	}
	s := base64.RawURLEncoding.EncodeToString(b)
	if len(s) > maxDefines {
		return "", fmt.Errorf("the -D Flink keys take %d bytes encoded; at most %d", len(s), maxDefines)
	}
	return s, nil
}

// decodeDefines reads envDefines' value ("" = none).
func decodeDefines(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	if len(v) > maxDefines {
		return nil, fmt.Errorf("%s is %d bytes; at most %d", envDefines, len(v), maxDefines)
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	var defines []string
	if err == nil {
		err = json.Unmarshal(b, &defines)
	}
	if err != nil {
		return nil, fmt.Errorf("%s=%s: want the -D Flink keys as the AM encodes them (EncodeDefines): %w", envDefines, text.Quote(v), err)
	}
	return defines, nil
}
