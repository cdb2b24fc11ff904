package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/resources"
)

// stagedSiteFiles are copied from HADOOP_CONF_DIR when present; core-site.xml and yarn-site.xml are
// required, because the AM needs them to find the RM and HDFS.
var stagedSiteFiles = []struct {
	name     string
	required bool
}{{hadoop.CoreSiteFile, true}, {hadoop.YARNSiteFile, true}, {hadoop.HDFSSiteFile, false}}

// FileSystem is the part of HDFS staging needs. HDFS (colinmarc/hdfs) implements it in hdfs.go; tests
// use a directory on the local disk.
type FileSystem interface {
	MkdirAll(dir string, perm os.FileMode) error
	// Create creates a new file (an existing one is an error) with the given permissions.
	Create(name string, perm os.FileMode) (io.WriteCloser, error)
	Stat(name string) (os.FileInfo, error)
	RemoveAll(name string) error
	// Rename moves a file, replacing newpath; the cache writes an entry under a temporary name first.
	Rename(oldpath, newpath string) error
	// Open opens a file for reading; the cache reads an entry back before reusing it (entryHolds).
	Open(name string) (io.ReadCloser, error)
	ReadDir(dir string) ([]os.FileInfo, error)
}

// StagingDir returns the staging directory of an application: /user/<user>/.yarn-am/<app id>.
func StagingDir(user, appID string) string {
	return path.Join("/user", user, ".yarn-am", appID)
}

// StageRequest says what to stage for one application.
type StageRequest struct {
	AppID        string
	User         string
	DefaultFS    string // fs.defaultFS, e.g. hdfs://127.0.0.1:9000; staged URLs start with it
	Binary       string // the yarn-am binary to ship (os.Executable() of the client)
	Job          *jobfile.Job
	ResourceConf string // local flink-conf.yaml to ship as flink-conf.yaml; "" = none
	ConfDir      string // HADOOP_CONF_DIR: core-site.xml, yarn-site.xml (+ hdfs-site.xml)
	// Resources is the job's external-resource configuration; custom discovery programs named in it are
	// shipped and replaced by their localised copy through Staged.Defines.
	Resources *resources.Config
	// Progress, if set, is called after each upload.
	Progress func(Upload)
}

// Upload is one file copied to the staging directory or the cache, or found in the cache.
type Upload struct {
	Local  string
	Remote string // path in the staging directory, or in the cache (CacheDir)
	Size   int64
	// Reused: the file was already in the cache and nothing was copied.
	Reused bool
	// Replaced: the cache held an entry of this name and size whose content did not hash to its name
	// (rewritten by someone with the user's HDFS token, or damaged); this copy replaced it.
	Replaced bool
}

// Staged is the result of staging: where things went and the local resources of the AM and of the
// TaskExecutors.
type Staged struct {
	Dir      string // path of the staging directory, e.g. /user/alice/.yarn-am/application_1_0001
	DirURI   string // the same as a full URI, e.g. hdfs://nn:8020/user/alice/.yarn-am/application_1_0001
	AM       []contract.LocalResource
	Manifest []contract.LocalResource // what manifest.json lists: every local resource a TaskExecutor needs
	// Defines are -D key=value overrides that point configuration at localised copies (custom discovery
	// scripts); pass them to the AM, which passes them on to `yarn-am launch`.
	Defines []string
	// Uploaded are the files copied (Reused false) and those found in the cache (Reused true).
	Uploaded []Upload
}

// UploadedBytes is what staging copied and what it found in the cache, each remote file counted once:
// a file the AM and the TaskExecutors share (a Flink home) is staged for both, and the second finds
// the first's copy, which is not a second file reused.
func (s *Staged) UploadedBytes() (copied, reused int64) {
	uploaded := map[string]bool{}
	for _, u := range s.Uploaded {
		if !u.Reused {
			uploaded[u.Remote] = true
		}
	}
	counted := map[string]bool{}
	for _, u := range s.Uploaded {
		if counted[u.Remote] || u.Reused && uploaded[u.Remote] {
			continue
		}
		counted[u.Remote] = true
		if u.Reused {
			reused += u.Size
		} else {
			copied += u.Size
		}
	}
	return copied, reused
}

// reserved reports whether an alias is a name yarn-am or YARN itself puts in a container's working
// directory (jobfile.ReservedAlias, which LoadJob checks first); user files must not take them.
func reserved(alias string) bool { return jobfile.ReservedAlias(alias) != "" }

// discoveryPathParams are the parameters that name a discovery program on the client's disk: the GPU
// driver's discovery-script.path and the exec driver's path.
var discoveryPathParams = []string{"discovery-script.path", resources.ExecParamPath}

