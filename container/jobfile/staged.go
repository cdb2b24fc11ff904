package jobfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// LoadStagedJob reads a job file as it arrives in a container (the AM's job.toml): like LoadJob, except
// that the local taskexecutor.files and archives are not looked for on this machine — they were
// shipped by staging and reach the TaskExecutors through manifest.json, and their relative paths mean
// nothing in the container's working directory. Job.Files and Job.Archives keep their sources and
// aliases as written.
func LoadStagedJob(path string) (*Job, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("job file %s: %w", path, err)
	}
	var raw map[string]any
	if _, err := toml.DecodeFile(abs, &raw); err != nil {
		// LoadJob words every read and syntax error.
		return LoadJob(path)
	}
	var files, archives []string
	if te, ok := raw["taskexecutor"].(map[string]any); ok {
		files, _ = stringList(te["files"])
		archives, _ = stringList(te["archives"])
		delete(te, "files")
		delete(te, "archives")
	}
	dir, err := os.MkdirTemp("", "yarn-am-staged-job-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	stripped := filepath.Join(dir, filepath.Base(abs))
	f, err := os.Create(stripped)
	if err != nil {
		return nil, err
	}
	if err := toml.NewEncoder(f).Encode(raw); err != nil {
		f.Close()
		return nil, fmt.Errorf("job file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	job, err := LoadJob(stripped)
	if err != nil {
		var je *JobError
		if errors.As(err, &je) {
			je.Path = path
			return nil, je
		}
		return nil, err
	}
	job.Path = abs
	if fc, _ := raw["flink-conf"].(string); fc != "" && !filepath.IsAbs(fc) {
		job.FlinkConf = filepath.Join(filepath.Dir(abs), fc) // LoadJob resolved it against the stripped copy
	}
	job.TaskExecutor.Files = stagedSpecs(files)
	job.TaskExecutor.Archives = stagedSpecs(archives)
	return job, nil
}

func stringList(v any) ([]string, bool) {
	items, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func stagedSpecs(in []string) []FileSpec {
	var out []FileSpec
	for _, s := range in {
		src, alias, _ := strings.Cut(s, "#")
		if alias == "" {
			alias = filepath.Base(strings.TrimSuffix(src, "/"))
		}
		out = append(out, FileSpec{Source: src, Alias: alias})
	}
	return out
}
