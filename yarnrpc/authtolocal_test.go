package yarnrpc

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

func TestShortNameOf(t *testing.T) {
	c := NewConfig(map[string]string{KeyAuthToLocal: "RULE:[2:$1@$0](rm@YARNAM.TEST)s/.*/yarn/\nRULE:[2:$1@$0](nn@YARNAM.TEST)s/.*/hdfs/\nRULE:[1:$1](Alice)s/A/X//L\nDEFAULT"})
	for in, want := range map[string]string{
		"rm/localhost@YARNAM.TEST": "yarn",
		"nn/host1@YARNAM.TEST":     "hdfs",
		"yarnam@YARNAM.TEST":       "yarnam",
		"Alice@OTHER":              "xlice",
		"nm/localhost@YARNAM.TEST": "nm",
	} {
		got, err := c.ShortNameOf(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := NewConfig(map[string]string{KeyAuthToLocal: "RULE:[2:$1](x)s/.*/y/"}).ShortNameOf("a@B")
	assert.ErrorContains(t, err, KeyAuthToLocal)
	_, err = NewConfig(map[string]string{KeyAuthToLocal: "bogus"}).ShortNameOf("a@B")
	assert.ErrorContains(t, err, "bogus")
}

func TestDelegationTokenDates(t *testing.T) {
	issue, max := time.UnixMilli(1_700_000_000_000), time.UnixMilli(1_700_000_180_000)
	// HDFS: Writable, version 0.
	var w bytes.Buffer
	w.WriteByte(0)
	for _, s := range []string{"yarnam", "yarn", ""} {
		writeText(&w, []byte(s))
	}
	writeVLong(&w, issue.UnixMilli())
	writeVLong(&w, max.UnixMilli())
	writeVLong(&w, 7)
	writeVLong(&w, 2)
	is, mx, ok := DelegationTokenDates(Token{Identifier: w.Bytes()})
	require.True(t, ok)
	assert.Equal(t, issue, is)
	assert.Equal(t, max, mx)
	// YARN: protobuf.
	var p []byte
	p = protowire.AppendTag(p, 1, protowire.BytesType)
	p = protowire.AppendString(p, "yarnam")
	p = protowire.AppendTag(p, 4, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(issue.UnixMilli()))
	p = protowire.AppendTag(p, 5, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(max.UnixMilli()))
	is, mx, ok = DelegationTokenDates(Token{Identifier: p})
	require.True(t, ok)
	assert.Equal(t, issue, is)
	assert.Equal(t, max, mx)
	_, _, ok = DelegationTokenDates(Token{Identifier: []byte{0, 200}})
	assert.False(t, ok)
}
