package flink

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/atomicfile"
	"github.com/yarn-am/yarn-am/internal/boundedread"
)

// This file packs a directory (a Flink home, a JDK) into an archive once per content, in the
// client's archive cache, which is private and bounded (docs/flink.md#the-flink-distribution):
// ship.go packs the home with it, javahome.go the JDK.

// flinkArchiveCache is where packed Flink homes are kept on the client: $YARN_AM_CACHE, else the
// user's cache directory, under yarn-am/flink-archives; without either (no $HOME), a directory of
// the effective user's own under the temporary directory. HomeArchive reuses an archive there only
// if the directory is private (privateArchiveDir).
func flinkArchiveCache() string {
	if d := os.Getenv("YARN_AM_CACHE"); d != "" {
		return filepath.Join(d, "flink-archives")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), fmt.Sprintf("%s-%d", contract.ApplicationTag, os.Geteuid()), "flink-archives")
	}
	return filepath.Join(d, contract.ApplicationTag, "flink-archives")
}

// flinkArchivesKept is how many packed homes the archive cache keeps, the most recently used: a
// home is some hundred MB, and each Flink upgrade or changed conf/ packs a new one
// (TestFlinkArchiveCacheIsPrivateAndBounded).
const flinkArchivesKept = 3

// privateArchiveDir creates dir (0700) if needed and reports why it is not private: a directory that
// is not the effective user's own, or that anyone else may write, or a symbolic link; one of the
// user's own that others may only read or list is made 0700. An archive found by name in such a directory may have been put there by another
// user, and whoever submits it runs its code. Every directory above it counts too (privatePath):
// whoever may rename an entry of a parent can swap the whole cache for one of their own between the
// check and the use (the no-$HOME fallback under /tmp was won in 137 tries; TestArchiveCacheChecksEveryDirectoryAbove).
func privateArchiveDir(dir string) (reason string) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err.Error()
	}
	if abs, err := filepath.Abs(dir); err != nil {
		return err.Error()
	} else if why := privatePath(abs); why != "" {
		return why
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err.Error()
	}
	if !fi.IsDir() {
		return "it is not a directory (" + fi.Mode().Type().String() + ")"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Sprintf("it is owned by uid %d, not by you (uid %d)", st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("it is %s, writable by others (chmod 700 %s)", fi.Mode().Perm(), dir)
	}
	// Yours and writable by you alone: nothing in it was planted. Its archives can hold conf/ files
	// with credentials, so others may not list it either.
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return err.Error()
		}
	}
	return ""
}

// maxPathLinks bounds the symbolic links privatePath follows (as the kernel's 40).
const maxPathLinks = 40

// privatePath reports why a directory above abs (an absolute path) lets someone other than the
// effective user and root change what abs names: a directory owned by another user, one that others
// may write without the sticky bit (with it, as /tmp, they cannot rename or remove the entries of
// others, and the entry below is checked to be the user's or root's), or a symbolic link owned by
// another user; a link of the user's or root's is followed and its target checked the same way.
// "" when none does.
func privatePath(abs string) string {
	return privatePathN(abs, 0)
}

func privatePathN(abs string, links int) string {
	euid := os.Geteuid()
	trusted := func(fi os.FileInfo) (int, bool) {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return -1, true // no owners on this system
		}
		return int(st.Uid), int(st.Uid) == euid || st.Uid == 0
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil {
			return err.Error()
		}
		uid, ok := trusted(fi)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			if !ok {
				return fmt.Sprintf("the link %s above it is owned by uid %d, not by you (uid %d) or root", p, uid, euid)
			}
			if links++; links > maxPathLinks {
				return fmt.Sprintf("more than %d symbolic links above it", maxPathLinks)
			}
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				return err.Error()
			}
			// The target's own directories, then the target itself as a directory above abs.
			if why := privatePathN(filepath.Join(target, "x"), links); why != "" {
				return why
			}
		case !fi.IsDir():
			return fmt.Sprintf("%s above it is not a directory (%s)", p, fi.Mode().Type())
		case !ok:
			return fmt.Sprintf("the directory %s above it is owned by uid %d, not by you (uid %d) or root", p, uid, euid)
		case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0:
			return fmt.Sprintf("the directory %s above it is %s, writable by others (who can replace what is below it)", p, fi.Mode().Perm())
		}
		if p == filepath.Dir(p) {
			return ""
		}
	}
}

