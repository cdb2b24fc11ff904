package flink

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/jobfile"
)

// The autoscaler's keys default to off and to pacing far shorter than Flink's operator's; each
// is read as written.
func TestAutoscaleKeys(t *testing.T) {
	p := writeJob(t, "[flink]\nhome = \"flink\"\n")
	fakeFlinkHome(t, filepath.Dir(p))
	j, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, autoscaleSpec{Mode: autoscaleOff, Utilisation: 0.7, Band: 0.2, Min: 1, Window: time.Minute,
		Stabilise: 30 * time.Second, Grace: 5 * time.Minute, CatchUp: 2 * time.Minute, MaxStep: 4}, specOf(j).Autoscale)

	p = writeJob(t, `[flink]
home = "flink"
autoscale = "recommend"
autoscale-utilisation = 0.6
autoscale-band = 0.1
autoscale-min-parallelism = 2
autoscale-max-parallelism = 8
autoscale-window = "20s"
autoscale-stabilisation = "0s"
autoscale-scale-down-grace = "90s"
autoscale-max-step = 2
autoscale-catch-up = "1m"
`)
	fakeFlinkHome(t, filepath.Dir(p))
	j, err = jobfile.LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, autoscaleSpec{Mode: autoscaleRecommend, Utilisation: 0.6, Band: 0.1, Min: 2, Max: 8, Window: 20 * time.Second,
		Grace: 90 * time.Second, CatchUp: time.Minute, MaxStep: 2}, specOf(j).Autoscale)
}

// A wrong autoscaler key is refused with its name, its value and what is valid.
func TestAutoscaleKeyProblems(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`autoscale = "yes"`, `flink.autoscale = "yes": want "off" (the default), "recommend" (decisions shown as events and in status, nothing changed) or "on"`},
		{`autoscale = true`, `flink.autoscale = true: want a string`},
		{`autoscale-utilisation = 0`, `flink.autoscale-utilisation = 0: want a fraction above 0 and at most 1`},
		{`autoscale-utilisation = 1.5`, `flink.autoscale-utilisation = 1.5: want a fraction above 0 and at most 1`},
		{`autoscale-utilisation = "70%"`, `flink.autoscale-utilisation = "70%": want a number, not a string`},
		{`autoscale-band = 2`, `flink.autoscale-band = 2: want a fraction above 0 and at most 1`},
		{`autoscale-min-parallelism = 0`, `flink.autoscale-min-parallelism = 0: want an integer from 1 to 32768`},
		{`autoscale-max-parallelism = -1`, `flink.autoscale-max-parallelism = -1: want an integer from 0 to 32768`},
		{"autoscale-min-parallelism = 4\nautoscale-max-parallelism = 2", `flink.autoscale-min-parallelism = 4 is above flink.autoscale-max-parallelism = 2`},
		{`autoscale-window = "5s"`, `flink.autoscale-window = "5s": want a Go duration from 10s to 24h0m0s, e.g. "1m0s"`},
		{`autoscale-window = "a minute"`, `flink.autoscale-window = "a minute": want a Go duration from 10s to 24h0m0s`},
		{`autoscale-stabilisation = "-1s"`, `flink.autoscale-stabilisation = "-1s": want a Go duration from 0s to 24h0m0s, e.g. "30s"`},
		{`autoscale-scale-down-grace = "48h"`, `flink.autoscale-scale-down-grace = "48h": want a Go duration from 0s to 24h0m0s, e.g. "5m0s"`},
		{`autoscale-catch-up = "0s"`, `flink.autoscale-catch-up = "0s": want a Go duration from 1s to 24h0m0s, e.g. "2m0s"`},
		{`autoscale-max-step = 0.5`, `flink.autoscale-max-step = 0.5: want a factor from 1 to 100`},
		{`autoscale = "on"`, `flink.autoscale = "on": a session cluster (no flink.jar) runs jobs the AM does not own`},
		{`autoscale-windw = "1m"`, `unknown key "flink.autoscale-windw" (did you mean "flink.autoscale-window"?)`},
	} {
		p := writeJob(t, "[flink]\nhome = \"flink\"\n"+tc.body+"\n")
		fakeFlinkHome(t, filepath.Dir(p))
		_, err := jobfile.LoadJob(p)
		var je *jobfile.JobError
		require.True(t, errors.As(err, &je), "%q: %v", tc.body, err)
		assert.Contains(t, err.Error(), tc.want, tc.body)
	}
}

// check refuses autoscale = "on" without the demand and the adaptive scheduler, naming what is
// missing; "recommend" needs neither.
func TestCheckAutoscaleOnNeedsDemandAndTheAdaptiveScheduler(t *testing.T) {
	t.Setenv("YARN_AM_CACHE", t.TempDir())
	job := strings.Replace(checkJob, "[flink]\n", "[flink]\nautoscale = \"on\"\n", 1)
	p := writeJob(t, job)
	checkHome(t, filepath.Dir(p), "parallelism.default: 1\n", "")
	_, err := client.LoadJob(p, client.JobOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `flink.autoscale = "on" needs flink.taskmanagers = "demand" (the TaskManagers follow the parallelism it sets) and "jobmanager.scheduler" = "adaptive" in [flink.config]`)
	assert.Contains(t, err.Error(), `or use "recommend", which only shows its decisions`)

	_, err = client.LoadJob(p, client.JobOptions{Defines: []string{"jobmanager.scheduler=adaptive"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `needs flink.taskmanagers = "demand"`)
	assert.NotContains(t, err.Error(), "jobmanager.scheduler")

	p = writeJob(t, strings.Replace(job, "[flink]\n", "[flink]\ntaskmanagers = \"demand\"\n", 1))
	checkHome(t, filepath.Dir(p), "parallelism.default: 1\n", "")
	_, err = client.LoadJob(p, client.JobOptions{Defines: []string{"jobmanager.scheduler=adaptive"}})
	assert.NoError(t, err)

	p = writeJob(t, strings.Replace(checkJob, "[flink]\n", "[flink]\nautoscale = \"recommend\"\n", 1))
	checkHome(t, filepath.Dir(p), "parallelism.default: 1\n", "")
	_, err = client.LoadJob(p, client.JobOptions{})
	assert.NoError(t, err)
}
