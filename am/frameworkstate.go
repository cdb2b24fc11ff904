package am

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// A framework's own state across the AM's attempts (framework.AMStart.State: a Flink job's latest
// completed checkpoint, docs/flink.md#when-the-applicationmaster-is-lost) lives beside the AM's
// (durable.go) in an extended attribute of the staging directory: setting one is a single atomic
// NameNode call — no reader sees half a value, as a write and a rename would also give — and it
// works with the HDFS delegation token of a Kerberized cluster, which has no DataNode write path here.

// frameworkStateXAttr is the extended attribute that holds it (user.yarn-am.framework-state).
const frameworkStateXAttr = "yarn-am.framework-state"

// xattrFrameworkState is a framework.StateStore in frameworkStateXAttr.
type xattrFrameworkState struct {
	nn  *yarnrpc.NameNodeClient
	dir string
}

// frameworkStateOf is the framework's store in the staging directory; nil without one (or without
// its NameNode connection).
func frameworkStateOf(s stagingStore) framework.StateStore {
	if nn, dir := stagingNameNode(s); nn != nil {
		return xattrFrameworkState{nn, dir.Path}
	}
	return nil
}

// stagingNameNode is the staging directory's NameNode connection and URI; nil without one.
func stagingNameNode(s stagingStore) (*yarnrpc.NameNodeClient, *url.URL) {
	switch st := s.(type) {
	case *staging:
		if st != nil && st.nn != nil {
			return st.nn, st.dir
		}
	case *tokenStaging:
		if st != nil {
			return st.nn, st.dir
		}
	}
	return nil, nil
}

// Load reads the state back; nil, nil when none was saved.
func (x xattrFrameworkState) Load(ctx context.Context) ([]byte, error) {
	data, err := x.nn.GetXAttr(ctx, x.dir, frameworkStateXAttr)
	switch {
	case errors.Is(err, yarnrpc.ErrNoXAttr):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the framework's state (user.%s of %s): %w", frameworkStateXAttr, x.dir, err)
	case len(data) > framework.MaxState:
		return nil, fmt.Errorf("the framework's state (user.%s of %s) is %d bytes; at most %d are read", frameworkStateXAttr, x.dir, len(data), framework.MaxState)
	}
	return data, nil
}

// Save replaces the state.
func (x xattrFrameworkState) Save(ctx context.Context, data []byte) error {
	if len(data) > framework.MaxState {
		return fmt.Errorf("the framework's state is %d bytes; at most %d", len(data), framework.MaxState)
	}
	return x.nn.SetXAttr(ctx, x.dir, frameworkStateXAttr, data)
}

// nameNodeFiles is framework.Files on the staging directory's NameNode, through the AM's own
// connection to it (a delegation token on a Kerberized cluster: listing and stat are NameNode calls).
type nameNodeFiles struct {
	nn *yarnrpc.NameNodeClient
	fs string // hdfs://host:port of the staging directory
}

// frameworkFilesOf is framework.Files on the staging directory's filesystem; nil without one (or
// without its NameNode connection).
func frameworkFilesOf(s stagingStore) framework.Files {
	if nn, dir := stagingNameNode(s); nn != nil {
		return nameNodeFiles{nn, "hdfs://" + dir.Host}
	}
	return nil
}

func (p nameNodeFiles) FS() string { return p.fs }

func (p nameNodeFiles) Stat(ctx context.Context, path string) (framework.FileInfo, error) {
	st, err := p.nn.GetFileInfo(ctx, path)
	if err != nil {
		return framework.FileInfo{}, notExist(err)
	}
	return framework.FileInfo{IsDir: st.IsDir, Length: st.Length, ModTime: st.ModTime}, nil
}

func (p nameNodeFiles) List(ctx context.Context, dir string, max int) ([]framework.FileInfo, error) {
	entries, err := p.nn.ListDir(ctx, dir, max)
	if err != nil {
		return nil, notExist(err)
	}
	out := make([]framework.FileInfo, len(entries))
	for i, e := range entries {
		out[i] = framework.FileInfo{Name: e.Name, IsDir: e.IsDir, Length: e.Length, ModTime: e.ModTime}
	}
	return out, nil
}

// Remove deletes path recursively (the NameNode's delete); one that is not there is fs.ErrNotExist.
func (p nameNodeFiles) Remove(ctx context.Context, path string) error {
	deleted, err := p.nn.Delete(ctx, path, true)
	switch {
	case err != nil:
		return notExist(err)
	case !deleted:
		return fmt.Errorf("deleting %s at %s: %w", path, p.fs, fs.ErrNotExist)
	}
	return nil
}

// notExist makes the NameNode's "no such file" fs.ErrNotExist too, as framework.Files says.
func notExist(err error) error {
	if errors.Is(err, yarnrpc.ErrFileNotFound) {
		return fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
	}
	return err
}

// Headroom is the allocate response's available_resources and what one TaskExecutor takes
// (framework.AMStart.Headroom); false before a response named a headroom.
func (a *am) Headroom() (framework.Headroom, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.headroom == nil {
		return framework.Headroom{}, false
	}
	worker := a.lastAllocated
	if len(worker) == 0 {
		worker = a.cfg.Spec.Capability
	}
	return framework.Headroom{Free: contract.Capability(yarnrpc.ResourceAmounts(a.headroom)), Worker: maps.Clone(worker)}, true
}
