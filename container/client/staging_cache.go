package client

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/jobfile"
)

// The per-user cache of staged files and archives (docs/job-file.md#visibility-and-the-cache): a
// local file is uploaded once to /user/<user>/.yarn-am/cache/<sha256>-<mode>/<name> and never
// rewritten, so later submits reuse it, and so do the NodeManagers, whose cache key is the URL with
// the size and modification time.

// CacheMaxAge is how long an entry of the cache is kept after the last submit that used it; older
// entries are removed by the next submit (SweepCache), unless an application that used them still
// has its staging directory.
const CacheMaxAge = 30 * 24 * time.Hour

// cacheSweepMax bounds the entries one sweep looks at.
const cacheSweepMax = 4096

// CacheDir returns a user's cache directory. RemoveLeftovers leaves it alone: it removes only
// application_* directories.
func CacheDir(user string) string { return path.Join("/user", user, ".yarn-am", "cache") }

var cacheEntryName = regexp.MustCompile(`^[0-9a-f]{64}-[0-7]{3}$`)

// cacheKey returns the entry directory of a local file: the SHA-256 of its content and its permission
// bits (an executable and a plain copy of the same bytes are different entries), and its size.
func cacheKey(local string) (key string, size int64, err error) {
	f, err := boundedread.OpenRegular(local)
	if err != nil {
		return "", 0, fmt.Errorf("%w; ship a directory as an archive (tar.gz or zip)", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	// copyToFS gives the copy these bits.
	perm := fi.Mode().Perm() | 0o600
	return fmt.Sprintf("%s-%03o", hex.EncodeToString(h.Sum(nil)), perm), n, nil
}

// stageCached puts a local file into the cache unless an entry with the same content is there, and
// says whether it was reused. The file is written under a temporary name and renamed, so a reader
// never sees a half-written entry; an entry is never rewritten (its modification time is part of the
// NodeManagers' cache key and of the launch contexts of running applications) unless its content is
// not what its name says: whoever holds the user's HDFS token (any container of the user) can rewrite
// an entry, keeping its size, and have its bytes run by every later submit, so an entry is reused only
// after its content was read back and hashed (entryHolds); one that does not match is replaced
// (Upload.Replaced; TestTamperedCacheEntryIsReplaced).
func stageCached(fsys FileSystem, user, local string) (Upload, error) {
	key, size, err := cacheKey(local)
	if err != nil {
		return Upload{}, err
	}
	sum := key[:sha256.Size*2]
	dir := path.Join(CacheDir(user), key)
	remote := path.Join(dir, filepath.Base(local))
	u := Upload{Local: local, Remote: remote, Size: size}
	if fi, err := fsys.Stat(remote); err == nil && fi.Mode().IsRegular() && fi.Size() == size {
		if entryHolds(fsys, remote, sum, size) {
			u.Reused = true
			return u, nil
		}
		u.Replaced = true
	}
	if err := fsys.MkdirAll(dir, 0o700); err != nil {
		return Upload{}, err
	}
	suffix := make([]byte, 8)
	if _, err := rand.Read(suffix); err != nil {
		return Upload{}, err
	}
	tmp := path.Join(dir, ".tmp-"+hex.EncodeToString(suffix))
	n, err := copyToFS(fsys, local, tmp)
	if err != nil {
		_ = fsys.RemoveAll(tmp)
		return Upload{}, err
	}
	if n != size {
		_ = fsys.RemoveAll(tmp)
		return Upload{}, fmt.Errorf("%s changed while it was staged (%d bytes hashed, %d copied)", local, size, n)
	}
	u.Remote, u.Reused, err = placeCacheEntry(fsys, tmp, remote, sum, size, time.Now, time.Sleep)
	if err != nil {
		return Upload{}, err
	}
	return u, nil
}

// entryHolds reports whether the cache entry at remote holds exactly size bytes whose SHA-256 is sum
// (hex), by reading it back. HDFS's own file checksum (MD5 of the blocks' MD5s of CRC32C per 512
// bytes) would cost one call per block instead of the bytes, but CRC32C is linear: whoever rewrites an
// entry can fix four bytes of every 512 so that each chunk keeps its CRC, and with it the file
// checksum. Reading back costs the entry's size from the DataNodes at each submit that reuses it
// (no writes, no replication), which is what makes the name's hash mean something. An entry that
// cannot be read does not hold it.
func entryHolds(fsys FileSystem, remote, sum string, size int64) bool {
	r, err := fsys.Open(remote)
	if err != nil {
		return false
	}
	defer r.Close()
	h := sha256.New()
	// One byte past the size: a file that grew after its Stat does not hold it either.
	n, err := io.Copy(h, io.LimitReader(r, size+1))
	return err == nil && n == size && hex.EncodeToString(h.Sum(nil)) == sum
}

// claimWait bounds how long a submit waits for another one that holds an entry's claim; a claim
// older than claimStale is a submit that died holding it.
const (
	claimWait  = 60 * time.Second
	claimStale = 2 * time.Minute
)

// placeCacheEntry puts the complete temporary copy tmp in place as remote, unless a concurrent submit
// of the same content does so first, and reports whether that other entry is used. colinmarc/hdfs's
// rename replaces an existing target, and a replaced entry has a new modification time, which fails
// the localisation of the application that named the first one ("changed on src filesystem"; two
// submits at once did). So the rename happens only under a claim, a file the NameNode creates for one
// submit alone (create fails on an existing file); a submit that finds it claimed waits for the entry.
// If the claim is never released, the submit uses its own copy under its temporary name: complete,
// and never renamed or rewritten. An entry in place counts only if its content hashes to sum
// (entryHolds), read once per modification time while waiting; one that does not is replaced.
func placeCacheEntry(fsys FileSystem, tmp, remote, sum string, size int64, now func() time.Time, sleep func(time.Duration)) (string, bool, error) {
	var checked time.Time
	held := false
	ready := func() bool {
		fi, err := fsys.Stat(remote)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
			return false
		}
		if !fi.ModTime().Equal(checked) {
			checked, held = fi.ModTime(), entryHolds(fsys, remote, sum, size)
		}
		return held
	}
	claim := remote + ".claim"
	for try := 0; try < 2; try++ {
		if w, err := fsys.Create(claim, 0o600); err == nil {
			_ = w.Close()
			defer func() { _ = fsys.RemoveAll(claim) }()
			if ready() { // finished by another submit before this one claimed it
				_ = fsys.RemoveAll(tmp)
				return remote, true, nil
			}
			if err := fsys.Rename(tmp, remote); err != nil {
				_ = fsys.RemoveAll(tmp)
				return "", false, err
			}
			return remote, false, nil
		}
		for deadline := now().Add(claimWait); now().Before(deadline); sleep(200 * time.Millisecond) {
			if ready() {
				_ = fsys.RemoveAll(tmp)
				return remote, true, nil
			}
			fi, err := fsys.Stat(claim)
			if err != nil {
				break // released without an entry (that submit failed): claim it again
			}
			if now().Sub(fi.ModTime()) > claimStale {
				_ = fsys.RemoveAll(claim)
				break
			}
		}
	}
	return tmp, false, nil
}

// appMarkerPrefix starts the name of the file, in an entry's directory, that records an application
// using the entry (markCacheEntryUsed).
const appMarkerPrefix = ".app."

// cacheMarkersMax bounds the markers SweepCache looks at in one entry.
const cacheMarkersMax = 1024

// markCacheEntryUsed records a use of the entry in dir by app: a file .app.<app id> in it, which also
// sets the directory's modification time, SweepCache's measure of the last use; the entry's file
// keeps its own time. An application can run, and localise the entry again for a new container or
// AM attempt, long after its submit: SweepCache keeps an entry while an application that marked it
// still has its staging directory (it is removed when the application ends). A failure only makes
// the entry look older.
func markCacheEntryUsed(fsys FileSystem, dir, app string) {
	p := path.Join(dir, appMarkerPrefix+app)
	if w, err := fsys.Create(p, 0o600); err == nil {
		_ = w.Close()
		return
	}
	// Marked already (the same file in two tables): touch the directory still.
	t := path.Join(dir, ".used")
	if w, err := fsys.Create(t, 0o600); err == nil {
		_ = w.Close()
	}
	_ = fsys.RemoveAll(t)
}

// entryInUse returns an application that marked the entry in dir and whose staging directory is still
// there (it has not ended, or its leftovers were not removed yet), or "".
func entryInUse(fsys FileSystem, user, dir string) string {
	files, err := fsys.ReadDir(dir)
	if err != nil {
		return ""
	}
	for i, f := range files {
		if i >= cacheMarkersMax {
			break
		}
		app, ok := strings.CutPrefix(f.Name(), appMarkerPrefix)
		if !ok || !strings.HasPrefix(app, "application_") || strings.Contains(app, "/") {
			continue
		}
		if _, err := fsys.Stat(StagingDir(user, app)); err == nil {
			return app
		}
	}
	return ""
}

// SweepCache removes the entries of a user's cache that no submit has used for CacheMaxAge and no
// application that is still there uses (entryInUse), and says so on out. It looks at most at cacheSweepMax entries and leaves anything whose name is not an
// entry's alone.
func SweepCache(ctx context.Context, fsys FileSystem, user string, now time.Time, out io.Writer) (removed []string, err error) {
	dir := CacheDir(user)
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the cache %s: %w", dir, err)
	}
	for i, e := range entries {
		if i >= cacheSweepMax || ctx.Err() != nil {
			break
		}
		if !e.IsDir() || !cacheEntryName.MatchString(e.Name()) || now.Sub(e.ModTime()) < CacheMaxAge {
			continue
		}
		p := path.Join(dir, e.Name())
		// A long-running application still names it; removing it would fail its next localisation
		// (TestSweepCacheKeepsEntriesOfRunningApplications).
		if app := entryInUse(fsys, user, p); app != "" {
			continue
		}
		if err := fsys.RemoveAll(p); err != nil {
			return removed, fmt.Errorf("removing the cache entry %s: %w", p, err)
		}
		removed = append(removed, p)
		fmt.Fprintf(out, "removed the cache entry %s (unused for %d days)\n", p, int(now.Sub(e.ModTime())/(24*time.Hour)))
	}
	return removed, nil
}

