package flink

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/yarn-am/yarn-am/jobfile"
)

// stage adds what a [flink] job's containers need to the job's AM and TaskExecutor files: the
// Flink home as the archive homeAlias (packed once per content by HomeArchive, then
// staged through the per-user cache like any archive, docs/job-file.md#visibility-and-the-cache; or
// flink.provided, localised from HDFS as it is), java-home's JDK the same way (stageJavaHome) and
// the job's jar under its base name. Progress goes
// to out. A job without [flink] is left as it is.
func stage(job *jobfile.Job, out io.Writer) error {
	f := specOf(job)
	if f == nil {
		return nil
	}
	for _, fs := range [][]jobfile.FileSpec{job.AM.Files, job.AM.Archives, job.TaskExecutor.Files, job.TaskExecutor.Archives} {
		for _, s := range fs {
			if s.Alias == homeAlias || (f.Jar != "" && s.Alias == filepath.Base(f.Jar)) ||
				((f.JavaHome != "" || f.JavaProvided != "") && s.Alias == javaHomeAlias) {
				return fmt.Errorf("[flink]: the alias %q of %s is taken by the Flink home, the JDK of java-home or the job's jar in a [flink] job; rename it", s.Alias, s.Source)
			}
		}
	}
	home := f.Provided
	if home == "" {
		var err error
		if home, err = HomeArchive(f.Home, flinkArchiveCache(), out); err != nil {
			return err
		}
	}
	stageCDS(job, f, home)
	spec := jobfile.FileSpec{Source: home, Alias: homeAlias}
	job.AM.Archives = append(job.AM.Archives, spec)
	job.TaskExecutor.Archives = append(job.TaskExecutor.Archives, spec)
	if err := stageJavaHome(job, f, out); err != nil {
		return err
	}
	if f.Jar != "" {
		jar := jobfile.FileSpec{Source: f.Jar, Alias: filepath.Base(f.Jar)}
		job.AM.Files = append(job.AM.Files, jar)
		job.TaskExecutor.Files = append(job.TaskExecutor.Files, jar)
	}
	return nil
}

// flinkHomeParts are what a Flink process needs of a home (docs/flink.md#the-flink-distribution);
// Flink's scripts, examples and opt/ stay behind.
var flinkHomeParts = []string{"lib", "plugins", "conf", filepath.Join("bin", "bash-java-utils.jar")}

// HomeArchive packs the Flink home into an uncompressed tar (its jars are compressed already)
// in cacheDir and returns its path. The archive is named by the SHA-256 of the home's listing (the
// home's absolute path, then each file's path, size, modification time to the nanosecond and mode)
// and written with fixed owners, so the same home
// gives the same bytes: a later submit reuses the file here, and the staging cache, keyed by content,
// uploads it once. An archive is reused by name only in a private cacheDir (privateArchiveDir); in
// any other, the home is packed afresh into a new private temporary directory, and said so. The
// cache keeps the flinkArchivesKept most recently used archives.
func HomeArchive(home, cacheDir string, out io.Writer) (string, error) {
	return packDir(flinkHomePacking, home, cacheDir, out)
}

var flinkHomePacking = packing{key: "flink.home", noun: "the Flink home", prefix: "flink-home-", parts: flinkHomeParts}
