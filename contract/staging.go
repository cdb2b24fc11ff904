package contract

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
)

// Names of the files in a staging directory, which are also the aliases they are localised under.
const (
	StagedBinary = "yarn-am"
	StagedJob    = "job.toml"
	// StagedResourceConf is the external-resource configuration a job names (the job file's
	// flink-conf key, the commands' --flink-conf flag), whatever its framework: resources reads it in
	// the client, the AM and the launcher. Its keys are written as Flink's, and so is its name.
	StagedResourceConf = "flink-conf.yaml"
	// StagedManifest lists the TaskExecutors' local resources (a JSON list of LocalResource).
	StagedManifest = "manifest.json"
	// StagedKeytab is the keytab's name in the staging directory and in the AM container. It is an
	// APPLICATION local resource of the AM only (never of TaskExecutors), 0600 in HDFS, sealed under
	// the key in KeytabKeyAlias (SealKeytab), and goes with the staging directory.
	StagedKeytab = "yarn-am.keytab"
)

// Local resource types and visibilities as written in the manifest.
const (
	TypeFile              = "FILE"
	TypeArchive           = "ARCHIVE"
	VisibilityApplication = "APPLICATION"
	VisibilityPrivate     = "PRIVATE"
	VisibilityPublic      = "PUBLIC"
)

// LocalResource is one file YARN localises into a container's working directory, as listed in the
// manifest: the URL it is fetched from and the size and modification time (ms) HDFS reports, which
// the NodeManager checks before localising.
type LocalResource struct {
	Alias      string `json:"alias"`
	URL        string `json:"url"` // hdfs://host:port/path
	Size       int64  `json:"size"`
	Timestamp  int64  `json:"timestamp"` // HDFS modification time, ms
	Type       string `json:"type"`      // FILE (or empty) or ARCHIVE
	Visibility string `json:"visibility"`
}

// ResourceURL is a LocalResource's URL in the parts YARN's URLProto has.
type ResourceURL struct {
	Scheme, Host, Path string
	Port               int // 0 when the URL has none
}

// Parse checks the entry and returns its URL in parts. Every field is checked, so a bad entry is an
// error naming the alias, the field, the value and what would be valid, wherever it is used.
func (r LocalResource) Parse() (ResourceURL, error) {
	u, err := url.Parse(r.URL)
	if err != nil || u.Scheme == "" || u.Path == "" {
		return ResourceURL{}, fmt.Errorf("local resource %q: url %q is not a scheme://host:port/path URL", r.Alias, r.URL)
	}
	out := ResourceURL{Scheme: u.Scheme, Host: u.Hostname(), Path: u.Path}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return ResourceURL{}, fmt.Errorf("local resource %q: url %q has a bad port (want 1..65535)", r.Alias, r.URL)
		}
		out.Port = n
	}
	switch r.Type {
	case TypeFile, "", TypeArchive:
	default:
		return ResourceURL{}, fmt.Errorf("local resource %q: type %q; valid: %s, %s", r.Alias, r.Type, TypeFile, TypeArchive)
	}
	switch r.Visibility {
	case VisibilityApplication, "", VisibilityPrivate, VisibilityPublic:
	default:
		return ResourceURL{}, fmt.Errorf("local resource %q: visibility %q; valid: %s, %s, %s", r.Alias, r.Visibility,
			VisibilityApplication, VisibilityPrivate, VisibilityPublic)
	}
	if r.Alias == "" {
		return ResourceURL{}, fmt.Errorf("local resource with url %q has no alias", r.URL)
	}
	return out, nil
}

// ParseManifest reads the manifest and checks every entry.
func ParseManifest(data []byte) ([]LocalResource, error) {
	var m []LocalResource
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s is not a JSON list of local resources ({alias, url, size, timestamp, type, visibility}): %w", StagedManifest, err)
	}
	for _, r := range m {
		if _, err := r.Parse(); err != nil {
			return nil, fmt.Errorf("%s: %w", StagedManifest, err)
		}
	}
	return m, nil
}
