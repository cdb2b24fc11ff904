package am

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"strconv"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// EnvStagingDir names the environment variable with the application's staging directory, a full
// hdfs:// URI (/user/<user>/.yarn-am/<application id>/ on fs.defaultFS).
const EnvStagingDir = "YARN_AM_STAGING_DIR"

// ManifestFile is the staged file listing the local resources of TaskExecutors.
const ManifestFile = "manifest.json"

// ManifestEntry is one local resource of manifest.json, as the client writes it.
type ManifestEntry struct {
	Alias      string `json:"alias"`
	URL        string `json:"url"` // hdfs://host:port/path
	Size       int64  `json:"size"`
	Timestamp  int64  `json:"timestamp"` // HDFS modification time, ms
	Type       string `json:"type"`      // FILE or ARCHIVE
	Visibility string `json:"visibility"`
}

// ReadManifest reads manifest.json.
func ReadManifest(file string) ([]ManifestEntry, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the staged manifest: %w", err)
	}
	var out []ManifestEntry
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s is not a manifest (a JSON list of {alias, url, size, timestamp, type, visibility}): %w", file, err)
	}
	return out, nil
}

// LocalResource converts the entry into YARN's form.
func (e ManifestEntry) LocalResource() (*hadooppb.StringLocalResourceMapProto, error) {
	u, err := url.Parse(e.URL)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("manifest entry %q: url %q is not a URI like hdfs://host:port/path", e.Alias, e.URL)
	}
	lr := &hadooppb.LocalResourceProto{
		Resource:   urlProto(u),
		Size:       proto.Int64(e.Size),
		Timestamp:  proto.Int64(e.Timestamp),
		Type:       hadooppb.LocalResourceTypeProto_FILE.Enum(),
		Visibility: hadooppb.LocalResourceVisibilityProto_APPLICATION.Enum(),
	}
	switch e.Type {
	case "", "FILE":
	case "ARCHIVE":
		lr.Type = hadooppb.LocalResourceTypeProto_ARCHIVE.Enum()
	case "PATTERN":
		lr.Type = hadooppb.LocalResourceTypeProto_PATTERN.Enum()
	default:
		return nil, fmt.Errorf("manifest entry %q: type %q; valid: FILE, ARCHIVE, PATTERN", e.Alias, e.Type)
	}
	switch e.Visibility {
	case "", "APPLICATION":
	case "PUBLIC":
		lr.Visibility = hadooppb.LocalResourceVisibilityProto_PUBLIC.Enum()
	case "PRIVATE":
		lr.Visibility = hadooppb.LocalResourceVisibilityProto_PRIVATE.Enum()
	default:
		return nil, fmt.Errorf("manifest entry %q: visibility %q; valid: APPLICATION, PRIVATE, PUBLIC", e.Alias, e.Visibility)
	}
	return &hadooppb.StringLocalResourceMapProto{Key: proto.String(e.Alias), Value: lr}, nil
}

func urlProto(u *url.URL) *hadooppb.URLProto {
	p := &hadooppb.URLProto{Scheme: proto.String(u.Scheme), File: proto.String(u.Path)}
	if h := u.Hostname(); h != "" {
		p.Host = proto.String(h)
	}
	if ps := u.Port(); ps != "" {
		if n, err := strconv.Atoi(ps); err == nil {
			p.Port = proto.Int32(int32(n))
		}
	}
	return p
}

// Staging is the application's staging directory on HDFS: the AM reads the size and time of the
// staged files the TaskExecutors need and deletes the directory when the application ends.
type Staging struct {
	URI    string // the full hdfs:// URI of the directory
	dir    *url.URL
	client *hdfs.Client
}

// OpenStaging connects to the NameNode of uri (hdfs://host:port/path) as user. The connection is made
// at once so that deleting the directory on SIGTERM is a single call (YARN sends SIGKILL 250 ms later).
func OpenStaging(ctx context.Context, uri, user string) (*Staging, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "hdfs" || u.Host == "" || u.Path == "" || u.Path == "/" {
		return nil, fmt.Errorf("%s=%q: want the staging directory as hdfs://host:port/user/<user>/.yarn-am/<application id>", EnvStagingDir, uri)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "8020")
	}
	dial := (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{host}, User: user, NamenodeDialFunc: dial, DatanodeDialFunc: dial})
	if err != nil {
		return nil, fmt.Errorf("connecting to the NameNode %s of %s=%s: %w", host, EnvStagingDir, uri, err)
	}
	s := &Staging{URI: uri, dir: u, client: c}
	if _, err := s.client.Stat(u.Path); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("staging directory %s: %w", uri, err)
	}
	return s, nil
}

// Resource returns the local resource of a staged file (by its name in the staging directory) under
// alias, with the size and modification time HDFS reports (the NodeManager checks both).
func (s *Staging) Resource(name, alias string) (*hadooppb.StringLocalResourceMapProto, error) {
	p := path.Join(s.dir.Path, name)
	fi, err := s.client.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("staged file %s: %w", p, err)
	}
	u := *s.dir
	u.Path = p
	e := ManifestEntry{Alias: alias, URL: u.String(), Size: fi.Size(), Timestamp: fi.ModTime().UnixMilli(), Type: "FILE"}
	return e.LocalResource()
}

// Exists reports whether a staged file exists.
func (s *Staging) Exists(name string) bool {
	_, err := s.client.Stat(path.Join(s.dir.Path, name))
	return err == nil
}

// Delete removes the staging directory; a directory already gone is not an error.
func (s *Staging) Delete(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.client.RemoveAll(s.dir.Path) }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("deleting the staging directory %s: %w", s.URI, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("deleting the staging directory %s: %w", s.URI, ctx.Err())
	}
}

// Close closes the NameNode connection.
func (s *Staging) Close() error { return s.client.Close() }
