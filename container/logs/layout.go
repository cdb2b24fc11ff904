package logs

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// Conf is the part of the Hadoop configuration the layout needs.
type Conf interface {
	Get(key string) (string, bool)
}

// Configuration keys and defaults of log aggregation (yarn-default.xml).
const (
	KeyAggregationEnable = "yarn.log-aggregation-enable"
	KeyRemoteAppLogDir   = "yarn.nodemanager.remote-app-log-dir"
	KeyRemoteDirSuffix   = "yarn.nodemanager.remote-app-log-dir-suffix"
	KeyFileFormats       = "yarn.log-aggregation.file-formats"
	KeyCompression       = "yarn.nodemanager.log-aggregation.compression-type"
	KeyStatusTimeout     = "yarn.log-aggregation-status.time-out.ms"
	KeyRetainSeconds     = "yarn.log-aggregation.retain-seconds"
	KeyLocalRetain       = "yarn.nodemanager.log.retain-seconds"

	defaultRemoteAppLogDir = "/tmp/logs"
	defaultRemoteDirSuffix = "logs"
)

// Format is an aggregated log file format (a log aggregation file controller).
type Format string

// The two file controllers Hadoop ships.
const (
	FormatTFile Format = "TFile"
	FormatIFile Format = "IFile" // LogAggregationIndexedFileController
)

// Candidate is a directory where a NodeManager may have written an application's aggregated logs.
type Candidate struct {
	Dir    string // a path on the default filesystem
	Format Format
	Layout string // which Hadoop versions write there, for messages
}

// AppDirs lists, most likely first, every directory where the NodeManagers of Hadoop 3.1 to 3.4 put
// the aggregated logs of app (application_<ts>_<nnnn>) owned by user, given the cluster's
// configuration:
//
//   - 3.3 and later (bucketed): <root>/<user>/bucket-<suffix>/<nnnn mod 10000, 4
//     digits>/<app>, where <suffix> is yarn.log-aggregation.<Format>.remote-app-log-dir-suffix, else
//     yarn.nodemanager.remote-app-log-dir-suffix ("logs") + "-tfile" or "-ifile";
//   - 3.3 and later, the "older" path they still read: <root>/<user>/<suffix>/<app>;
//   - 3.1 and 3.2: TFile <root>/<user>/<yarn.nodemanager.remote-app-log-dir-suffix>/<app>, IFile
//     <root>/<user>/<suffix>-ifile/<app> (the same as the older path above).
//
// <root> is yarn.log-aggregation.<Format>.remote-app-log-dir, else
// yarn.nodemanager.remote-app-log-dir ("/tmp/logs"). The formats of
// yarn.log-aggregation.file-formats come first, then the other one (the setting may have changed
// since the application ran).
func AppDirs(conf Conf, user, app string, appNum int32) []Candidate {
	get := func(k, def string) string {
		if v, ok := conf.Get(k); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		return def
	}
	var formats []Format
	for _, f := range strings.Split(get(KeyFileFormats, "TFile"), ",") {
		switch strings.TrimSpace(f) {
		case "TFile":
			formats = appendFormat(formats, FormatTFile)
		case "IFile":
			formats = appendFormat(formats, FormatIFile)
		}
	}
	formats = appendFormat(appendFormat(formats, FormatTFile), FormatIFile)
	baseSuffix := get(KeyRemoteDirSuffix, defaultRemoteDirSuffix)
	bucket := fmt.Sprintf("%04d", appNum%10000)
	var out []Candidate
	seen := map[string]bool{}
	add := func(c Candidate) {
		if !seen[c.Dir] {
			seen[c.Dir] = true
			out = append(out, c)
		}
	}
	for _, f := range formats {
		root := pathOf(get("yarn.log-aggregation."+string(f)+".remote-app-log-dir", get(KeyRemoteAppLogDir, defaultRemoteAppLogDir)))
		suffix := get("yarn.log-aggregation."+string(f)+".remote-app-log-dir-suffix", baseSuffix+"-"+strings.ToLower(string(f)))
		userDir := path.Join(root, user)
		add(Candidate{Dir: path.Join(userDir, "bucket-"+suffix, bucket, app), Format: f, Layout: "Hadoop 3.3+"})
		add(Candidate{Dir: path.Join(userDir, suffix, app), Format: f, Layout: "Hadoop 3.1-3.2 (" + string(f) + ") or older 3.3+ path"})
		if f == FormatTFile {
			add(Candidate{Dir: path.Join(userDir, baseSuffix, app), Format: f, Layout: "Hadoop 3.1-3.2"})
		}
	}
	return out
}

func appendFormat(fs []Format, f Format) []Format {
	for _, g := range fs {
		if g == f {
			return fs
		}
	}
	return append(fs, f)
}

// pathOf drops the scheme and authority of a qualified root (hdfs://nn:8020/tmp/logs): the logs are
// read from the default filesystem.
func pathOf(root string) string {
	if u, err := url.Parse(root); err == nil && u.Scheme != "" {
		return u.Path
	}
	return root
}

// NodeOfFile turns an aggregated file's name back into the node it came from: 127.0.0.2_44197 ->
// 127.0.0.2:44197 (Hadoop replaces the ':' of the node id by '_'; rolling aggregation appends
// _<millis>, which is kept apart).
func NodeOfFile(name string) string {
	parts := strings.Split(name, "_")
	if len(parts) >= 3 && len(parts[len(parts)-1]) >= 12 && isDigits(parts[len(parts)-1]) {
		parts = parts[:len(parts)-1]
	}
	if len(parts) >= 2 && isDigits(parts[len(parts)-1]) {
		return strings.Join(parts[:len(parts)-1], "_") + ":" + parts[len(parts)-1]
	}
	return name
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
