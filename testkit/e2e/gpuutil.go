//go:build integration

package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// GPUUtilDoc is the part of `yarn-am status --json` the GPU utilisation tests read: the AM's URL, its containers'
// GPU samples, the job's GPU time and the latest events.
type GPUUtilDoc struct {
	Report struct {
		State       string `json:"state"`
		FinalStatus string `json:"finalStatus"`
		AMURL       string `json:"amUrl"`
		Diagnostics string `json:"diagnostics"`
	} `json:"report"`
	AM *contract.Status `json:"am"`
}

// GPUUtilStatus is `yarn-am status ID --json` as a GPUUtilDoc.
func GPUUtilStatus(t *testing.T, id string) GPUUtilDoc {
	t.Helper()
	r := YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, r.Code, "status:\n%s", r)
	var d GPUUtilDoc
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &d), "status --json:\n%s", r)
	return d
}

// HTTPGet is url's body (200 required).
func HTTPGet(t *testing.T, url string) string {
	t.Helper()
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", url, b)
	return string(b)
}
