package launcher

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
)

// hostile is a value with a screen-clearing escape sequence, a bell and 100 KB of text.
var hostile = "\x1b[2J\x07" + strings.Repeat("v", 100<<10)

// assertInert fails when msg holds a control byte other than newline and tab or is longer than max.
func assertInert(t *testing.T, msg string, max int) {
	t.Helper()
	assert.LessOrEqual(t, len(msg), max, "message of %d bytes", len(msg))
	for _, c := range []byte(msg) {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			t.Errorf("raw control byte %q in %q", c, msg[:min(len(msg), 200)])
			return
		}
	}
}

// TestTokensRefreshValueIsEchoedBounded: a YARN_AM_TOKENS_REFRESH the launcher cannot read is echoed
// bounded and with its escapes shown, and is refused before any file is read (issue 33 §2).
func TestTokensRefreshValueIsEchoedBounded(t *testing.T) {
	t.Setenv(contract.EnvTokensURL, "https://am:1/tokens")
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", "/nonexistent/container_tokens")
	t.Setenv(contract.EnvTokensRefresh, hostile)
	_, err := TokenFileRefresherFromEnv(logrus.New())
	require.Error(t, err)
	assert.Contains(t, err.Error(), contract.EnvTokensRefresh)
	assert.Contains(t, err.Error(), `\x1b[2J\a`)
	assert.Contains(t, err.Error(), "(102405 bytes)")
	assertInert(t, err.Error(), 512)
}

// TestDiscoverPrintsHostileValuesInert: 'yarn-am discover' prints a discovery script's infos and this
// environment's values quoted when they hold escape sequences or are long: nothing reaches the
// terminal raw, and the output stays bounded (issue 33 §2).
func TestDiscoverPrintsHostileValuesInert(t *testing.T) {
	cfg := &resources.Config{Resources: []resources.Resource{{Name: "fpga", Amount: 1, YarnKey: "yarn.io/fpga", Driver: "exec"}}}
	infos := map[string][]resources.Info{"fpga": {{"index": hostile, "note": "plain value"}}}
	var out bytes.Buffer
	printDiscovery(&out, cfg, map[string]resources.Driver{}, infos)
	assert.Contains(t, out.String(), `index="\x1b[2J\a`)
	assert.Contains(t, out.String(), "note=plain value")
	assertInert(t, out.String(), 4<<10)
}
