package client

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// rootedFS is a LeftoverFS over a local directory standing for the file system's root.
type rootedFS struct{ root string }

func (f rootedFS) ReadDir(dir string) ([]os.FileInfo, error) {
	des, err := os.ReadDir(filepath.Join(f.root, dir))
	if err != nil {
		return nil, err
	}
	out := make([]os.FileInfo, 0, len(des))
	for _, d := range des {
		fi, err := d.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	return out, nil
}

func (f rootedFS) RemoveAll(name string) error { return os.RemoveAll(filepath.Join(f.root, name)) }

// states answers application reports from a map of id to state; an id not in it is unknown.
type states map[string]hadooppb.YarnApplicationStateProto

func (s states) GetApplicationReport(_ context.Context, id *hadooppb.ApplicationIdProto) (*hadooppb.ApplicationReportProto, error) {
	st, ok := s[yarnrpc.FormatApplicationID(id)]
	if !ok {
		return nil, yarnrpc.ErrApplicationNotFound
	}
	return &hadooppb.ApplicationReportProto{ApplicationId: id, YarnApplicationState: st.Enum()}, nil
}

func TestRemoveLeftoversRemovesOnlyEndedApplications(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "user", "alice", ".yarn-am")
	dirs := map[string]hadooppb.YarnApplicationStateProto{
		"application_1_0001": hadooppb.YarnApplicationStateProto_KILLED,
		"application_1_0002": hadooppb.YarnApplicationStateProto_FAILED,
		"application_1_0003": hadooppb.YarnApplicationStateProto_FINISHED,
		"application_1_0004": hadooppb.YarnApplicationStateProto_RUNNING,
		"application_1_0005": hadooppb.YarnApplicationStateProto_ACCEPTED,
	}
	for id := range dirs {
		require.NoError(t, os.MkdirAll(filepath.Join(base, id), 0o700))
	}
	// Unknown to this RM (another cluster may share the file system), and not an application's directory.
	require.NoError(t, os.MkdirAll(filepath.Join(base, "application_9_0001"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(base, "cache"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(base, "application_1_0006"), []byte("a file"), 0o600))
	rm := states(dirs)
	rm["application_1_0006"] = hadooppb.YarnApplicationStateProto_KILLED

	var out bytes.Buffer
	removed, err := RemoveLeftovers(context.Background(), rootedFS{root}, rm, "alice", &out)
	require.NoError(t, err)
	assert.Equal(t, []string{"application_1_0001", "application_1_0002", "application_1_0003"}, removed)
	for _, keep := range []string{"application_1_0004", "application_1_0005", "application_9_0001", "cache", "application_1_0006"} {
		_, err := os.Stat(filepath.Join(base, keep))
		assert.NoError(t, err, "%s must be left alone", keep)
	}
	for _, gone := range removed {
		_, err := os.Stat(filepath.Join(base, gone))
		assert.True(t, errors.Is(err, os.ErrNotExist), "%s must be removed", gone)
	}
	assert.Contains(t, out.String(), "removed the leftover staging directory /user/alice/.yarn-am/application_1_0001 of application_1_0001 (KILLED)")

	// No directory at all is not an error.
	removed, err = RemoveLeftovers(context.Background(), rootedFS{root}, rm, "bob", &out)
	assert.NoError(t, err)
	assert.Empty(t, removed)
}

// An RM that does not answer stops the sweep with an error that names it; nothing is removed blindly.
func TestRemoveLeftoversStopsWhenTheRMFails(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "user", "alice", ".yarn-am", "application_1_0001"), 0o700))
	_, err := RemoveLeftovers(context.Background(), rootedFS{root}, failingRM{}, "alice", &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "application_1_0001")
	_, serr := os.Stat(filepath.Join(root, "user", "alice", ".yarn-am", "application_1_0001"))
	assert.NoError(t, serr)
}

type failingRM struct{}

func (failingRM) GetApplicationReport(context.Context, *hadooppb.ApplicationIdProto) (*hadooppb.ApplicationReportProto, error) {
	return nil, errors.New("connection refused")
}
