//go:build integration

package am_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/internal/hdfsfile"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// A cache entry rewritten in HDFS with bytes of the same size (what any container holding the user's
// HDFS token can do) is not reused: the next submit reads it back, says it did not match, replaces
// it, and the TaskExecutor reads the user's bytes (docs/job-file.md#visibility-and-the-cache).
func TestStagingTamperedCacheEntryIsReplaced(t *testing.T) {
	e2e.Env(t)
	c := e2e.MiniCluster(t)
	tok := make([]byte, 16)
	_, err := rand.Read(tok)
	require.NoError(t, err)
	token := hex.EncodeToString(tok) // new content: a fresh entry
	dir := writeFiles(t, map[string]string{
		"token.txt": token,
		"job.toml": `name = "staging-cache-tamper"
[taskexecutor]
instances = 1
command = "test \"$(cat token.txt)\" = ` + token + `"
memory = 256
max-failures = 0
files = ["token.txt"]
`})
	first := e2e.YarnAM(t, 5*time.Minute, "submit", filepath.Join(dir, "job.toml"))
	require.Equal(t, 0, first.Code, first.String())

	sum := sha256.Sum256([]byte(token))
	entry := path.Join(client.CacheDir(yarnrpc.CurrentUser()), hex.EncodeToString(sum[:])+"-644", "token.txt")
	fi, err := c.FS.Stat(entry)
	require.NoError(t, err, "the first submit made the entry")
	require.NoError(t, c.FS.Remove(entry))
	w, err := c.FS.Create(entry)
	require.NoError(t, err)
	_, err = w.Write([]byte(strings.Repeat("0", len(token))))
	require.NoError(t, err)
	require.NoError(t, hdfsfile.Close(w), "HDFS completes the file once its block has its replicas")
	require.NoError(t, c.FS.Chtimes(entry, fi.ModTime(), fi.ModTime()))

	second := e2e.YarnAM(t, 5*time.Minute, "submit", filepath.Join(dir, "job.toml"))
	out := second.Stdout + second.Stderr
	assert.Contains(t, out, "cache entry cache/"+hex.EncodeToString(sum[:])+"-644/token.txt did not match its content; replaced")
	require.Equal(t, 0, second.Code, "the TaskExecutor reads the user's token, not the planted bytes:\n%s", second)
	id := e2e.SubmittedID(out)
	require.NotEmpty(t, id, second.String())
	assert.Equal(t, "SUCCEEDED", e2e.Status(t, id).Report.FinalStatus)
}