// Stage copies everything an application needs into its staging directory and returns the local
// resources. On error, whatever was created is left for the caller to remove (RemoveStaging), so the
// caller decides when a half-staged directory goes.
func Stage(ctx context.Context, fsys FileSystem, req StageRequest) (*Staged, error) {
	if req.AppID == "" || req.User == "" || req.Job == nil {
		return nil, errors.New("staging: application id, user and job are required")
	}
	base := strings.TrimSuffix(req.DefaultFS, "/")
	if !strings.Contains(base, "://") {
		return nil, fmt.Errorf("staging: fs.defaultFS = %q is not a URI like hdfs://namenode:8020", req.DefaultFS)
	}
	st := &Staged{Dir: StagingDir(req.User, req.AppID)}
	st.DirURI = base + st.Dir

	home := path.Join("/user", req.User)
	if _, err := fsys.Stat(home); errors.Is(err, os.ErrNotExist) {
		if err := fsys.MkdirAll(home, 0o755); err != nil {
			return nil, fmt.Errorf("staging: creating the home directory %s: %w", home, err)
		}
	}
	if err := fsys.MkdirAll(st.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("staging: creating %s: %w", st.Dir, err)
	}

	// cached stages a local file through the per-user cache (stageCached) and returns its local
	// resource; shown is what the progress lines call it.
	cached := func(local, shown, alias, typ, vis string) (contract.LocalResource, error) {
		if err := ctx.Err(); err != nil {
			return contract.LocalResource{}, err
		}
		u, err := stageCached(fsys, req.User, local)
		if err != nil {
			return contract.LocalResource{}, fmt.Errorf("staging %s to the cache %s: %w", shown, CacheDir(req.User), err)
		}
		markCacheEntryUsed(fsys, path.Dir(u.Remote), req.AppID)
		u.Local = shown
		st.Uploaded = append(st.Uploaded, u)
		if req.Progress != nil {
			req.Progress(u)
		}
		r, err := statResource(fsys, base, u.Remote, alias, typ)
		r.Visibility = visibility(vis)
		return r, err
	}

	// The AM's own files. The binary (14-21 MiB) goes through the per-user cache like the user's
	// files: the same binary is uploaded once and every later submit finds it there (read back and
	// hashed, stageCached), and with private visibility a NodeManager localises it once for all of the
	// user's applications (TestStageReusesTheBinaryFromTheCache). So do the job file, the site files
	// and the manifest: a submit of the same job gives the NodeManagers nothing new to localise, and
	// a container whose every resource is in its NodeManager's cache starts without a localizer
	// (about 0.2 s less to the AM's first ask, docs/performance.md#the-ams-files-from-the-cache-2026-11-30;
	// TestStageSecondSubmitLocalisesNothingNew).
	bin, err := cached(req.Binary, req.Binary, contract.StagedBinary, contract.TypeFile, "")
	if err != nil {
		return nil, fmt.Errorf("the yarn-am binary: %w", err)
	}
	job, err := cached(req.Job.Path, req.Job.Path, contract.StagedJob, contract.TypeFile, "")
	if err != nil {
		return nil, err
	}
	st.AM = append(st.AM, bin, job)
	st.Manifest = append(st.Manifest, bin, job)
	if req.ResourceConf != "" {
		fc, err := cached(req.ResourceConf, req.ResourceConf, contract.StagedResourceConf, contract.TypeFile, "")
		if err != nil {
			return nil, err
		}
		st.AM = append(st.AM, fc)
		st.Manifest = append(st.Manifest, fc)
	}
	for _, sf := range stagedSiteFiles {
		local := filepath.Join(req.ConfDir, sf.name)
		if _, err := os.Stat(local); err != nil {
			if sf.required {
				return nil, fmt.Errorf("staging: %s not found in HADOOP_CONF_DIR=%s; the AM needs it to reach the cluster", sf.name, req.ConfDir)
			}
			continue
		}
		r, err := cached(local, local, sf.name, contract.TypeFile, "")
		if err != nil {
			return nil, err
		}
		st.AM = append(st.AM, r)
	}

	// The user's files and archives, the TaskExecutors' and the AM's: local ones through the cache.
	used := map[string]string{}
	te, amSpec := req.Job.TaskExecutor, req.Job.AM
	for _, group := range []struct {
		key   string
		specs []jobfile.FileSpec
		typ   string
		vis   string
		am    bool
	}{
		{"taskexecutor.files", te.Files, contract.TypeFile, te.Visibility, false},
		{"taskexecutor.archives", te.Archives, contract.TypeArchive, te.Visibility, false},
		{"am.files", amSpec.Files, contract.TypeFile, amSpec.Visibility, true},
		{"am.archives", amSpec.Archives, contract.TypeArchive, amSpec.Visibility, true},
	} {
		for _, f := range group.specs {
			if reserved(f.Alias) {
				return nil, fmt.Errorf("%s: %q would be localised as %q, a name yarn-am uses itself; give it another alias with '#name'", group.key, f.Source, f.Alias)
			}
			used[f.Alias] = f.Source
			var r contract.LocalResource
			if f.IsRemote() {
				r, err = remoteResource(fsys, base, f.Source, f.Alias, group.typ)
				r.Visibility = visibility(group.vis)
				if err == nil && r.Visibility == contract.VisibilityPublic {
					err = checkPublic(fsys, f.Source)
				}
			} else {
				r, err = cached(f.Source, f.Source, f.Alias, group.typ, group.vis)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", group.key, err)
			}
			if group.am {
				st.AM = append(st.AM, r)
			} else {
				st.Manifest = append(st.Manifest, r)
			}
		}
	}

	// Custom discovery programs: shipped, and the configuration pointed at the localised copy.
	if req.Resources != nil {
		for _, res := range req.Resources.Resources {
			for _, p := range discoveryPathParams {
				if p == resources.ExecParamPath && res.Driver != resources.ExecDriverName {
					continue
				}
				local, ok := res.Params[p]
				local = strings.TrimSpace(local)
				if !ok || local == "" {
					continue
				}
				key := resources.KeyPrefix + res.Name + ".param." + p
				if _, err := os.Stat(local); err != nil {
					return nil, fmt.Errorf("%s = %q: the discovery program must exist on this machine, it is shipped with the job: %w", key, local, err)
				}
				alias := filepath.Base(local)
				if _, dup := used[alias]; dup || reserved(alias) {
					alias = res.Name + "-" + alias
				}
				used[alias] = local
				r, err := cached(local, local, alias, contract.TypeFile, "")
				if err != nil {
					return nil, fmt.Errorf("%s: %w", key, err)
				}
				st.AM = append(st.AM, r)
				st.Manifest = append(st.Manifest, r)
				st.Defines = append(st.Defines, key+"=./"+alias)
			}
		}
	}

	// manifest.json last: it lists everything above.
	data, err := json.MarshalIndent(st.Manifest, "", "  ")
	if err != nil {
		return nil, err
	}
	// Under its own name in a directory of its own: the cache entry is named after the file, so the
	// same manifest is the same entry.
	tmpDir, err := os.MkdirTemp("", "yarn-am-manifest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, contract.StagedManifest)
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return nil, err
	}
	man, err := cached(tmp, "(generated)", contract.StagedManifest, contract.TypeFile, "")
	if err != nil {
		return nil, err
	}
	st.AM = append(st.AM, man)
	return st, nil
}

