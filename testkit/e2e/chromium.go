//go:build integration

package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	browser "github.com/yarn-am/yarn-am/testkit/chromium"
)

// UpdateShotEnv names the variable that, set to 1, also writes the web UI test's screenshot to
// docs/img/ui.png (the README's picture).
const UpdateShotEnv = "UPDATE_UI_SCREENSHOT"

// ChromiumPath finds Debian's chromium (testdata/ui/install-chromium.sh installs it).
func ChromiumPath(t *testing.T) string {
	p := browser.Path()
	if p == "" {
		require.FailNow(t, "chromium is not installed: run testdata/ui/install-chromium.sh (make test does)")
	}
	return p
}
