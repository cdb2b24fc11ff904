package resources

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/atomicfile"
	"github.com/yarn-am/yarn-am/internal/boundedread"
)

// MainProperty is the property whose values the per-resource environment variable lists.
const MainProperty = contract.InfoIndex

// EnvResourceVar returns the environment variable that lists the "index" property of a resource's
// infos, comma-separated: "YARN_AM_RESOURCE_" + the name in upper case with '-' replaced by '_'
// (gpu -> YARN_AM_RESOURCE_GPU, my-fpga -> YARN_AM_RESOURCE_MY_FPGA).
func EnvResourceVar(name string) string {
	return contract.EnvResourcePrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// WriteInfoFile writes infos to dir/external-resources.json atomically (a temporary file renamed into
// place, so a reader never sees half a file: atomicfile), mode 0644, and returns the file's absolute path.
// A resource with no infos is written as an empty list.
func WriteInfoFile(dir string, infos map[string][]Info) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resources: info file directory %q: %w", dir, err)
	}
	doc := make(map[string][]Info, len(infos))
	for name, list := range infos {
		if list == nil {
			list = []Info{}
		}
		doc[name] = list
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", fmt.Errorf("resources: encoding %s: %w", contract.InfoFileName, err)
	}
	data = append(data, '\n')
	path := filepath.Join(abs, contract.InfoFileName)
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return "", fmt.Errorf("resources: writing %s: %w", path, err)
	}
	return path, nil
}

// InfoEnv returns the environment a worker gets for its infos: EnvInfoFile = path, and for every
// resource EnvResourceVar(name) = the comma-separated "index" property of its infos (infos without
// one are skipped; a resource without infos gets an empty value).
func InfoEnv(path string, infos map[string][]Info) map[string]string {
	env := map[string]string{contract.EnvInfoFile: path}
	for name, list := range infos {
		var ids []string
		for _, in := range list {
			if v, ok := in[MainProperty]; ok {
				ids = append(ids, v)
			}
		}
		env[EnvResourceVar(name)] = strings.Join(ids, ",")
	}
	return env
}

// ErrNoInfoFile is returned by ReadInfos when the process was not started by the yarn-am launcher.
var ErrNoInfoFile = errors.New("resources: no external-resource info file: " + contract.EnvInfoFile + " is not set and " + contract.InfoFileName + " is not in the working directory (was the worker started by yarn-am launch?)")

// ReadInfos reads the infos of every resource, for Go workers: from the file named by
// YARN_AM_EXTERNAL_RESOURCES_FILE, or from external-resources.json in the working directory when the
// variable is unset.
func ReadInfos() (map[string][]Info, error) {
	path := os.Getenv(contract.EnvInfoFile)
	if path == "" {
		if _, err := os.Stat(contract.InfoFileName); err != nil {
			return nil, ErrNoInfoFile
		}
		path = contract.InfoFileName
	}
	return ReadInfoFile(path)
}

// MaxInfoFileBytes bounds an info file: it lives in a container's working directory, where the worker
// can put anything in its place (a named pipe, a link to /dev/zero); a real one is a few hundred bytes
// per device (docs/running.md#limits-on-input-files).
const MaxInfoFileBytes = 1 << 20

// ReadInfoFile reads one info file written by WriteInfoFile, through the bounded reader.
func ReadInfoFile(path string) (map[string][]Info, error) {
	data, err := boundedread.ReadFile("external-resource info file", path, "the file yarn-am launch writes", MaxInfoFileBytes)
	if err != nil {
		return nil, fmt.Errorf("resources: reading external-resource infos: %w", err)
	}
	var infos map[string][]Info
	if err := json.Unmarshal(data, &infos); err != nil {
		return nil, fmt.Errorf("resources: %s is not a valid external-resource info file (want {\"gpu\": [{\"index\": \"0\"}]}): %w", path, err)
	}
	if infos == nil {
		infos = map[string][]Info{}
	}
	return infos, nil
}

// ExternalResourceInfos returns the infos of one resource, like Flink's
// RuntimeContext#getExternalResourceInfos. A resource that is not configured is an error naming the
// ones that are (Flink returns an empty set; a typo should not look like "no devices").
func ExternalResourceInfos(name string) ([]Info, error) {
	infos, err := ReadInfos()
	if err != nil {
		return nil, err
	}
	list, ok := infos[name]
	if !ok {
		names := make([]string, 0, len(infos))
		for n := range infos {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("resources: no external resource %q in this container; configured: %s", name, orNone(names))
	}
	return list, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
