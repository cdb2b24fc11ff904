package flinkdist

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/boundedread"
)

// readAssigned reads the info file `yarn-am launch` writes in a TaskExecutor container
// (contract.InfoFileName, named by contract.EnvInfoFile) and returns each resource's "index"
// properties in order: the Spec.GPUs of the TaskManager that runs as that container's worker
// (docs/flink.md#gpus). An info without an index is an error: Flink's GPU driver knows only indexes.
func readAssigned(path string) (map[string][]string, error) {
	// Bounded: the file lives in the container's working directory, where the worker can put a named
	// pipe or a device in its place.
	data, err := boundedread.ReadFile("the launcher's info file", path, "the file yarn-am launch writes", maxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("flink: %w", err)
	}
	var doc map[string][]map[string]string
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("flink: %s: %w", path, err)
	}
	out := make(map[string][]string, len(doc))
	for name, infos := range doc {
		idx := make([]string, 0, len(infos))
		for i, in := range infos {
			v, ok := in[contract.InfoIndex]
			if !ok {
				return nil, fmt.Errorf("flink: %s: %s info %d has no index property", path, name, i)
			}
			idx = append(idx, v)
		}
		out[name] = idx
	}
	return out, nil
}

// InContainer completes a TaskManager's Spec inside a TaskExecutor container, where it runs as the
// worker of `yarn-am launch` (docs/flink.md#the-taskmanager-command): Dir is the container's working
// directory (dir), LogDir the first of YARN's LOG_DIRS, and GPUs the indexes in the launcher's info
// file (contract.EnvInfoFile). getenv is os.Getenv outside tests. Missing variables are errors: a
// TaskManager started without them would log nowhere YARN collects, or run without its GPUs.
func InContainer(s Spec, dir string, getenv func(string) string) (Spec, error) {
	logDirs := getenv("LOG_DIRS")
	if logDirs == "" {
		return s, fmt.Errorf("flink: LOG_DIRS is not set: not in a YARN container")
	}
	s.LogDir = strings.Split(logDirs, ",")[0]
	info := getenv(contract.EnvInfoFile)
	if info == "" {
		return s, fmt.Errorf("flink: %s is not set: not started by yarn-am launch", contract.EnvInfoFile)
	}
	gpus, err := readAssigned(info)
	if err != nil {
		return s, err
	}
	s.Dir, s.GPUs = dir, gpus
	return s, nil
}