// RemoveStaging deletes an application's staging directory; a directory that is already gone is not
// an error.
func RemoveStaging(fsys FileSystem, user, appID string) error {
	dir := StagingDir(user, appID)
	if err := fsys.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing staging directory %s: %w", dir, err)
	}
	return nil
}

// copyToFS copies a local file to remote, keeping its permission bits (so executables stay
// executable after localisation). It returns the number of bytes copied.
func copyToFS(fsys FileSystem, local, remote string) (int64, error) {
	f, err := os.Open(local)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if fi.IsDir() {
		return 0, fmt.Errorf("%s is a directory; ship a directory as an archive (tar.gz or zip) in taskexecutor.archives", local)
	}
	if err := fsys.MkdirAll(path.Dir(remote), 0o700); err != nil {
		return 0, err
	}
	w, err := fsys.Create(remote, fi.Mode().Perm()|0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, f)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func statResource(fsys FileSystem, base, remote, alias, typ string) (contract.LocalResource, error) {
	fi, err := fsys.Stat(remote)
	if err != nil {
		return contract.LocalResource{}, fmt.Errorf("stat %s: %w", remote, err)
	}
	return contract.LocalResource{Alias: alias, URL: base + remote, Size: fi.Size(), Timestamp: fi.ModTime().UnixMilli(),
		Type: typ, Visibility: contract.VisibilityApplication}, nil
}

// remoteResource describes a file that is already on HDFS, with its real size and modification time.
// A URI without a NameNode (hdfs:///path, as Hadoop's shell takes it) is qualified with base
// (fs.defaultFS): the NodeManager refuses one without a host ("Incomplete HDFS URI").
func remoteResource(fsys FileSystem, base, uri, alias, typ string) (contract.LocalResource, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Path == "" {
		return contract.LocalResource{}, fmt.Errorf("%q is not a URI like hdfs://namenode:8020/path", uri)
	}
	if u.Host == "" {
		if b, berr := url.Parse(base); berr == nil && b.Scheme == u.Scheme {
			uri = base + u.Path
		}
	}
	fi, err := fsys.Stat(u.Path)
	if err != nil {
		return contract.LocalResource{}, fmt.Errorf("%s: %w", uri, err)
	}
	if fi.IsDir() && typ == contract.TypeFile {
		return contract.LocalResource{}, fmt.Errorf("%s is a directory; YARN localises files and archives", uri)
	}
	return contract.LocalResource{Alias: alias, URL: uri, Size: fi.Size(), Timestamp: fi.ModTime().UnixMilli(),
		Type: typ, Visibility: contract.VisibilityApplication}, nil
}
