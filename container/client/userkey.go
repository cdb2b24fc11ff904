package client

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// A user's keys (docs/security.md#keys-kept-on-the-submitting-machine): secrets that only the user's
// own submits hold, to sign or check what the user's applications leave on the cluster for later
// ones (a Flink JobManager's class-data-sharing archive, docs/flink.md#class-data-sharing). Anything
// that runs in the user's containers holds the user's HDFS token and can write the user's files
// there; it never holds these keys, which stay on this machine, readable by the user alone.

// userKeyBytes is a key's size: 256 bits.
const userKeyBytes = 32

// userKeyName is what a key's name may be.
var userKeyName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// UserKeysDir is where UserKey keeps the keys: $YARN_AM_CONFIG_DIR/keys, else the user's
// configuration directory's yarn-am/keys.
func UserKeysDir() (string, error) {
	if d := os.Getenv("YARN_AM_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "keys"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no directory to keep your keys in: %w (set YARN_AM_CONFIG_DIR)", err)
	}
	return filepath.Join(d, userDirName, "keys"), nil
}

// UserKey returns the user's key named name, 32 random bytes kept in UserKeysDir()/<name> (hex, mode
// 0600), made on first use. The directories must be the user's own and writable by no one else
// (privateDir), the file a regular file of the user's that no one else may read; a new key is written
// under a random name and linked into place, so two submits at once agree on one key and no one sees
// half of it. A key that is not what it should be is an error naming the file, never replaced: the
// archives it signed would all be refused.
func UserKey(name string) ([]byte, error) {
	if !userKeyName.MatchString(name) {
		return nil, fmt.Errorf("a key's name %q: want lower-case letters, digits and '-'", name)
	}
	base, err := UserKeysDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("your key %s: %w", name, err)
	}
	for d := base; ; d = filepath.Dir(d) {
		// The keys' directory and the one above it (yarn-am's own): whoever could write either could
		// put a key of theirs in place.
		if _, err := privateDir(d); err != nil {
			return nil, fmt.Errorf("your key %s: %w", name, err)
		}
		if d != base {
			break
		}
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return nil, fmt.Errorf("your key %s: %w", name, err)
	}
	defer root.Close()
	key, err := readUserKey(root, base, name)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	fresh := make([]byte, userKeyBytes)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	suffix := make([]byte, 8)
	if _, err := rand.Read(suffix); err != nil {
		return nil, err
	}
	tmp := "." + name + "-" + hex.EncodeToString(suffix)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("your key %s: %w", name, err)
	}
	_, err = f.WriteString(hex.EncodeToString(fresh) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// link, not rename: it fails on an existing name, so a key another submit put first wins.
		err = root.Link(tmp, name)
		if errors.Is(err, fs.ErrExist) {
			err = nil
		}
	}
	_ = root.Remove(tmp)
	if err != nil {
		return nil, fmt.Errorf("your key %s: %w", name, err)
	}
	return readUserKey(root, base, name)
}

// readUserKey reads the key file name in root (the directory base) without following a link: a
// regular file of the effective user's, readable by no one else, of 64 hex digits.
func readUserKey(root *os.Root, base, name string) ([]byte, error) {
	path := filepath.Join(base, name)
	linked := fmt.Errorf("your key %s is a symbolic link; remove it, and yarn-am makes a new key (archives the old one signed are then refused)", path)
	if fi, err := root.Lstat(name); err != nil {
		return nil, err
	} else if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, linked
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, linked // put there since the Lstat
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch st, ok := fi.Sys().(*syscall.Stat_t); {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("your key %s is not a regular file (%s)", path, fi.Mode().Type())
	case ok && int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("your key %s is owned by uid %d, not by you (uid %d); remove it, and yarn-am makes a new key", path, st.Uid, os.Geteuid())
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("your key %s is %s, readable by others; remove it, and yarn-am makes a new key (archives the old one signed are then refused)", path, fi.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, 2*userKeyBytes+2))
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != userKeyBytes {
		return nil, fmt.Errorf("your key %s does not hold %d hex digits; remove it, and yarn-am makes a new key", path, 2*userKeyBytes)
	}
	return key, nil
}
