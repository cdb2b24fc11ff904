package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
func SaveAppSecret(app, secret string, caCert []byte) error {
	if _, err := yarnrpc.ParseApplicationID(app); err != nil {
		return err
	}
	base, err := AppSecretsDir()
	if err != nil {
		return err
	}
	dir := filepath.Join(base, app)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("keeping the secret of %s: %w", app, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte(secret), 0o600); err != nil {
		return fmt.Errorf("keeping the secret of %s: %w", app, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), caCert, 0o600); err != nil {
		return fmt.Errorf("keeping the TLS authority of %s: %w", app, err)
	}
	return nil
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
		return "", nil, fmt.Errorf("no secret of %s in %s: only the user who submitted it, on the machine it was submitted from, can change it", app, dir)
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
