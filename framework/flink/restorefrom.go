package flink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/framework"
)

// Which checkpoint a later AM attempt's JobManager starts the job from
// (docs/flink.md#when-the-applicationmaster-is-lost). The checkpoint the AM kept may be gone by then:
// Flink deletes a completed checkpoint once num-retained newer ones completed, and the AM reads the
// latest only every few seconds, or the job's own keys kept fewer than yarn-am's default. Flink
// fails a job whose restore path does not exist, which would end the application: so the attempt
// reads the job's checkpoint directory first and starts from the newest completed checkpoint there
// (one whose _metadata is written), the kept one or a newer one, falling back to older ones, and from
// nothing when none is left.

// maxCheckpointEntries bounds the listing of a job's checkpoint directory (chk-N, shared, taskowned):
// Flink keeps num-retained checkpoints plus the one in progress.
const maxCheckpointEntries = 10000

// maxCheckpointStats bounds how many chk-N directories are looked into, newest first.
const maxCheckpointStats = 32

// restorePoint is the checkpoint or savepoint a later attempt starts the job from; Path "" is none.
type restorePoint struct {
	Checkpoint int64
	Path       string
	// Why says which one it is ("the latest completed one attempt 1 saw of job ..."), or with Path ""
	// why none is left, for the attempt's event.
	Why string
	// Savepoint: Path is a savepoint the AM took (savepoints.go), not a checkpoint.
	Savepoint bool
	// At is when it completed (its _metadata written; else as the AM recorded it); zero: not known.
	At time.Time
}

// name is "checkpoint N" or "savepoint", for the events.
func (p restorePoint) name() string {
	if p.Savepoint {
		return "savepoint"
	}
	return "checkpoint " + strconv.FormatInt(p.Checkpoint, 10)
}

// localFiles is framework.Files on the local filesystem: the JobManager runs in the AM's container,
// so a file:// checkpoint is on the AM's disk.
type localFiles struct{}

func (localFiles) FS() string { return "file://" }

