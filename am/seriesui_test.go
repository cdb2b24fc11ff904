package am

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// The page shows each of the framework's series (a Flink job's parallelism per vertex over time,
// docs/flink.md#autoscaling) as a small table, newest first, its values in the caption, as text:
// a name with markup stays text. Without series, no table.
func TestUIPageShowsTheFrameworksSeries(t *testing.T) {
	chromium := uiChromium(t)
	at := time.Date(2026, 11, 29, 20, 1, 0, 0, time.UTC)
	st := contract.Status{App: "application_1_0009", State: contract.StateRunning, Framework: &contract.FrameworkStatus{Title: "Flink job",
		Details: []contract.Detail{{Name: "State", Value: "RUNNING"}}, At: at,
		Series: []contract.FrameworkSeries{{Name: "Parallelism of Source -> Map <b>x</b>", Points: []contract.SeriesPoint{
			{At: at, Value: 1, Note: "running"}, {At: at.Add(40 * time.Second), Value: 2, Note: "decided"}, {At: at.Add(70 * time.Second), Value: 2, Note: "running"}}}}}}
	dom := renderedPage(t, chromium, st)
	table := regexp.MustCompile(`(?s)<table class="fw-series" data-series="([^"]*)">(.*?)</table>`).FindStringSubmatch(dom)
	require.NotNil(t, table, "a table for the series")
	assert.Equal(t, "Parallelism of Source -&gt; Map &lt;b&gt;x&lt;/b&gt;", table[1])
	assert.Contains(t, table[2], "<caption>Parallelism of Source -&gt; Map &lt;b&gt;x&lt;/b&gt;: 1 → 2 → 2</caption>", "the name as text, the values in order")
	rows := regexp.MustCompile(`<tr><td class="at">([^<]*)</td><td class="value">(\d+)</td><td class="note">([^<]*)</td></tr>`).FindAllStringSubmatch(table[2], -1)
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"2026-11-29 20:02:10 UTC", "2", "running"}, rows[0][1:], "newest first")
	assert.Equal(t, []string{"2026-11-29 20:01:40 UTC", "2", "decided"}, rows[1][1:])
	assert.Equal(t, []string{"2026-11-29 20:01:00 UTC", "1", "running"}, rows[2][1:])

	st.Framework.Series = nil
	assert.False(t, strings.Contains(renderedPage(t, chromium, st), `class="fw-series"`), "no series: no table")
}
