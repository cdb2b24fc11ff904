package client

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// The staged keytab is readable in HDFS by whatever holds the user's HDFS token (every TaskExecutor
// of this and the user's other applications): it is staged sealed, 0600, for the AM only, and the key
// that opens it is in the AM's credentials alone.
func TestStagedKeytabIsSealed(t *testing.T) {
	fsys := localFS{root: t.TempDir()}
	st := &Staged{Dir: "/user/alice/.yarn-am/application_1700000000000_0003"}
	require.NoError(t, fsys.MkdirAll(st.Dir, 0o700))
	plain := bytes.Repeat([]byte("alice-keytab-key-material;"), 8)
	local := filepath.Join(t.TempDir(), "alice.keytab")
	require.NoError(t, os.WriteFile(local, plain, 0o644))

	key, err := StageKeytab(fsys, st, "hdfs://nn:8020", local)
	require.NoError(t, err)
	remote := path.Join(st.Dir, contract.StagedKeytab)
	staged, err := os.ReadFile(fsys.p(remote))
	require.NoError(t, err)
	assert.False(t, bytes.Contains(staged, []byte("alice-keytab")), "no keytab byte in the clear in HDFS")
	got, err := contract.OpenKeytab(key, staged)
	require.NoError(t, err)
	assert.Equal(t, plain, got, "the AM's key opens it")
	fi, err := os.Stat(fsys.p(remote))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.Len(t, st.AM, 1)
	assert.Equal(t, contract.StagedKeytab, st.AM[0].Alias)
	assert.Empty(t, st.Manifest, "never a TaskExecutor's resource")

	o := testAMOptions(t)
	o.KeytabKey = key
	assert.Equal(t, key, AMCredentials(o).Secrets[contract.KeytabKeyAlias], "the key travels in the AM's credentials")
	o.KeytabKey = nil
	assert.NotContains(t, AMCredentials(o).Secrets, contract.KeytabKeyAlias)

	// A second submit seals under another key.
	st2 := &Staged{Dir: "/user/alice/.yarn-am/application_1700000000000_0004"}
	require.NoError(t, fsys.MkdirAll(st2.Dir, 0o700))
	key2, err := StageKeytab(fsys, st2, "hdfs://nn:8020", local)
	require.NoError(t, err)
	assert.NotEqual(t, key, key2)
}
