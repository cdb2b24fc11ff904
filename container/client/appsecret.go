package client

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// The application's secret and TLS authority certificate are kept on the submitting machine, readable
// by the submitting OS user alone, so that commands that write to the AM (yarn-am scale) can
// authenticate later (docs/commands.md#yarn-am-scale). The secret is never sent to the
// ResourceManager's reports; only the AM's credentials and this directory hold it.

// userDirName names yarn-am's directories under the user's configuration and cache directories (the
// project's own name, as its application tag).
const userDirName = contract.ApplicationTag

// AppSecretsDir is where SaveAppSecret keeps them: $YARN_AM_CONFIG_DIR, else the user's configuration
// directory's yarn-am/apps.
func AppSecretsDir() (string, error) {
	if d := os.Getenv("YARN_AM_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "apps"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no directory to keep the application secret in: %w (set YARN_AM_CONFIG_DIR)", err)
	}
	return filepath.Join(d, userDirName, "apps"), nil
}

// SaveAppSecret keeps app's secret and CA certificate in AppSecretsDir()/<app>/ (mode 0700/0600).
// The directories must be the user's own and writable by no one else (privateDir), and the files are
// created afresh under a random name without following links, then renamed into place: a link planted
// at a file's name by anyone who could write there is replaced, never written through
// (TestAppSecretRefusesPlantedLinksAndSharedDirectories).
func SaveAppSecret(app, secret string, caCert []byte) error {
	if _, err := yarnrpc.ParseApplicationID(app); err != nil {
		return err
	}
	base, err := AppSecretsDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return fmt.Errorf("keeping the secret of %s: %w", app, err)
	}
	if _, err := privateDir(base); err != nil {
		return fmt.Errorf("keeping the secret of %s: %w", app, err)
	}
	dir := filepath.Join(base, app)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("keeping the secret of %s: %w", app, err)
	}
	fi, err := privateDir(dir)
	if err != nil {
		return fmt.Errorf("keeping the secret of %s: %w", app, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("keeping the secret of %s: %w", app, err)
	}
	defer root.Close()
	// The directory opened is the one checked, not one swapped in after the check.
	if opened, err := root.Stat("."); err != nil || !os.SameFile(fi, opened) {
		return fmt.Errorf("keeping the secret of %s: %s changed while it was checked", app, dir)
	}
	if err := writeNew(root, "secret", []byte(secret)); err != nil {
		return fmt.Errorf("keeping the secret of %s: %w", app, err)
	}
	if err := writeNew(root, "ca.pem", caCert); err != nil {
		return fmt.Errorf("keeping the TLS authority of %s: %w", app, err)
	}
	return nil
}

// privateDir checks that dir is a directory (not a link to one) owned by the effective user and
// neither group- nor world-writable: in a directory someone else can write, they could plant or
// replace the files.
func privateDir(dir string) (os.FileInfo, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory (%s); remove it, and yarn-am makes its own", dir, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("%s is owned by uid %d, not by you (uid %d); remove it, or set YARN_AM_CONFIG_DIR to a directory of your own", dir, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%s is %s, writable by others; make it yours alone (chmod 700 %s)", dir, fi.Mode().Perm(), dir)
	}
	return fi, nil
}

// writeNew writes data to name in root with mode 0600 through a file it creates exclusively
// (O_EXCL|O_NOFOLLOW: no existing file or link is opened), then renames it over name.
func writeNew(root *os.Root, name string, data []byte) error {
	suffix := make([]byte, 8)
	if _, err := rand.Read(suffix); err != nil {
		return err
	}
	tmp := "." + name + "-" + hex.EncodeToString(suffix)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return err
}

// LoadAppSecret reads what SaveAppSecret kept for app.
func LoadAppSecret(app string) (secret string, caCert []byte, err error) {
	if _, err := yarnrpc.ParseApplicationID(app); err != nil {
		return "", nil, err
	}
	base, err := AppSecretsDir()
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(base, app)
	s, err := boundedread.ReadFile("application secret", filepath.Join(dir, "secret"), "the secret submit kept", 4096)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, &NoAppSecretError{App: app, Dir: dir}
	}
	if err != nil {
		return "", nil, err
	}
	ca, err := boundedread.ReadFile("application TLS authority", filepath.Join(dir, "ca.pem"), "the certificate submit kept", 64<<10)
	if err != nil {
		return "", nil, err
	}
	return string(s), ca, nil
}

// NoAppSecretError: this machine keeps no secret of App (another user's application, or one submitted
// from another machine). It is an fs.ErrNotExist.
type NoAppSecretError struct{ App, Dir string }

func (e *NoAppSecretError) Error() string {
	return fmt.Sprintf("no secret of %s in %s: only the user who submitted it, on the machine it was submitted from, can change it", e.App, e.Dir)
}

func (e *NoAppSecretError) Unwrap() error { return fs.ErrNotExist }
