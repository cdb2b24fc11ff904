package yarnrpc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplicationIDFormatAndParse(t *testing.T) {
	id, err := ParseApplicationID("application_1700000000000_0042")
	require.NoError(t, err)
	assert.Equal(t, int64(1700000000000), id.GetClusterTimestamp())
	assert.Equal(t, int32(42), id.GetId())
	assert.Equal(t, "application_1700000000000_0042", FormatApplicationID(id))

	id, err = ParseApplicationID("application_1_12345")
	require.NoError(t, err)
	assert.Equal(t, "application_1_12345", FormatApplicationID(id))

	for _, bad := range []string{"", "app_1_2", "application_x_1", "application_1", "application_1_2_3", "application_0_1"} {
		_, err := ParseApplicationID(bad)
		assert.ErrorContains(t, err, "is not an application id; want application_<clusterTimestamp>_<number>", bad)
	}
}