// pruneArchives removes all but the flinkArchivesKept most recently used archives of dir whose names
// start with prefix (a reused archive's modification time is set when it is reused), keeping keep.
func pruneArchives(dir, prefix, keep string) {
	names, err := filepath.Glob(filepath.Join(dir, prefix+"*.tar"))
	if err != nil {
		return
	}
	type archive struct {
		name string
		mod  int64
	}
	var as []archive
	for _, n := range names {
		if fi, err := os.Lstat(n); err == nil && fi.Mode().IsRegular() && n != keep {
			as = append(as, archive{n, fi.ModTime().UnixNano()})
		}
	}
	sort.Slice(as, func(i, j int) bool { return as[i].mod > as[j].mod })
	for i, a := range as {
		if i >= flinkArchivesKept-1 {
			_ = os.Remove(a.name)
		}
	}
}

// packing is what packDir packs of a directory and how it names it: a Flink home (HomeArchive) or a
// JDK (javaHomeArchive).
type packing struct {
	key    string   // the job-file key that names the directory, for messages
	noun   string   // "the Flink home"
	prefix string   // of the archives' names in the cache, which pruneArchives keeps apart
	parts  []string // what of the directory to pack; nil: all of it
	// follow packs a symbolic link as what it points to and leaves out one that points nowhere: a
	// distribution's JDK links files into /etc and docs into /usr/share.
	follow bool
}