func (localFiles) Stat(_ context.Context, p string) (framework.FileInfo, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return framework.FileInfo{}, err
	}
	return framework.FileInfo{IsDir: fi.IsDir(), Length: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Remove deletes p and what is under it; one that is not there is fs.ErrNotExist (os.RemoveAll
// alone would not say).
func (localFiles) Remove(_ context.Context, p string) error {
	if _, err := os.Lstat(p); err != nil {
		return err
	}
	return os.RemoveAll(p)
}

func (localFiles) List(_ context.Context, dir string, max int) ([]framework.FileInfo, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(max + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(entries) > max {
		return nil, fmt.Errorf("%s has more than %d entries", dir, max)
	}
	out := make([]framework.FileInfo, 0, len(entries))
	for _, e := range entries {
		out = append(out, framework.FileInfo{Name: e.Name(), IsDir: e.IsDir()})
	}
	return out, nil
}

// filesOf is the Files a checkpoint URI is on, and its path there: file: URIs on the local disk,
// hdfs: URIs of the staging directory's NameNode (or of none, hdfs:///p) on staging; nil for any other.
func filesOf(uri string, staging framework.Files) (framework.Files, string) {
	u, err := url.Parse(uri)
	if err != nil || u.Path == "" {
		return nil, ""
	}
	switch {
	case u.Scheme == "file" && (u.Host == "" || u.Host == "localhost"):
		return localFiles{}, u.Path
	case u.Scheme == "hdfs" && staging != nil && (u.Host == "" || "hdfs://"+u.Host == staging.FS()):
		return staging, u.Path
	}
	return nil, ""
}

// checkpointIDOf is N of a directory chk-N; false for any other name.
func checkpointIDOf(name string) (int64, bool) {
	s, ok := strings.CutPrefix(name, "chk-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

// pickRestore chooses what to start from, given what the earlier attempts kept: the newer of the
// latest completed checkpoint (pickCheckpoint) and the latest savepoint the AM took, on its schedule
// or on demand (docs/flink.md#savepoints-on-a-schedule), by when each one's _metadata was written.
func pickRestore(ctx context.Context, rec recovery, staging framework.Files) restorePoint {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cp := restorePoint{Why: "no checkpoint was kept"}
	if rec.Path != "" {
		cp = pickCheckpoint(ctx, rec, staging)
	}
	sp, gone := newestSavepoint(ctx, rec, staging)
	switch {
	case sp.Path == "" && cp.Path == "" && gone > 0:
		cp.Why += fmt.Sprintf(", and the %d savepoints the AM took are gone", gone)
		return cp
	case sp.Path == "":
		return cp
	case cp.Path == "":
		sp.Why += " (" + cp.Why + ")"
		return sp
	case sp.At.After(cp.At):
		sp.Why += fmt.Sprintf(", newer than checkpoint %d (%s)", cp.Checkpoint, whenWritten(cp.At))
		return sp
	}
	cp.Why += fmt.Sprintf(", newer than the latest savepoint the AM took (%s, %s)", sp.Path, whenWritten(sp.At))
	return cp
}

// whenWritten says when a restore point's metadata was written.
func whenWritten(t time.Time) string {
	if t.IsZero() {
		return "its time not known"
	}
	return "written " + t.UTC().Format(time.RFC3339)
}

// newestSavepoint is the newest savepoint the AM recorded whose _metadata is still there (one on a
// filesystem the AM does not read is used unchecked, at the time recorded), and how many newer ones
// are gone.
func newestSavepoint(ctx context.Context, rec recovery, staging framework.Files) (restorePoint, int) {
	sps := slices.Clone(rec.Savepoints)
	slices.SortStableFunc(sps, func(a, b keptSavepoint) int { return cmp.Compare(b.At, a.At) })
	gone := 0
	for _, sp := range sps {
		at := time.UnixMilli(sp.At)
		if files, p := filesOf(sp.Path, staging); files != nil {
			t, ok := completedAt(ctx, files, p)
			if !ok {
				gone++
				continue
			}
			at = t
		}
		why := fmt.Sprintf("the newest savepoint the AM took on its schedule (flink.%s)", keySavepointInterval)
		if !sp.Scheduled {
			why = "the newest savepoint the AM took, on demand (yarn-am savepoint)"
		}
		if gone > 0 {
			why += fmt.Sprintf("; %d newer ones are gone", gone)
		}
		return restorePoint{Path: sp.Path, Why: why, Savepoint: true, At: at}, gone
	}
	return restorePoint{}, gone
}

// pickCheckpoint chooses the checkpoint to start from, given what the earlier attempts kept (rec.Path
// set). A checkpoint on a filesystem the AM does not read is used unchecked, as it was kept.
func pickCheckpoint(ctx context.Context, rec recovery, staging framework.Files) restorePoint {
	latest := fmt.Sprintf("the latest completed one attempt %d saw of job %s", rec.Attempt, rec.JobID)
	saw := fmt.Sprintf("checkpoint %d, %s", rec.Checkpoint, latest)
	files, p := filesOf(rec.Path, staging)
	kept := strings.TrimRight(rec.Path, "/")
	cut := strings.LastIndex(kept, "/")
	if files == nil || cut < 0 {
		return restorePoint{Checkpoint: rec.Checkpoint, Path: rec.Path, Why: latest + " (on a filesystem the AM does not read: not checked)", At: keptAt(rec)}
	}
	// Siblings of the kept checkpoint are named as it is (Flink writes file:/p, hdfs://host:port/p).
	dirURI := kept[:cut]
	sibling := func(name string) string { return dirURI + "/" + name }
	dir := path.Dir(p)
	if _, ok := checkpointIDOf(path.Base(p)); !ok {
		// Not a chk-N directory of Flink's layout: the kept path itself, if its metadata is there.
		if at, ok := completedAt(ctx, files, p); ok {
			return restorePoint{Checkpoint: rec.Checkpoint, Path: rec.Path, Why: latest, At: at}
		}
		return restorePoint{Why: fmt.Sprintf("%s, at %s, has no _metadata any more", saw, rec.Path)}
	}
	entries, err := files.List(ctx, dir, maxCheckpointEntries)
	if errors.Is(err, fs.ErrNotExist) {
		return restorePoint{Why: fmt.Sprintf("%s, is gone with its directory %s", saw, dirURI)}
	}
	if err != nil {
		// Not listed: the kept one, if it is still there.
		if at, ok := completedAt(ctx, files, p); ok {
			return restorePoint{Checkpoint: rec.Checkpoint, Path: rec.Path, Why: fmt.Sprintf("%s (its directory could not be listed: %v)", latest, err), At: at}
		}
		return restorePoint{Why: fmt.Sprintf("%s, is gone, and its directory could not be listed for another: %v", saw, err)}
	}
	var ids []int64
	for _, e := range entries {
		if id, ok := checkpointIDOf(e.Name); ok && e.IsDir {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	for i, id := range ids {
		if i == maxCheckpointStats {
			break
		}
		name := "chk-" + strconv.FormatInt(id, 10)
		at, ok := completedAt(ctx, files, path.Join(dir, name))
		if !ok {
			continue // in progress, being deleted, or unreadable: an older one
		}
		switch {
		case id == rec.Checkpoint:
			return restorePoint{Checkpoint: id, Path: rec.Path, Why: latest, At: at}
		case id > rec.Checkpoint:
			return restorePoint{Checkpoint: id, Path: sibling(name), At: at, Why: fmt.Sprintf("the newest completed one in %s (attempt %d last saw checkpoint %d; Flink completed newer ones before the AM was lost)",
				dirURI, rec.Attempt, rec.Checkpoint)}
		default:
			return restorePoint{Checkpoint: id, Path: sibling(name), At: at, Why: fmt.Sprintf("the newest completed one left in %s (checkpoint %d, the latest attempt %d saw, is gone)",
				dirURI, rec.Checkpoint, rec.Attempt)}
		}
	}
	return restorePoint{Why: fmt.Sprintf("%s, is gone, and no completed checkpoint (a chk-N directory with its _metadata) is left in %s", saw, dirURI)}
}

// completed says whether the checkpoint directory chk holds its metadata: Flink writes _metadata
// last, so one without it (or with an empty one) is in progress, being deleted or unreadable.
func completed(ctx context.Context, files framework.Files, chk string) bool {
	_, ok := completedAt(ctx, files, chk)
	return ok
}

// completedAt is completed, and when the metadata was written.
func completedAt(ctx context.Context, files framework.Files, chk string) (time.Time, bool) {
	fi, err := files.Stat(ctx, path.Join(chk, "_metadata"))
	return fi.ModTime, err == nil && !fi.IsDir && fi.Length > 0
}

// keptAt is when the kept checkpoint completed, as the AM recorded it; zero when not recorded.
func keptAt(rec recovery) time.Time {
	if rec.CheckpointAt == 0 {
		return time.Time{}
	}
	return time.UnixMilli(rec.CheckpointAt)
}