// visibility maps am.visibility / taskexecutor.visibility to the manifest's value.
func visibility(v string) string {
	switch v {
	case jobfile.VisibilityApplication:
		return contract.VisibilityApplication
	case jobfile.VisibilityPublic:
		return contract.VisibilityPublic
	}
	return contract.VisibilityPrivate
}

// checkPublic refuses a PUBLIC resource the NodeManager would refuse: it localises a public file only
// when the file is world-readable and every directory above it world-executable.
func checkPublic(fsys FileSystem, uri string) error {
	u, err := url.Parse(uri)
	if err != nil {
		return err
	}
	p := path.Clean(u.Path)
	fi, err := fsys.Stat(p)
	if err != nil {
		return fmt.Errorf("%s: %w", uri, err)
	}
	need := os.FileMode(0o004)
	if fi.IsDir() {
		need = 0o005
	}
	if fi.Mode().Perm()&need != need {
		return fmt.Errorf(`visibility = "public": %s is %s, not readable by all users; the NodeManager localises public files only when they and every directory above them are (chmod o+r the file, o+x the directories), or use "private"`, uri, fi.Mode().Perm())
	}
	for d := path.Dir(p); ; d = path.Dir(d) {
		di, err := fsys.Stat(d)
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		if di.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf(`visibility = "public": the directory %s above %s is %s, not searchable by all users; the NodeManager localises public files only when every directory above them is (chmod o+x %s), or use "private"`, d, uri, di.Mode().Perm(), d)
		}
		if d == "/" {
			return nil
		}
	}
}

// shortName is an entry's path relative to the cache, for messages.
func shortName(user, remote string) string {
	return strings.TrimPrefix(remote, CacheDir(user)+"/")
}
