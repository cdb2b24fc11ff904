package jobfile

import (
	"path/filepath"
	"strings"
)

// StagedJob reads the job as it arrives in a container (the AM's job.toml): like Job, except that the
// local taskexecutor.files and archives are not looked for on this machine — they were shipped by
// staging and reach the TaskExecutors through manifest.json, and their relative paths mean nothing in
// the container's working directory. Job.Files and Job.Archives keep their sources and aliases as
// written.
func (f *File) StagedJob() (*Job, error) { return f.job(true) }

// stagedSpecs keeps shipped files as written: source and alias (after '#', else the base name).
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
