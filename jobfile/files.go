package jobfile

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/internal/text"
)

// openForRead opens a local file the job lists, to learn that staging can read it (a variable for
// TestUnreadableLocalFile: root reads a file of mode 000).
var openForRead = os.Open

// checkPort refuses a URI port that no server can listen on (hdfs://nn:99999).
func checkPort(p string) error {
	if p == "" {
		return nil
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %s is not a TCP port (1-65535)", text.Quote(p))
	}
	return nil
}

// CheckRemoteURI checks a Hadoop filesystem URI a job lists (files, archives, [flink] provided): an
// hdfs:// or viewfs:// URI that parses, with a TCP port if any, naming a path. The error starts with
// the URI, quoted and bounded, for the caller to prefix with its key.
func CheckRemoteURI(src string) error {
	if !strings.HasPrefix(src, "hdfs://") && !strings.HasPrefix(src, "viewfs://") {
		return errorf("%q: only local paths and hdfs:// (or viewfs://) URIs are supported", src)
	}
	u, err := url.Parse(src)
	if err != nil {
		return errorf("%q is not a URI: %v", src, errors.Unwrap(err))
	}
	if err := checkPort(u.Port()); err != nil {
		return errorf("%q: %v", src, err)
	}
	if strings.Trim(u.Path, "/") == "" {
		return errorf("%q has no path: name a file, e.g. hdfs://namenode:8020/user/alice/model.bin", src)
	}
	return nil
}

// This file reads taskexecutor.files and taskexecutor.archives: what is localised into each
// TaskExecutor's working directory, under which name.

// FileSpec is a file (or archive) to localise into each TaskExecutor's working directory. Source is a
// local path (made absolute) or an hdfs:// URI; Alias is the name in the container (the part after
// '#', or the source's base name).
type FileSpec struct {
	Source string
	Alias  string
}

// IsRemote reports whether the file is already on a Hadoop filesystem and is not staged.
func (f FileSpec) IsRemote() bool { return strings.Contains(f.Source, "://") }

// reservedAliases are the names in a container's working directory that yarn-am or YARN itself
// puts there; a user file localised under one would replace it.
var reservedAliases = map[string]string{
	contract.StagedBinary:                   "yarn-am's own binary",
	contract.StagedJob:                      "the staged job file",
	contract.StagedResourceConf:             "the staged flink-conf.yaml",
	contract.StagedManifest:                 "the staged list of local resources",
	contract.StagedKeytab:                   "the staged keytab",
	contract.InfoFileName:                   "the file the launcher writes the resource infos to",
	hadoop.CoreSiteFile:                     "the staged Hadoop configuration",
	hadoop.YARNSiteFile:                     "the staged Hadoop configuration",
	hadoop.HDFSSiteFile:                     "the staged Hadoop configuration",
	"launch_container.sh":                   "YARN's container launch script",
	"container_tokens":                      "YARN's file of the container's tokens",
	"default_container_executor.sh":         "YARN's container executor script",
	"default_container_executor_session.sh": "YARN's container executor script",
	"tmp":                                   "YARN's per-container temporary directory",
}

// ReservedAlias says why a name cannot be the alias of a user file, or "" when it can.
func ReservedAlias(a string) string { return reservedAliases[a] }

// archiveSuffixes are the names YARN's localiser unpacks (FSDownload); anything else is copied as is.
var archiveSuffixes = []string{".tar.gz", ".tgz", ".tar", ".zip", ".jar"}

func parseFileSpecs(key string, in []string, dir string, aliases map[string]string, archives bool, add func(string, ...any)) []FileSpec {
	table := key[:strings.LastIndex(key, ".")+1] // "taskexecutor." or "am.", for the hints
	var out []FileSpec
	for _, s := range in {
		src, alias, _ := strings.Cut(s, "#")
		if src == "" {
			add("%s: %q has no path before '#'", key, s)
			continue
		}
		if strings.Contains(alias, "#") {
			add("%s: %q: the alias %q contains '#'; give one '#' between the path and the alias (path#alias)", key, s, alias)
			continue
		}
		fs := FileSpec{Source: src, Alias: alias}
		if fs.IsRemote() {
			if err := CheckRemoteURI(src); err != nil {
				add("%s: %v", key, err)
				continue
			}
		} else {
			if !filepath.IsAbs(src) {
				fs.Source = filepath.Join(dir, src)
			}
			st, err := os.Stat(fs.Source)
			if err != nil {
				add("%s: %q does not exist (relative paths are resolved against the job file's directory %s)", key, src, dir)
				continue
			}
			if st.IsDir() {
				add("%s: %q is a directory; YARN localises files: pack it (tar czf %s.tar.gz ...) and list the archive under %sarchives", key, src, filepath.Base(fs.Source), table)
				continue
			}
			if kind := boundedread.NotRegular(st.Mode()); kind != "" {
				add("%s: %q is %s, not a regular file: staging would block on it or never end; list regular files and archives", key, src, kind)
				continue
			}
			// Staging would fail on it after the application id was taken and other files were uploaded.
			if f, err := openForRead(fs.Source); err != nil {
				add("%s: %q cannot be read (%v); make it readable by the user running yarn-am", key, src, errors.Unwrap(err))
				continue
			} else {
				f.Close()
			}
		}
		if archives && !hasArchiveSuffix(fs.Source) {
			add("%s: %q is not an archive YARN unpacks (names ending in %s); list plain files under %sfiles", key, src, strings.Join(archiveSuffixes, ", "), table)
			continue
		}
		if fs.Alias == "" {
			fs.Alias = path.Base(strings.TrimSuffix(fs.Source, "/"))
		}
		if strings.ContainsFunc(fs.Alias, unicode.IsControl) {
			add("%s: alias %s contains a control character (a newline, a tab, a NUL byte); give a plain file name with '#name'", key, text.Quote(fs.Alias))
			continue
		}
		if strings.Contains(fs.Alias, "/") || fs.Alias == "." || fs.Alias == ".." {
			add("%s: alias %q must be a plain file name", key, fs.Alias)
			continue
		}
		if why := ReservedAlias(fs.Alias); why != "" {
			add("%s: %q would be localised as %q, which is reserved (%s in the container's working directory); give it another name with '#name'", key, s, fs.Alias, why)
			continue
		}
		if prev, dup := aliases[fs.Alias]; dup {
			add("%s: %q and %q would both be localised as %q; give one an alias with '#name'", key, prev, s, fs.Alias)
			continue
		}
		aliases[fs.Alias] = s
		out = append(out, fs)
	}
	return out
}

func hasArchiveSuffix(p string) bool {
	l := strings.ToLower(p)
	for _, s := range archiveSuffixes {
		if strings.HasSuffix(l, s) {
			return true
		}
	}
	return false
}