// packDir packs what p names of dir into an archive in cacheDir, once per content (HomeArchive).
func packDir(p packing, home, cacheDir string, out io.Writer) (string, error) {
	type entry struct {
		rel string
		fi  fs.FileInfo
	}
	var entries []entry
	parts, walk := p.parts, filepath.Walk
	if parts == nil {
		parts = []string{"."}
	}
	if p.follow {
		walk = walkFollowing
	}
	for _, part := range parts {
		root := filepath.Join(home, part)
		if _, err := os.Lstat(root); err != nil {
			if os.IsNotExist(err) && part == "conf" {
				continue // flink-dist's defaults apply (docs/flink.md#configuration)
			}
			return "", fmt.Errorf("%s %s: %w", p.key, home, err)
		}
		err := walk(root, func(path string, fi fs.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if !fi.Mode().IsRegular() && !fi.IsDir() {
				return fmt.Errorf("%s is neither a file nor a directory; %s to ship holds only those", path, p.noun)
			}
			rel, _ := filepath.Rel(home, path)
			if rel != "." {
				entries = append(entries, entry{filepath.ToSlash(rel), fi})
			}
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", p.key, home, err)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rel < entries[j].rel })
	// The listing names the archive, so it must tell two contents apart without reading them: the
	// directory's own path (two JDKs or homes of one layout, sizes and times are two archives) and
	// each modification time to the nanosecond (a file rewritten with as many bytes within the same
	// second is another content).
	h := sha256.New()
	abs, err := filepath.Abs(home)
	if err != nil {
		abs = home
	}
	fmt.Fprintf(h, "%s\x00\n", abs)
	for _, e := range entries {
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%o\n", e.rel, e.fi.Size(), e.fi.ModTime().UnixNano(), e.fi.Mode())
	}
	base := p.prefix + hex.EncodeToString(h.Sum(nil))[:32] + ".tar"
	shared := privateArchiveDir(cacheDir)
	if shared != "" {
		d, err := os.MkdirTemp("", "yarn-am-flink-home-*") // 0700, a new name
		if err != nil {
			return "", fmt.Errorf("the Flink archive cache %s is not private (%s), and no temporary directory: %w", cacheDir, shared, err)
		}
		fmt.Fprintf(out, "not reusing Flink archives in %s: %s; packing into %s instead (remove it after the submit)\n", cacheDir, shared, d)
		cacheDir = d
	}
	name := filepath.Join(cacheDir, base)
	if fi, err := os.Lstat(name); err == nil && fi.Mode().IsRegular() && shared == "" {
		now := time.Now()
		_ = os.Chtimes(name, now, now) // most recently used: pruneArchives keeps it
		return name, nil
	}
	// The archive is written beside its name and renamed over it (atomicfile): a submit running
	// beside this one reuses a whole archive or packs its own, never half of one.
	var packErr error // the packing's own error, returned as it is
	err = atomicfile.WriteFunc(name, 0o600, func(w io.Writer) error {
		fmt.Fprintf(out, "packing %s %s into %s (once per content)\n", p.noun, home, name)
		tw := tar.NewWriter(w)
		for _, e := range entries {
			hdr := &tar.Header{Name: e.rel, Mode: int64(e.fi.Mode().Perm()), ModTime: e.fi.ModTime().Truncate(1e9), Format: tar.FormatPAX}
			if e.fi.IsDir() {
				hdr.Typeflag, hdr.Name = tar.TypeDir, e.rel+"/"
			} else {
				hdr.Typeflag, hdr.Size = tar.TypeReg, e.fi.Size()
			}
			if packErr = tw.WriteHeader(hdr); packErr != nil {
				return packErr
			}
			if e.fi.IsDir() {
				continue
			}
			if packErr = copyFileInto(tw, filepath.Join(home, filepath.FromSlash(e.rel)), e.fi.Size()); packErr != nil {
				return packErr
			}
		}
		packErr = tw.Close()
		return packErr
	}, atomicfile.TempPattern("."+p.prefix+"*.tar"))
	if err != nil && err != packErr {
		return "", fmt.Errorf("the Flink archive cache %s: %w", cacheDir, err)
	}
	if err != nil {
		return "", err
	}
	if shared == "" {
		pruneArchives(cacheDir, p.prefix, name)
	}
	return name, nil
}

// copyFileInto copies exactly size bytes of path (its size when listed) into w.
func copyFileInto(w io.Writer, path string, size int64) error {
	// Regular files only, checked on what was opened: a named pipe put in a listed file's place
	// would block the open (docs/running.md#limits-on-input-files).
	f, err := boundedread.OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(w, io.LimitReader(f, size))
	if err == nil && n != size {
		err = fmt.Errorf("%s changed while it was packed (%d of %d bytes)", path, n, size)
	}
	if err != nil && !strings.Contains(err.Error(), path) {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return err
}

// walkFollowing is filepath.Walk following symbolic links: a link is visited as what it points to,
// one that points nowhere is left out, and a directory reached again below itself is refused (a
// link loop).
func walkFollowing(root string, fn filepath.WalkFunc) error {
	return walkFollow(root, fn, map[string]bool{})
}

func walkFollow(path string, fn filepath.WalkFunc, open map[string]bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		if lfi, lerr := os.Lstat(path); lerr == nil && lfi.Mode()&fs.ModeSymlink != 0 && errors.Is(err, fs.ErrNotExist) {
			return nil // a link to what is not installed (a JDK's src.zip)
		}
		return fn(path, nil, err)
	}
	if err := fn(path, fi, nil); err != nil || !fi.IsDir() {
		return err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fn(path, fi, err)
	}
	if open[real] {
		return fmt.Errorf("%s leads back to %s: a loop of symbolic links", path, real)
	}
	open[real] = true
	defer delete(open, real)
	entries, err := os.ReadDir(path)
	if err != nil {
		return fn(path, fi, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		if err := walkFollow(filepath.Join(path, n), fn, open); err != nil {
			return err
		}
	}
	return nil
}
