package jobfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"
)

// File is a job file read and decoded once. Three readers share the decoded document, each reading its
// part: Job (or StagedJob) the job-file schema, PolicyArgs the [policy] table, and ResourceKeys the
// external-resource keys, which resources.Load merges with a flink-conf.yaml and -D
// (docs/job-file.md#external-resources).
type File struct {
	// Path is the path as given, for messages; Abs is it made absolute, against which relative paths
	// in the file are resolved.
	Path, Abs string

	doc   map[string]any
	lines map[string]int // tomlKeyLines: where each key is written, for messages
}

// Read reads and decodes the job file at path. A file that is not TOML is a *SyntaxError: nothing else
// in it can be judged, so it is reported alone.
func Read(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("job file %s: %w", path, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("job file %s does not exist", path)
		}
		if st, serr := os.Stat(abs); serr == nil && st.IsDir() {
			return nil, fmt.Errorf("job file %s is a directory; give the path of a job.toml", path)
		}
		return nil, fmt.Errorf("job file %s cannot be read: %w", path, err)
	}
	return decode(path, abs, data)
}

func decode(path, abs string, data []byte) (*File, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &SyntaxError{Path: path, Line: pe.Position.Line, Msg: pe.Message}
		}
		return nil, &SyntaxError{Path: path, Msg: err.Error()}
	}
	return &File{Path: path, Abs: abs, doc: doc, lines: tomlKeyLines(data)}, nil
}

// LoadJob reads and validates a job file: Read, then Job.
func LoadJob(path string) (*Job, error) {
	f, err := Read(path)
	if err != nil {
		return nil, err
	}
	return f.Job()
}

// LoadStagedJob reads a job file as it arrives in a container (the AM's job.toml): Read, then
// StagedJob.
func LoadStagedJob(path string) (*Job, error) {
	f, err := Read(path)
	if err != nil {
		return nil, err
	}
	return f.StagedJob()
}
