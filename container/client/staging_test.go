package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/resources"
)

// localFS is a FileSystem rooted in a local directory, standing in for HDFS.
type localFS struct{ root string }

func (l localFS) p(name string) string { return filepath.Join(l.root, filepath.FromSlash(name)) }

func (l localFS) MkdirAll(dir string, perm os.FileMode) error {
	return os.MkdirAll(l.p(dir), perm|0o700)
}

func (l localFS) Create(name string, perm os.FileMode) (io.WriteCloser, error) {
	return os.OpenFile(l.p(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

func (l localFS) Stat(name string) (os.FileInfo, error) { return os.Stat(l.p(name)) }

func (l localFS) RemoveAll(name string) error { return os.RemoveAll(l.p(name)) }

func (l localFS) Rename(oldpath, newpath string) error { return os.Rename(l.p(oldpath), l.p(newpath)) }

func (l localFS) Open(name string) (io.ReadCloser, error) { return os.Open(l.p(name)) }

func (l localFS) ReadDir(dir string) ([]os.FileInfo, error) {
	es, err := os.ReadDir(l.p(dir))
	if err != nil {
		return nil, err
	}
	out := make([]os.FileInfo, 0, len(es))
	for _, e := range es {
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	return out, nil
}

type stageFixture struct {
	dir, confDir, binary string
	fs                   localFS
	job                  *jobfile.Job
}

func newStageFixture(t *testing.T, jobBody string) *stageFixture {
	t.Helper()
	f := &stageFixture{dir: t.TempDir(), fs: localFS{root: t.TempDir()}}
	f.confDir = filepath.Join(f.dir, "conf")
	require.NoError(t, os.MkdirAll(f.confDir, 0o755))
	for _, n := range []string{"core-site.xml", "yarn-site.xml"} {
		require.NoError(t, os.WriteFile(filepath.Join(f.confDir, n), []byte("<configuration/>\n"), 0o644))
	}
	f.binary = filepath.Join(f.dir, "yarn-am-binary")
	require.NoError(t, os.WriteFile(f.binary, []byte("\x7fELF fake binary"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "worker"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "data.tgz"), []byte("not really a tarball"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "my-gpus.sh"), []byte("#!/bin/sh\necho 0\n"), 0o755))
	p := filepath.Join(f.dir, "job.toml")
	require.NoError(t, os.WriteFile(p, []byte(jobBody), 0o644))
	job, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	f.job = job
	return f
}

func (f *stageFixture) request(res *resources.Config) StageRequest {
	return StageRequest{AppID: "application_1700000000000_0007", User: "alice", DefaultFS: "hdfs://nn.example:8020",
		Binary: f.binary, Job: f.job, ConfDir: f.confDir, Resources: res}
}

func byAlias(rs []contract.LocalResource) map[string]contract.LocalResource {
	m := map[string]contract.LocalResource{}
	for _, r := range rs {
		m[r.Alias] = r
	}
	return m
}

const stageJob = `
name = "stage-test"
[taskexecutor]
command = "./worker"
files = ["worker", "hdfs://nn.example:8020/shared/model.bin#model"]
archives = ["data.tgz#data"]
`

func TestStageShipsEverythingAndWritesTheManifest(t *testing.T) {
	f := newStageFixture(t, stageJob)
	// The remote file of the job exists on the "cluster" with its own size and mtime.
	require.NoError(t, os.MkdirAll(f.fs.p("/shared"), 0o755))
	require.NoError(t, os.WriteFile(f.fs.p("/shared/model.bin"), []byte("0123456789"), 0o644))
	mtime := time.UnixMilli(1700000000123)
	require.NoError(t, os.Chtimes(f.fs.p("/shared/model.bin"), mtime, mtime))

	var progress []string
	req := f.request(nil)
	req.Progress = func(u Upload) { progress = append(progress, u.Remote) }
	st, err := Stage(context.Background(), f.fs, req)
	require.NoError(t, err)

	dir := "/user/alice/.yarn-am/application_1700000000000_0007"
	assert.Equal(t, dir, st.Dir)
	assert.Equal(t, "hdfs://nn.example:8020"+dir, st.DirURI)

	am := byAlias(st.AM)
	// yarn-am's own files are entries of the per-user cache, PRIVATE, named by their content
	// (TestStageSecondSubmitLocalisesNothingNew).
	for _, a := range []string{"job.toml", "core-site.xml", "yarn-site.xml", "manifest.json"} {
		require.Contains(t, am, a)
		assert.Regexp(t, `^hdfs://nn.example:8020/user/alice/.yarn-am/cache/[0-9a-f]{64}-[0-7]{3}/`+regexp.QuoteMeta(a)+`$`, am[a].URL)
		assert.Equal(t, "FILE", am[a].Type)
		assert.Equal(t, "PRIVATE", am[a].Visibility)
	}
	assert.NotContains(t, am, "hdfs-site.xml", "hdfs-site.xml is optional and absent here")
	assert.NotContains(t, am, "flink-conf.yaml")

	// The binary goes through the per-user cache (TestStageReusesTheBinaryFromTheCache), PRIVATE.
	assert.Regexp(t, `^hdfs://nn.example:8020/user/alice/.yarn-am/cache/[0-9a-f]{64}-755/yarn-am-binary$`, am["yarn-am"].URL)
	assert.Equal(t, "FILE", am["yarn-am"].Type)
	assert.Equal(t, "PRIVATE", am["yarn-am"].Visibility)
	// Sizes and timestamps are what the filesystem reports for the staged copy.
	fi, err := f.fs.Stat(strings.TrimPrefix(am["yarn-am"].URL, "hdfs://nn.example:8020"))
	require.NoError(t, err)
	assert.Equal(t, fi.Size(), am["yarn-am"].Size)
	assert.Equal(t, fi.ModTime().UnixMilli(), am["yarn-am"].Timestamp)
	assert.NotZero(t, fi.Mode().Perm()&0o100, "the binary stays executable")

	// The job file is shipped verbatim.
	staged, err := os.ReadFile(f.fs.p(strings.TrimPrefix(am["job.toml"].URL, "hdfs://nn.example:8020")))
	require.NoError(t, err)
	assert.Equal(t, stageJob, string(staged))

	// manifest.json lists what TaskExecutors need, with remote entries' real size and mtime.
	data, err := os.ReadFile(f.fs.p(strings.TrimPrefix(am["manifest.json"].URL, "hdfs://nn.example:8020")))
	require.NoError(t, err)
	man, err := contract.ParseManifest(data)
	require.NoError(t, err)
	assert.Equal(t, st.Manifest, man)
	m := byAlias(man)
	assert.Contains(t, m, "yarn-am")
	assert.Contains(t, m, "job.toml")
	// Local user files go through the cache, content-addressed, PRIVATE by default.
	assert.Regexp(t, `^hdfs://nn.example:8020/user/alice/.yarn-am/cache/[0-9a-f]{64}-755/worker$`, m["worker"].URL)
	assert.Equal(t, "FILE", m["worker"].Type)
	assert.Equal(t, "PRIVATE", m["worker"].Visibility)
	assert.Equal(t, contract.LocalResource{Alias: "model", URL: "hdfs://nn.example:8020/shared/model.bin", Size: 10,
		Timestamp: 1700000000123, Type: "FILE", Visibility: "PRIVATE"}, m["model"])
	assert.Equal(t, "ARCHIVE", m["data"].Type)
	assert.NotContains(t, m, "core-site.xml", "TaskExecutors do not get the site files")

	// Raw JSON keys are the contract's.
	var raw []map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	assert.ElementsMatch(t, []string{"alias", "url", "size", "timestamp", "type", "visibility"}, keysOf(raw[0]))

	assert.Len(t, progress, len(st.Uploaded))
	assert.Equal(t, strings.TrimPrefix(am["manifest.json"].URL, "hdfs://nn.example:8020"), progress[len(progress)-1], "the manifest goes last")
	assert.Empty(t, st.Defines)
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestStageShipsCustomDiscoveryScriptsAndPointsConfigAtThem(t *testing.T) {
	f := newStageFixture(t, "[taskexecutor]\ncommand = \"./w\"\n")
	script := filepath.Join(f.dir, "my-gpus.sh")
	res := &resources.Config{Resources: []resources.Resource{
		{Name: "gpu", Amount: 1, YarnKey: "yarn.io/gpu", Driver: "gpu", Params: map[string]string{"discovery-script.path": script}},
		{Name: "fpga", Amount: 1, YarnKey: "yarn.io/fpga", Driver: "exec", Params: map[string]string{"path": script}},
	}}
	st, err := Stage(context.Background(), f.fs, f.request(res))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"external-resource.gpu.param.discovery-script.path=./my-gpus.sh",
		"external-resource.fpga.param.path=./fpga-my-gpus.sh",
	}, st.Defines)
	m := byAlias(st.Manifest)
	assert.Contains(t, m, "my-gpus.sh")
	assert.Contains(t, m, "fpga-my-gpus.sh")
	assert.Contains(t, byAlias(st.AM), "my-gpus.sh", "the AM may validate the drivers, so it gets the scripts too")
	fi, err := f.fs.Stat(strings.TrimPrefix(m["my-gpus.sh"].URL, "hdfs://nn.example:8020"))
	require.NoError(t, err)
	assert.Equal(t, "PRIVATE", m["my-gpus.sh"].Visibility)
	assert.NotZero(t, fi.Mode().Perm()&0o100, "scripts stay executable")
}

func TestStageErrors(t *testing.T) {
	t.Run("missing discovery script names the key", func(t *testing.T) {
		f := newStageFixture(t, "[taskexecutor]\ncommand = \"./w\"\n")
		res := &resources.Config{Resources: []resources.Resource{{Name: "gpu", Amount: 1, YarnKey: "yarn.io/gpu", Driver: "gpu",
			Params: map[string]string{"discovery-script.path": "/nonexistent/disco.sh"}}}}
		_, err := Stage(context.Background(), f.fs, f.request(res))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `external-resource.gpu.param.discovery-script.path = "/nonexistent/disco.sh"`)
	})
	t.Run("reserved alias", func(t *testing.T) {
		// jobfile.LoadJob refuses the alias already; Stage must not rely on it.
		f := newStageFixture(t, "[taskexecutor]\ncommand = \"./w\"\nfiles = [\"worker#w2\"]\n")
		f.job.TaskExecutor.Files[0].Alias = "job.toml"
		_, err := Stage(context.Background(), f.fs, f.request(nil))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `taskexecutor.files: "`)
		assert.Contains(t, err.Error(), `"job.toml", a name yarn-am uses itself`)
	})
	t.Run("missing yarn-site.xml", func(t *testing.T) {
		f := newStageFixture(t, "[taskexecutor]\ncommand = \"./w\"\n")
		require.NoError(t, os.Remove(filepath.Join(f.confDir, "yarn-site.xml")))
		_, err := Stage(context.Background(), f.fs, f.request(nil))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "yarn-site.xml not found in HADOOP_CONF_DIR="+f.confDir)
	})
	t.Run("missing remote file", func(t *testing.T) {
		f := newStageFixture(t, "[taskexecutor]\ncommand = \"./w\"\nfiles = [\"hdfs://nn.example:8020/nope\"]\n")
		_, err := Stage(context.Background(), f.fs, f.request(nil))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "hdfs://nn.example:8020/nope")
		assert.True(t, errors.Is(err, os.ErrNotExist))
	})
	t.Run("bad defaultFS", func(t *testing.T) {
		f := newStageFixture(t, "[taskexecutor]\ncommand = \"./w\"\n")
		req := f.request(nil)
		req.DefaultFS = "file:"
		_, err := Stage(context.Background(), f.fs, req)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `fs.defaultFS = "file:"`)
	})
	t.Run("cancelled", func(t *testing.T) {
		f := newStageFixture(t, "[taskexecutor]\ncommand = \"./w\"\n")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Stage(ctx, f.fs, f.request(nil))
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestStageFlinkConfAndHDFSSiteAndRemove(t *testing.T) {
	f := newStageFixture(t, "[taskexecutor]\ncommand = \"./w\"\n")
	require.NoError(t, os.WriteFile(filepath.Join(f.confDir, "hdfs-site.xml"), []byte("<configuration/>"), 0o644))
	fc := filepath.Join(f.dir, "my-flink.yaml")
	require.NoError(t, os.WriteFile(fc, []byte("external-resources: none\n"), 0o644))
	req := f.request(nil)
	req.ResourceConf = fc
	st, err := Stage(context.Background(), f.fs, req)
	require.NoError(t, err)
	assert.Contains(t, byAlias(st.AM), "flink-conf.yaml")
	assert.Contains(t, byAlias(st.Manifest), "flink-conf.yaml")
	assert.Contains(t, byAlias(st.AM), "hdfs-site.xml")

	require.NoError(t, RemoveStaging(f.fs, "alice", "application_1700000000000_0007"))
	_, err = f.fs.Stat(st.Dir)
	assert.True(t, errors.Is(err, os.ErrNotExist))
	require.NoError(t, RemoveStaging(f.fs, "alice", "application_1700000000000_0007"), "removing twice is fine")
}

// hdfs:///path (no NameNode, as Hadoop's shell takes it, and as docs/flink.md writes [flink]
// provided) is qualified with fs.defaultFS: the NodeManager refuses a URI without a host ("Incomplete
// HDFS URI, no host"), which failed a [flink] job's localisation.
func TestStageQualifiesRemoteURIsWithoutANameNode(t *testing.T) {
	f := newStageFixture(t, "[taskexecutor]\ncommand = \"./w\"\nfiles = [\"hdfs:///shared/model.bin#model\"]\narchives = [\"hdfs:///flink/flink.tar#flink\"]\n")
	require.NoError(t, os.MkdirAll(f.fs.p("/shared"), 0o755))
	require.NoError(t, os.MkdirAll(f.fs.p("/flink"), 0o755))
	require.NoError(t, os.WriteFile(f.fs.p("/shared/model.bin"), []byte("0123456789"), 0o644))
	require.NoError(t, os.WriteFile(f.fs.p("/flink/flink.tar"), []byte("tar"), 0o644))
	st, err := Stage(context.Background(), f.fs, f.request(nil))
	require.NoError(t, err)
	m := byAlias(st.Manifest)
	assert.Equal(t, "hdfs://nn.example:8020/shared/model.bin", m["model"].URL)
	assert.Equal(t, "hdfs://nn.example:8020/flink/flink.tar", m["flink"].URL)
}

// A file staged for the AM and for the TaskExecutors (a Flink home) is one upload, not an upload and
// a reuse: the summary counts each remote file once.
func TestUploadedBytesCountsEachFileOnce(t *testing.T) {
	st := &Staged{Uploaded: []Upload{
		{Remote: "/c/home.tar", Size: 200, Reused: false},
		{Remote: "/c/home.tar", Size: 200, Reused: true},
		{Remote: "/c/jar", Size: 10, Reused: true},
		{Remote: "/c/jar", Size: 10, Reused: true},
		{Remote: "/s/job.toml", Size: 1},
	}}
	copied, reused := st.UploadedBytes()
	assert.Equal(t, int64(201), copied)
	assert.Equal(t, int64(10), reused)
}

// The yarn-am binary is staged through the per-user cache: a second submit of the same binary copies
// nothing for it, and both applications name the same entry (the NodeManagers localise it once).
func TestStageReusesTheBinaryFromTheCache(t *testing.T) {
	f := newStageFixture(t, "name = \"bin\"\n[taskexecutor]\ncommand = \"true\"\n")
	req := f.request(nil)
	st1, err := Stage(context.Background(), f.fs, req)
	require.NoError(t, err)
	req.AppID = "application_1700000000000_0008"
	var shown []Upload
	req.Progress = func(u Upload) { shown = append(shown, u) }
	st2, err := Stage(context.Background(), f.fs, req)
	require.NoError(t, err)

	bin := byAlias(st1.AM)["yarn-am"]
	assert.Equal(t, bin, byAlias(st2.AM)["yarn-am"], "the second application names the first one's entry")
	assert.Equal(t, bin, byAlias(st2.Manifest)["yarn-am"], "the TaskExecutors get the same entry")
	var binUploads []Upload
	for _, u := range shown {
		if u.Local == f.binary {
			binUploads = append(binUploads, u)
		}
	}
	require.Len(t, binUploads, 1)
	assert.True(t, binUploads[0].Reused, "the second submit copies nothing for the binary")
	size := int64(len("\x7fELF fake binary"))
	copied1, reused1 := st1.UploadedBytes()
	copied2, reused2 := st2.UploadedBytes()
	assert.Zero(t, reused1)
	assert.Equal(t, copied1, reused2, "the binary's bytes are reused, and so are the job file's, the site files' and the manifest's")
	assert.Zero(t, copied2, "the second submit of the same job copies nothing")
	assert.Greater(t, copied1, size)
	_, err = f.fs.Stat(st2.Dir + "/yarn-am")
	assert.ErrorIs(t, err, os.ErrNotExist, "no copy in the staging directory")
}
