//go:build integration

package flink_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// TestFlink2ApplicationWhoseMainThrowsFails: on Flink 2.3 a main() that throws before it submits a
// job fails the *application* (FLIP-549/560): the JobManager keeps running and /jobs/overview stays
// empty. The driver reads /applications/overview (docs/flink.md#the-rest-api), so the YARN
// application FAILS as soon as Flink's application does, with the user's exception (the test job's
// gpu mode given a parallelism that is no number) in the diagnostics. Without it the application
// would run until killed.
func TestFlink2ApplicationWhoseMainThrowsFails(t *testing.T) {
	e2e.Env(t)
	job := flinkJobOf(t, flink2, "flink2-bad-main", 1, 1, []string{"gpu", "x"}, "")
	start := time.Now()
	r := e2e.YarnAM(t, 6*time.Minute, "submit", job)
	require.NotEqual(t, 0, r.Code, "a Flink application whose main() throws fails the submit:\n%s", r)
	t.Logf("measured: submit -> application FAILED %s (load %s)", time.Since(start).Round(time.Second), loadAvgE2E())
	id := e2e.SubmittedID(r.Stdout)
	d := e2e.Status(t, id)
	assert.Equal(t, "FAILED", d.Report.FinalStatus)
	assert.Regexp(t, `Flink application yarnam\.flinkjob\.Job \([0-9a-f]{32}\) FAILED: `+regexp.QuoteMeta(`java.lang.NumberFormatException: For input string: "x"`),
		d.Report.Diagnostics, "Flink's application failure is the application's diagnostics\n%s", e2e.ContainerLogs(id))
}
