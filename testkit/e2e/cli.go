//go:build integration

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/itest"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// Env checks the environment and returns the yarn-am binary (testkit/itest).
func Env(t *testing.T) string {
	t.Helper()
	itest.RequireEnv(t, "HADOOP_CONF_DIR", "YARN_AM_NM_LOG_DIRS")
	return itest.Binary(t)
}

// Result is what one run of the yarn-am binary left: its output, exit code and run time.
type Result struct {
	Stdout, Stderr string
	Code           int
	Took           time.Duration
}

// String shows the run for a failure message: exit code, time, stdout and stderr.
func (r Result) String() string {
	return fmt.Sprintf("exit %d after %s\n--- stdout\n%s--- stderr\n%s", r.Code, r.Took.Round(time.Millisecond), r.Stdout, r.Stderr)
}

// YarnAM runs the binary with a timeout.
func YarnAM(t *testing.T, timeout time.Duration, args ...string) Result {
	t.Helper()
	return yarnAMIn(t, "", timeout, args...)
}

// yarnAMIn runs the binary in dir ("": the test's directory) with a timeout.
func yarnAMIn(t *testing.T, dir string, timeout time.Duration, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, Env(t), args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String(), Took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("running yarn-am %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("yarn-am %v did not finish within %s:\n%s", args, timeout, r)
	}
	return r
}

// AppIDRe matches an application id anywhere in a text.
var AppIDRe = regexp.MustCompile(`application_\d+_\d+`)

// submittedRe finds the application submit names as its own ("submitted application_…"): its output
// may name others first (the leftover sweep, docs/running.md#nothing-left-behind).
var submittedRe = regexp.MustCompile(`submitted (application_\d+_\d+)`)

// SubmittedID is the id of the application a submit's output says it submitted, or "".
func SubmittedID(out string) string {
	if m := submittedRe.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// SubmitDetached submits and returns the application id.
func SubmitDetached(t *testing.T, args ...string) string {
	t.Helper()
	r := YarnAM(t, 2*time.Minute, append([]string{"submit", "--detach"}, args...)...)
	require.Equal(t, 0, r.Code, "submit --detach:\n%s", r)
	lines := strings.Fields(strings.TrimSpace(r.Stdout))
	id := lines[len(lines)-1]
	require.Regexp(t, `^application_\d+_\d+$`, id, "the last line of submit --detach is the id:\n%s", r)
	t.Cleanup(func() { KillQuietly(id) })
	return id
}

// KillQuietly kills application id unless it has ended, ignoring every error: a test's cleanup.
func KillQuietly(id string) {
	rm, err := RMClient()
	if err != nil {
		return
	}
	defer rm.Close()
	appID, err := yarnrpc.ParseApplicationID(id)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r, err := rm.GetApplicationReport(ctx, appID); err == nil {
		switch r.GetYarnApplicationState().String() {
		case "FINISHED", "FAILED", "KILLED":
			return
		}
	}
	_, _ = rm.KillApplication(ctx, appID, "e2e test cleanup")
}

// RMClient is a client of the mini cluster's ResourceManager (HADOOP_CONF_DIR); the caller closes it.
func RMClient() (*yarnrpc.ApplicationClient, error) {
	conf, err := yarnrpc.LoadConfigFromEnv()
	if err != nil {
		return nil, err
	}
	return yarnrpc.NewApplicationClient(conf, yarnrpc.Auth{})
}

// StatusDoc is `yarn-am status --json`.
type StatusDoc struct {
	Report struct {
		ID          string `json:"id"`
		State       string `json:"state"`
		FinalStatus string `json:"finalStatus"`
		User        string `json:"user"`
		Diagnostics string `json:"diagnostics"`
	} `json:"report"`
	AM *struct {
		State       string `json:"state"`
		Requirement struct {
			Instances int `json:"instances"`
		} `json:"requirement"`
		Counts struct {
			Requested, Allocated, Running, Completed, Failed int
		} `json:"counts"`
		Containers []struct {
			ID    string                         `json:"id"`
			Node  string                         `json:"node"`
			State string                         `json:"state"`
			Infos map[string][]map[string]string `json:"infos"`
		} `json:"containers"`
	} `json:"am"`
}

// Status is `yarn-am status ID --json`, which must exit 0.
func Status(t *testing.T, id string) StatusDoc {
	t.Helper()
	r := YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, r.Code, "status:\n%s", r)
	var d StatusDoc
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &d), "status --json:\n%s", r)
	return d
}

// IsEnded says whether a YARN application state is final (FINISHED, FAILED or KILLED).
func IsEnded(state string) bool { return state == "FINISHED" || state == "FAILED" || state == "KILLED" }

// WaitFor polls status until cond holds or the timeout passes.
func WaitFor(t *testing.T, id string, timeout time.Duration, what string, cond func(StatusDoc) bool) StatusDoc {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		d := Status(t, id)
		if cond(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s not reached within %s; last status: %+v", id, what, timeout, d.Report)
		}
		time.Sleep(time.Second)
	}
}

// CoordinationDir is the GPU coordination directory of the mini cluster the tests run on: one per
// cluster, because every mini cluster's NodeManagers are 127.0.0.2 and .3 with GPUs 0-3, and jobs of two
// clusters running side by side must not take each other's claims.
func CoordinationDir() string {
	state := os.Getenv("YARN_AM_MINICLUSTER_STATE")
	if state == "" {
		state = os.Getenv("HADOOP_CONF_DIR")
	}
	return fmt.Sprintf("%s/yarn-am-gpu-%08x", os.TempDir(), crc32.ChecksumIEEE([]byte(state)))
}
