package flink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// writeCheckpoints makes dir/chk-N/_metadata (a few bytes) for each id, and dir's shared and
// taskowned directories, as Flink lays out a job's checkpoint directory.
func writeCheckpoints(t *testing.T, dir string, ids ...int) {
	t.Helper()
	for _, d := range []string{"shared", "taskowned"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for _, id := range ids {
		chk := filepath.Join(dir, fmt.Sprintf("chk-%d", id))
		require.NoError(t, os.MkdirAll(chk, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(chk, "_metadata"), []byte("metadata"), 0o644))
	}
}

// fakeFiles is framework.Files of a NameNode: hdfs://nn:8020, its paths in a local directory, and
// a listing that fails when listErr is set, a delete when removeErr is. It counts the stats.
type fakeFiles struct {
	root      string
	listErr   error
	removeErr error
	stats     int
}

func (f *fakeFiles) Remove(ctx context.Context, p string) error {
	if f.removeErr != nil {
		return f.removeErr
	}
	return localFiles{}.Remove(ctx, filepath.Join(f.root, p))
}

func (f *fakeFiles) FS() string { return "hdfs://nn:8020" }

func (f *fakeFiles) Stat(ctx context.Context, p string) (framework.FileInfo, error) {
	f.stats++
	return localFiles{}.Stat(ctx, filepath.Join(f.root, p))
}

func (f *fakeFiles) List(ctx context.Context, dir string, max int) ([]framework.FileInfo, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	return localFiles{}.List(ctx, filepath.Join(f.root, dir), max)
}

// TestPickRestoreStartsFromACheckpointThatExists: a later attempt starts from the checkpoint the AM
// kept when it is still there; from a newer completed one when Flink completed more before the AM
// was lost; from the newest one left when the kept one was subsumed (deleted); from nothing when
// none is left or the directory is gone. A chk-N being written (no _metadata, or an empty one) is
// passed over. Checked on the local disk (file:) and on the staging NameNode (hdfs:); a checkpoint
// on another filesystem is used unchecked, and one whose directory cannot be listed is used if it
// is there.
func TestPickRestoreStartsFromACheckpointThatExists(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ids     []int // completed chk-N in the job's directory
		partial []int // chk-N without _metadata
		empty   []int // chk-N with an empty _metadata
		noDir   bool
		listErr error
		wantID  int64 // 0: none
		wantWhy string
	}{
		{name: "kept one there", ids: []int{7, 8}, wantID: 8, wantWhy: "the latest completed one attempt 1 saw of job j1"},
		{name: "newer ones completed", ids: []int{8, 9, 10}, partial: []int{11}, wantID: 10,
			wantWhy: "the newest completed one in %s (attempt 1 last saw checkpoint 8; Flink completed newer ones before the AM was lost)"},
		{name: "kept one subsumed", ids: []int{9}, wantID: 9, wantWhy: "(attempt 1 last saw checkpoint 8"},
		{name: "kept one subsumed, older left", ids: []int{3}, partial: []int{8}, empty: []int{9}, wantID: 3,
			wantWhy: "the newest completed one left in %s (checkpoint 8, the latest attempt 1 saw, is gone)"},
		{name: "none left", partial: []int{12}, wantWhy: "checkpoint 8, the latest completed one attempt 1 saw of job j1, is gone, and no completed checkpoint (a chk-N directory with its _metadata) is left in %s"},
		{name: "directory gone", noDir: true, wantWhy: "checkpoint 8, the latest completed one attempt 1 saw of job j1, is gone with its directory %s"},
		{name: "not listed, kept one there", ids: []int{8, 9}, listErr: errors.New("permission denied"), wantID: 8,
			wantWhy: "the latest completed one attempt 1 saw of job j1 (its directory could not be listed: permission denied)"},
		{name: "not listed, kept one gone", ids: []int{9}, listErr: errors.New("permission denied"),
			wantWhy: "checkpoint 8, the latest completed one attempt 1 saw of job j1, is gone, and its directory could not be listed for another: permission denied"},
	} {
		schemes := []string{"file", "hdfs"}
		if tc.listErr != nil {
			schemes = []string{"hdfs"} // a listing that fails is the fake NameNode's
		}
		for _, scheme := range schemes {
			t.Run(tc.name+"/"+scheme, func(t *testing.T) {
				root := t.TempDir()
				jobDir := "/ck/j1"
				if !tc.noDir {
					writeCheckpoints(t, filepath.Join(root, jobDir), tc.ids...)
					for _, id := range tc.partial {
						require.NoError(t, os.MkdirAll(filepath.Join(root, jobDir, fmt.Sprintf("chk-%d", id)), 0o755))
					}
					for _, id := range tc.empty {
						require.NoError(t, os.MkdirAll(filepath.Join(root, jobDir, fmt.Sprintf("chk-%d", id)), 0o755))
						require.NoError(t, os.WriteFile(filepath.Join(root, jobDir, fmt.Sprintf("chk-%d", id), "_metadata"), nil, 0o644))
					}
				}
				files := &fakeFiles{root: root, listErr: tc.listErr}
				dirURI := "hdfs://nn:8020" + jobDir
				if scheme == "file" {
					dirURI = "file:" + root + jobDir
				}
				rec := recovery{JobID: "j1", Checkpoint: 8, Path: dirURI + "/chk-8", Attempt: 1}
				got := pickRestore(context.Background(), rec, files)
				assert.Equal(t, tc.wantID, got.Checkpoint, "%+v", got)
				if tc.wantID == 0 {
					assert.Empty(t, got.Path)
				} else {
					assert.Equal(t, fmt.Sprintf("%s/chk-%d", dirURI, tc.wantID), got.Path)
				}
				want := tc.wantWhy
				if strings.Contains(want, "%s") {
					want = fmt.Sprintf(want, dirURI)
				}
				assert.Contains(t, got.Why, want)
			})
		}
	}
}

