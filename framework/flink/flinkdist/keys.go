package flinkdist

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/internal/atomicfile"
	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/internal/classfile"
	"github.com/yarn-am/yarn-am/internal/text"
)

// A Flink key Flink does not know is ignored without a word: taskmanager.numberOfTaskSlot leaves the
// TaskManagers at one slot. The keys a Flink version knows are its ConfigOptions', whose keys are
// string constants of the classes that declare them (CoreOptions, TaskManagerOptions, ...); this file
// reads them from the home's lib/ jars, so the list is the version's own, never a copy
// (docs/flink.md#what-check-refuses).

// Bounds of the key scan: a lib/ of Flink 1.20 has ~170 *Options classes and ~2,000 keys, read in
// well under a second.
const (
	maxKeyClasses   = 5000
	maxKeyClassSize = 1 << 20
	maxKeys         = 100000
	keyScanTime     = 30 * time.Second
	maxKeyCache     = 8 << 20
)

// configKey is what a ConfigOption's key looks like: dotted lower-case words (camel case and dashes
// inside them), or one dashed word (scheduler-mode).
var configKey = regexp.MustCompile(`^([a-z][a-zA-Z0-9_-]*(\.[a-zA-Z0-9_-]+)+|[a-z][a-z0-9]*(-[a-z0-9]+)+)$`)

// keyClass reports whether a jar entry is a class that may declare ConfigOptions: Flink's own
// *Options classes (and their nested classes) and ConfigConstants, its legacy keys.
func keyClass(name string) bool {
	if !strings.HasPrefix(name, "org/apache/flink/") || strings.Contains(name, "/shaded/") || !strings.HasSuffix(name, ".class") {
		return false
	}
	base := strings.TrimSuffix(filepath.Base(name), ".class")
	if outer, _, nested := strings.Cut(base, "$"); nested {
		base = outer
	}
	return strings.HasSuffix(base, "Options") || base == "ConfigConstants"
}

// KnownKeys returns the configuration keys the home's Flink version declares, sorted: the string
// constants that look like keys in the *Options classes of its lib/ jars. cacheDir, when not "",
// keeps them in a file named by the lib/ jars' names, sizes and modification times, so a later check
// of the same home reads one small file.
func (h *Home) KnownKeys(cacheDir string) ([]string, error) {
	id, err := h.keysID()
	if err != nil {
		return nil, err
	}
	cache := ""
	if cacheDir != "" {
		cache = filepath.Join(cacheDir, "flink-keys-"+id+".txt")
		if b, err := boundedread.ReadFile("Flink key cache", cache, "a key list", maxKeyCache); err == nil {
			if keys := strings.Fields(string(b)); len(keys) > 0 {
				return keys, nil
			}
		}
	}
	deadline := time.Now().Add(keyScanTime)
	set := map[string]bool{}
	for _, jar := range h.LibJars {
		if err := jarKeys(jar, set, deadline); err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if cache != "" && len(keys) > 0 {
		// Best effort: a cache that cannot be written only costs the next check the scan. Replaced in
		// one step (atomicfile), so a check running beside this one reads all of the list or none.
		if err := os.MkdirAll(cacheDir, 0o755); err == nil {
			_ = atomicfile.Write(cache, []byte(strings.Join(keys, "\n")+"\n"), 0o644)
		}
	}
	return keys, nil
}

// keysID names the home's lib/ jars as they are: a jar replaced, added or removed gives another name.
func (h *Home) keysID() (string, error) {
	sum := sha256.New()
	for _, jar := range h.LibJars {
		st, err := os.Stat(jar)
		if err != nil {
			return "", fmt.Errorf("flink: home %s: %w", shown(h.Dir), err)
		}
		fmt.Fprintf(sum, "%s\x00%d\x00%d\n", filepath.Base(jar), st.Size(), st.ModTime().UnixNano())
	}
	return h.Version + "-" + hex.EncodeToString(sum.Sum(nil))[:16], nil
}

// errKeyScan is a scan past its bounds.
var errKeyScan = errors.New("flink: reading the home's configuration keys")

// jarKeys adds the keys declared in one jar to set.
func jarKeys(path string, set map[string]bool, deadline time.Time) error {
	f, err := boundedread.OpenRegular(path)
	if err != nil {
		return fmt.Errorf("%w: %v", errKeyScan, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%w: %v", errKeyScan, err)
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		return fmt.Errorf("%w: %s is not a jar: %v", errKeyScan, path, err)
	}
	classes := 0
	for _, e := range zr.File {
		if !keyClass(e.Name) {
			continue
		}
		if classes++; classes > maxKeyClasses {
			return fmt.Errorf("%w: %s has more than %d *Options classes", errKeyScan, path, maxKeyClasses)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: gave up after %v", errKeyScan, keyScanTime)
		}
		if e.UncompressedSize64 > maxKeyClassSize {
			continue
		}
		rc, err := e.Open()
		if err != nil {
			return fmt.Errorf("%w: %s: %s: %v", errKeyScan, path, text.Quote(e.Name), err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, maxKeyClassSize))
		rc.Close()
		if err != nil {
			return fmt.Errorf("%w: %s: %s: %v", errKeyScan, path, text.Quote(e.Name), err)
		}
		cf, err := classfile.Parse(b)
		if err != nil {
			continue // not Flink's to fail a check over: the class declares no key we can read
		}
		for _, s := range cf.StringConstants() {
			if k := string(s); len(k) <= 200 && configKey.MatchString(k) && !strings.HasPrefix(k, "org.apache.") {
				set[k] = true
			}
		}
		if len(set) > maxKeys {
			return fmt.Errorf("%w: more than %d keys", errKeyScan, maxKeys)
		}
	}
	return nil
}

// pluginKeyPrefixes are prefixes of keys that plugins and reporters define, which lib/ does not
// declare: a key under them is never taken for a misspelling.
var pluginKeyPrefixes = []string{"external-resource.", "metrics.reporter.", "metrics.reporters", "s3.", "s3a.", "fs.", "gs.", "oss.", "azure.", "traces.reporter.", "events.reporter."}

// NearMiss returns the known key that key is probably a misspelling of: a key that is not known, not
// under pluginKeyPrefixes, and within a small edit distance of a known one (at most 2 edits, or the
// same letters in another case); "" otherwise. known must be sorted.
func NearMiss(key string, known []string) string {
	if _, ok := slices.BinarySearch(known, key); ok {
		return ""
	}
	for _, p := range pluginKeyPrefixes {
		if strings.HasPrefix(key, p) {
			return ""
		}
	}
	best, bestD := "", 3
	for _, k := range known {
		if absInt(len(k)-len(key)) >= bestD {
			continue
		}
		d := text.EditDistance(key, k)
		if strings.EqualFold(key, k) {
			d = 1
		}
		if d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func absInt(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
