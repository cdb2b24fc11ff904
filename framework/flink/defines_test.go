package flink

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The -D Flink keys travel through YARN's launch script unharmed: the encoding has no quote, space
// or shell character, and decodes to the same keys in the same order.
func TestFlinkDefinesRoundTrip(t *testing.T) {
	in := []string{"taskmanager.numberOfTaskSlots=2", `env.java.opts.all=-Dx="a b" $HOME 'q'`, "a=1", "a=2"}
	v, err := encodeDefines(in)
	require.NoError(t, err)
	assert.Regexp(t, `^[A-Za-z0-9_-]+$`, v)
	out, err := decodeDefines(v)
	require.NoError(t, err)
	assert.Equal(t, in, out)
	none, err := decodeDefines("")
	require.NoError(t, err)
	assert.Empty(t, none)
	_, err = decodeDefines(`["a=1"]`)
	assert.ErrorContains(t, err, "YARN_AM_FLINK_DEFINES=")
}
