package launchctx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func TestLocalResourceProto(t *testing.T) {
	p, err := LocalResource(contract.LocalResource{Alias: "w", URL: "hdfs://nn:8020/user/a/x", Size: 5, Timestamp: 7, Type: "ARCHIVE", Visibility: "APPLICATION"})
	require.NoError(t, err)
	assert.Equal(t, "hdfs", p.GetResource().GetScheme())
	assert.Equal(t, "nn", p.GetResource().GetHost())
	assert.Equal(t, int32(8020), p.GetResource().GetPort())
	assert.Equal(t, "/user/a/x", p.GetResource().GetFile())
	assert.Equal(t, int64(5), p.GetSize())
	assert.Equal(t, int64(7), p.GetTimestamp())
	assert.Equal(t, hadooppb.LocalResourceTypeProto_ARCHIVE, p.GetType())
	assert.Equal(t, hadooppb.LocalResourceVisibilityProto_APPLICATION, p.GetVisibility())

	p, err = LocalResource(contract.LocalResource{Alias: "w", URL: "hdfs://ns1/x"})
	require.NoError(t, err)
	assert.Nil(t, p.GetResource().Port, "an HA nameservice URL has no port")

	_, err = LocalResource(contract.LocalResource{Alias: "w", URL: "hdfs://nn/x", Type: "DIR"})
	assert.ErrorContains(t, err, `type "DIR"; valid: FILE, ARCHIVE`)
	_, err = LocalResource(contract.LocalResource{Alias: "w", URL: "not a url"})
	assert.ErrorContains(t, err, `url "not a url"`)

	lr, err := LocalResources([]contract.LocalResource{{Alias: "b", URL: "hdfs://h/b"}, {Alias: "a", URL: "hdfs://h/a"}, {Alias: "b", URL: "hdfs://h/b2"}})
	require.NoError(t, err)
	require.Len(t, lr, 2)
	assert.Equal(t, "a", lr[0].GetKey())
	assert.Equal(t, "/b2", lr[1].GetValue().GetResource().GetFile(), "a later entry with the same alias wins")
}

// The manifest converter once lived twice and the copies disagreed (one ignored a bad port, one
// accepted PATTERN without a pattern): both are now errors, from the one converter.
func TestLocalResourceRejectsWhatYARNCannotLocalise(t *testing.T) {
	for _, tc := range []struct {
		r    contract.LocalResource
		want string
	}{
		{contract.LocalResource{Alias: "w", URL: "hdfs://nn:http/x"}, `url "hdfs://nn:http/x"`},
		{contract.LocalResource{Alias: "w", URL: "hdfs://nn:99999/x"}, "bad port"},
		{contract.LocalResource{Alias: "w", URL: "hdfs://nn/x", Type: "PATTERN"}, `type "PATTERN"; valid: FILE, ARCHIVE`},
		{contract.LocalResource{Alias: "w", URL: "hdfs://nn/x", Visibility: "WORLD"}, `visibility "WORLD"`},
		{contract.LocalResource{URL: "hdfs://nn/x"}, "has no alias"},
	} {
		_, err := LocalResource(tc.r)
		assert.ErrorContains(t, err, tc.want, "%+v", tc.r)
		_, err = contract.ParseManifest([]byte(`[{"alias":"` + tc.r.Alias + `","url":"` + tc.r.URL + `","type":"` + tc.r.Type + `","visibility":"` + tc.r.Visibility + `"}]`))
		assert.ErrorContains(t, err, tc.want, "the manifest reader refuses it too")
	}
}
