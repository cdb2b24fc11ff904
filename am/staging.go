package am

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hdfsfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// staging is the application's staging directory on HDFS: the AM reads the size and time of the
// staged files the TaskExecutors need and deletes the directory when the application ends.
type staging struct {
	URI    string // the full hdfs:// URI of the directory
	dir    *url.URL
	client *hdfs.Client
	nn     *yarnrpc.NameNodeClient // for the AM's state (durable.go); nil: none
}

// openStaging connects to the NameNode of uri (hdfs://host:port/path) as user. The connection is made
// at once so that deleting the directory on SIGTERM is a single call (YARN sends SIGKILL 250 ms later).
func openStaging(ctx context.Context, uri, user string) (*staging, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "hdfs" || u.Host == "" || u.Path == "" || u.Path == "/" {
		return nil, fmt.Errorf("%s=%q: want the staging directory as hdfs://host:port/user/<user>/.yarn-am/<application id>", contract.EnvStagingDir, uri)
	}
	c, _, err := hdfsfile.DialURI(uri, user, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", contract.EnvStagingDir, uri, err)
	}
	s := &staging{URI: uri, dir: u, client: c}
	if _, err := s.client.Stat(u.Path); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("staging directory %s: %w", uri, err)
	}
	return s, nil
}

// Resource returns the local resource of a staged file (by its name in the staging directory) under
// alias, with the size and modification time HDFS reports (the NodeManager checks both).
func (s *staging) Resource(name, alias string) (contract.LocalResource, error) {
	p := path.Join(s.dir.Path, name)
	fi, err := s.client.Stat(p)
	if err != nil {
		return contract.LocalResource{}, fmt.Errorf("staged file %s: %w", p, err)
	}
	u := *s.dir
	u.Path = p
	e := contract.LocalResource{Alias: alias, URL: u.String(), Size: fi.Size(), Timestamp: fi.ModTime().UnixMilli(), Type: contract.TypeFile}
	return e, nil
}

// Exists reports whether a staged file exists.
func (s *staging) Exists(name string) bool {
	_, err := s.client.Stat(path.Join(s.dir.Path, name))
	return err == nil
}

// Delete removes the staging directory; a directory already gone is not an error.
func (s *staging) Delete(ctx context.Context) error {
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

// Close closes the NameNode connections.
func (s *staging) Close() error {
	if s.nn != nil {
		_ = s.nn.Close()
	}
	return s.client.Close()
}