// TestPickRestoreReadsOnlyWhatItCan: a checkpoint on a filesystem the AM does not read (another
// NameNode, S3) is used as kept, unchecked; one not in Flink's chk-N layout is used when its
// _metadata is there; chk-N names that are not Flink's (chk-007, chk-x, files) are passed over; at
// most maxCheckpointStats directories are looked into.
func TestPickRestoreReadsOnlyWhatItCan(t *testing.T) {
	files := &fakeFiles{root: t.TempDir()}
	for _, p := range []string{"hdfs://other:8020/ck/j1/chk-8", "s3://bucket/ck/j1/chk-8"} {
		got := pickRestore(context.Background(), recovery{JobID: "j1", Checkpoint: 8, Path: p, Attempt: 1}, files)
		assert.Equal(t, restorePoint{Checkpoint: 8, Path: p, Why: "the latest completed one attempt 1 saw of job j1 (on a filesystem the AM does not read: not checked)"}, got)
	}
	assert.Zero(t, files.stats)

	writeCheckpoints(t, filepath.Join(files.root, "/sp"), 1)
	require.NoError(t, os.WriteFile(filepath.Join(files.root, "/sp/chk-1/_metadata"), []byte("m"), 0o644))
	require.NoError(t, os.Rename(filepath.Join(files.root, "/sp/chk-1"), filepath.Join(files.root, "/sp/savepoint-1")))
	got := pickRestore(context.Background(), recovery{JobID: "j1", Checkpoint: 1, Path: "hdfs:///sp/savepoint-1", Attempt: 1}, files)
	assert.Equal(t, "hdfs:///sp/savepoint-1", got.Path, "%+v", got)

	dir := filepath.Join(files.root, "/ck/j1")
	writeCheckpoints(t, dir, 5)
	for _, name := range []string{"chk-007", "chk-x", "chk--1"} {
		writeCheckpoints(t, filepath.Join(dir, name), 1)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "chk-99"), []byte("a file"), 0o644))
	got = pickRestore(context.Background(), recovery{JobID: "j1", Checkpoint: 8, Path: "hdfs://nn:8020/ck/j1/chk-8", Attempt: 1}, files)
	assert.Equal(t, int64(5), got.Checkpoint, "%+v", got)

	for id := 100; id < 100+2*maxCheckpointStats; id++ {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, fmt.Sprintf("chk-%d", id)), 0o755))
	}
	files.stats = 0
	got = pickRestore(context.Background(), recovery{JobID: "j1", Checkpoint: 8, Path: "hdfs://nn:8020/ck/j1/chk-8", Attempt: 1}, files)
	assert.Empty(t, got.Path, "%+v", got)
	assert.Equal(t, maxCheckpointStats, files.stats)
}

// TestRecoveryStartsFromTheCheckpointLeft: attempt 2 of a job whose kept checkpoint Flink deleted
// starts from the newest one left and says so in its event; with none left it starts from nothing
// with a warning, and the application goes on (Flink would fail a job told to restore a path that
// is gone).
func TestRecoveryStartsFromTheCheckpointLeft(t *testing.T) {
	ck := t.TempDir()
	writeCheckpoints(t, ck+"/"+testJobID, 9, 10)
	kept := `{"v":1,"job":"` + testJobID + `","checkpoint":8,"path":"file:` + ck + "/" + testJobID + `/chk-8","attempt":1}`
	spec := &flinkSpec{Jar: "job.jar", Config: map[string]string{}}
	conf := flinkdist.NewConfig()
	conf.Set(keyCheckpointInterval, "1s")

	var ev recorded
	from, rec := recoverAtStart(context.Background(), spec, conf, framework.AMStart{Attempt: 2, State: &memStore{data: []byte(kept)}}, ev.emit)
	assert.Equal(t, "file:"+ck+"/"+testJobID+"/chk-10", from)
	assert.Contains(t, ev.messages(), "AM attempt 2: the Flink job starts from checkpoint 10 at file:"+ck+"/"+testJobID+"/chk-10, the newest completed one in")
	assert.Equal(t, contract.SeverityInfo, severityOf(ev.evs[0]))
	require.Len(t, rec.Restores, 1)
	assert.Equal(t, restore{Attempt: 2, Checkpoint: 10, Path: from}, rec.Restores[0])

	require.NoError(t, os.RemoveAll(ck+"/"+testJobID))
	var ev3 recorded
	from, rec = recoverAtStart(context.Background(), spec, conf, framework.AMStart{Attempt: 3, State: &memStore{data: []byte(kept)}}, ev3.emit)
	assert.Empty(t, from)
	assert.Equal(t, contract.SeverityWarning, severityOf(ev3.evs[0]))
	assert.Contains(t, ev3.messages(), "AM attempt 3: no kept checkpoint of the Flink job is left: checkpoint 8, the latest completed one attempt 1 saw of job "+testJobID+", is gone with its directory")
	assert.Contains(t, ev3.messages(), "; the job starts from nothing")
	assert.Equal(t, restore{Attempt: 3}, rec.Restores[len(rec.Restores)-1])
}
