package flink

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/jobfile"
)

// stage adds what a [flink] job's containers need to the job's AM and TaskExecutor files: the
// Flink home as the archive HomeAlias (packed once per content by HomeArchive, then
// staged through the per-user cache like any archive, docs/job-file.md#visibility-and-the-cache; or
// flink.provided, localised from HDFS as it is) and the job's jar under its base name. Progress goes
// to out. A job without [flink] is left as it is.
func stage(job *jobfile.Job, out io.Writer) error {
	f := specOf(job)
	if f == nil {
		return nil
	}
	for _, fs := range [][]jobfile.FileSpec{job.AM.Files, job.AM.Archives, job.TaskExecutor.Files, job.TaskExecutor.Archives} {
		for _, s := range fs {
			if s.Alias == HomeAlias || (f.Jar != "" && s.Alias == filepath.Base(f.Jar)) {
				return fmt.Errorf("[flink]: the alias %q of %s is taken by the Flink home or the job's jar in a [flink] job; rename it", s.Alias, s.Source)
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
	spec := jobfile.FileSpec{Source: home, Alias: HomeAlias}
	job.AM.Archives = append(job.AM.Archives, spec)
	job.TaskExecutor.Archives = append(job.TaskExecutor.Archives, spec)
	if f.Jar != "" {
		jar := jobfile.FileSpec{Source: f.Jar, Alias: filepath.Base(f.Jar)}
		job.AM.Files = append(job.AM.Files, jar)
		job.TaskExecutor.Files = append(job.TaskExecutor.Files, jar)
	}
	return nil
}

// flinkArchiveCache is where packed Flink homes are kept on the client: $YARN_AM_CACHE, else the
// user's cache directory, under yarn-am/flink-archives.
func flinkArchiveCache() string {
	if d := os.Getenv("YARN_AM_CACHE"); d != "" {
		return filepath.Join(d, "flink-archives")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, contract.ApplicationTag, "flink-archives")
}

// flinkHomeParts are what a Flink process needs of a home (docs/flink.md#the-flink-distribution);
// Flink's scripts, examples and opt/ stay behind.
var flinkHomeParts = []string{"lib", "plugins", "conf", filepath.Join("bin", "bash-java-utils.jar")}

// HomeArchive packs the Flink home into an uncompressed tar (its jars are compressed already)
// in cacheDir and returns its path. The archive is named by the SHA-256 of the home's listing (each
// file's path, size, modification time and mode) and written with fixed owners, so the same home
// gives the same bytes: a later submit reuses the file here, and the staging cache, keyed by content,
// uploads it once.
func HomeArchive(home, cacheDir string, out io.Writer) (string, error) {
	type entry struct {
		rel string
		fi  fs.FileInfo
	}
	var entries []entry
	for _, part := range flinkHomeParts {
		root := filepath.Join(home, part)
		if _, err := os.Lstat(root); err != nil {
			if os.IsNotExist(err) && part == "conf" {
				continue // flink-dist's defaults apply (docs/flink.md#configuration)
			}
			return "", fmt.Errorf("flink.home %s: %w", home, err)
		}
		err := filepath.Walk(root, func(p string, fi fs.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if !fi.Mode().IsRegular() && !fi.IsDir() {
				return fmt.Errorf("%s is neither a file nor a directory; a Flink home to ship holds only those", p)
			}
			rel, _ := filepath.Rel(home, p)
			entries = append(entries, entry{filepath.ToSlash(rel), fi})
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("flink.home %s: %w", home, err)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rel < entries[j].rel })
	h := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%o\n", e.rel, e.fi.Size(), e.fi.ModTime().Unix(), e.fi.Mode())
	}
	name := filepath.Join(cacheDir, "flink-home-"+hex.EncodeToString(h.Sum(nil))[:32]+".tar")
	if _, err := os.Stat(name); err == nil {
		return name, nil
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return "", fmt.Errorf("the Flink archive cache %s: %w", cacheDir, err)
	}
	tmp, err := os.CreateTemp(cacheDir, ".flink-home-*.tar")
	if err != nil {
		return "", fmt.Errorf("the Flink archive cache %s: %w", cacheDir, err)
	}
	defer os.Remove(tmp.Name())
	fmt.Fprintf(out, "packing the Flink home %s into %s (once per content)\n", home, name)
	tw := tar.NewWriter(tmp)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.rel, Mode: int64(e.fi.Mode().Perm()), ModTime: e.fi.ModTime().Truncate(1e9), Format: tar.FormatPAX}
		if e.fi.IsDir() {
			hdr.Typeflag, hdr.Name = tar.TypeDir, e.rel+"/"
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, e.fi.Size()
		}
		if err := tw.WriteHeader(hdr); err != nil {
			tmp.Close()
			return "", err
		}
		if e.fi.IsDir() {
			continue
		}
		if err := copyFileInto(tw, filepath.Join(home, filepath.FromSlash(e.rel)), e.fi.Size()); err != nil {
			tmp.Close()
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return "", err
	}
	return name, nil
}

// copyFileInto copies exactly size bytes of path (its size when listed) into w.
func copyFileInto(w io.Writer, path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(w, io.LimitReader(f, size))
	if err == nil && n != size {
		err = fmt.Errorf("%s changed while it was packed (%d of %d bytes)", path, n, size)
	}
	if err != nil && !strings.Contains(err.Error(), path) {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return err
}
