package launcher

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/resources"
)

// 2,001 warnings (resources without a driver) print text.MaxListed of them and their count, as a list
// of problems does: launch and discover used to print every one (issue 40 §7).
func TestLoadResourcesListsAtMostMaxListedWarnings(t *testing.T) {
	const n = 2001
	names := make([]string, n)
	overrides := []string{}
	for i := range names {
		names[i] = fmt.Sprintf("r%d", i)
		overrides = append(overrides, fmt.Sprintf("external-resource.r%d.amount=1", i), fmt.Sprintf("external-resource.r%d.yarn.config-key=yarn.io/r%d", i, i))
	}
	overrides = append(overrides, "external-resources="+strings.Join(names, ";"))
	var stderr bytes.Buffer
	_, _, ok := LoadResources(resources.Sources{Overrides: overrides}, "yarn-am launch", &stderr)
	require.True(t, ok, stderr.String())
	out := stderr.String()
	assert.Equal(t, text.MaxListed+1, strings.Count(out, "yarn-am launch: warning: "), out)
	assert.Contains(t, out, fmt.Sprintf("yarn-am launch: warning: and %d more warnings\n", n-text.MaxListed))
	assert.Less(t, len(out), 8<<10)
}
