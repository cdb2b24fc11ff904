package yarnrpc

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestXAttrWireFormat pins the hand-encoded HDFS xattr messages to Hadoop's field numbers
// (SetXAttrRequestProto: src 1, xAttr 2, flag 3; XAttrProto: namespace 1 (USER = 0), name 2, value 3)
// and checks that the response reader finds the value among several attributes.
func TestXAttrWireFormat(t *testing.T) {
	want := []byte{
		0x0a, 0x04, '/', 'a', '/', 'b', // src = "/a/b"
		0x12, 0x0c, // xAttr, 12 bytes
		0x08, 0x00, // namespace USER
		0x12, 0x03, 's', 't', 'a', // name "sta"
		0x1a, 0x03, 'x', 'y', 'z', // value "xyz"
		0x18, 0x03, // flag = CREATE|REPLACE
	}
	assert.Equal(t, want, setXAttrRequest("/a/b", "sta", []byte("xyz")))
	assert.Equal(t, []byte{0x0a, 0x04, '/', 'a', '/', 'b', 0x12, 0x07, 0x08, 0x00, 0x12, 0x03, 's', 't', 'a'}, getXAttrsRequest("/a/b", "sta"))

	resp := appendXAttr(nil, 1, "other", []byte("no"), true)
	resp = appendXAttr(resp, 1, "sta", []byte("yes"), true)
	v, err := xattrValue(resp, "sta")
	require.NoError(t, err)
	assert.Equal(t, "yes", string(v))
	_, err = xattrValue(resp, "missing")
	assert.True(t, errors.Is(err, ErrNoXAttr))
	_, err = xattrValue([]byte{0x0a, 0x05, 0x08}, "sta")
	assert.Error(t, err, "a truncated response is an error, not an empty value")
}
