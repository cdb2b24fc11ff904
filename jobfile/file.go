package jobfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/resources"
)

// File is a job file read and decoded once. Three readers share the decoded document, each reading its
// part: Job (or StagedJob) the job-file schema, Policy the [policy] table, and ResourceKeys the
// external-resource keys, which resources.Load merges with a flink-conf.yaml and -D
// (docs/job-file.md#external-resources).
type File struct {
	// Path is the path as given, for messages; Abs is it made absolute, against which relative paths
	// in the file are resolved.
	Path, Abs string

	doc   map[string]any
	lines map[string]int // tomlKeyLines: where each key is written, for messages
	// frameworkDefines are ApplyDefines' keys of the job's framework, key=value in order
	// (FrameworkPart.Defines).
	frameworkDefines []string
}

// Read reads and decodes the job file at path. A file that is not TOML is a *SyntaxError: nothing else
// in it can be judged, so it is reported alone.
func Read(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("job file %s: %w", path, err)
	}
	data, err := boundedread.ReadFile("job file", path, "a job.toml", resources.MaxJobFileBytes)
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("job file %s does not exist", path)
	case errors.As(err, &pe):
		return nil, fmt.Errorf("job file %s cannot be read: %w", path, err)
	case err != nil:
		return nil, err // ReadFile's own: not a regular file, too large
	}
	// A UTF-8 byte order mark (an editor's) is not part of the first key.
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if err := checkShape(data); err != nil {
		return nil, fmt.Errorf("job file %s: %w (docs/running.md#limits-on-input-files)", path, err)
	}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// The library's range errors ("... is out of range for int64", "invalid datetime") name
			// the value, not the key it was given for; the key is found on the error's line
			// (TestReadNamesTheKeyOfAValueOutOfRange).
			return nil, &SyntaxError{Path: path, Line: pe.Position.Line, Key: keyOnLine(data, pe.Position.Line), Msg: pe.Message}
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
