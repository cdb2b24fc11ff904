package yarnrpc

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func TestVLongMatchesHadoopEncoding(t *testing.T) {
	// Byte sequences of Hadoop's WritableUtils.writeVLong for these values.
	cases := map[int64][]byte{
		0:    {0x00},
		127:  {0x7f},
		-112: {0x90},
		128:  {0x8f, 0x80},
		300:  {0x8e, 0x01, 0x2c},
		-113: {0x87, 0x70},
		-256: {0x87, 0xff},
		-257: {0x86, 0x01, 0x00},
	}
	for v, want := range cases {
		var b bytes.Buffer
		writeVLong(&b, v)
		assert.Equal(t, want, b.Bytes(), "encode %d", v)
		got, err := readVLong(bytes.NewReader(want))
		require.NoError(t, err)
		assert.Equal(t, v, got, "decode %x", want)
	}
	for _, v := range []int64{math.MaxInt64, math.MinInt64, 1 << 40, -(1 << 40), 65535, -65536} {
		var b bytes.Buffer
		writeVLong(&b, v)
		got, err := readVLong(bytes.NewReader(b.Bytes()))
		require.NoError(t, err)
		assert.Equal(t, v, got)
	}
}

func sampleCredentials() *Credentials {
	c := NewCredentials()
	c.Tokens["amrm"] = Token{Identifier: []byte{1, 2, 3, 0xff}, Password: bytes.Repeat([]byte{9}, 200), Kind: "YARN_AM_RM_TOKEN", Service: "127.0.0.1:8030"}
	c.Tokens["hdfs"] = Token{Identifier: []byte("id"), Password: []byte("pw"), Kind: "HDFS_DELEGATION_TOKEN", Service: "127.0.0.1:9000"}
	c.Secrets["app.secret"] = []byte("s3cr3t")
	return c
}

func TestCredentialsWritableRoundTrip(t *testing.T) {
	c := sampleCredentials()
	data := c.Marshal()
	assert.Equal(t, []byte("HDTS\x00\x02"), data[:6], "magic, version 0, two tokens")
	got, err := ParseCredentials(data)
	require.NoError(t, err)
	assert.Equal(t, c, got)
	tok, ok := got.TokenOfKind("YARN_AM_RM_TOKEN")
	require.True(t, ok)
	assert.Equal(t, "127.0.0.1:8030", tok.Service)

	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, c.WriteFile(path))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	got, err = ReadCredentialsFile(path)
	require.NoError(t, err)
	assert.Equal(t, c, got)
}

func TestCredentialsProtobufVersion(t *testing.T) {
	p := &hadooppb.CredentialsProto{
		Tokens: []*hadooppb.CredentialsKVProto{{
			Alias: proto.String("amrm"),
			Token: &hadooppb.TokenProto{Identifier: []byte{1}, Password: []byte{2}, Kind: proto.String("YARN_AM_RM_TOKEN"), Service: proto.String("h:1")},
		}},
		Secrets: []*hadooppb.CredentialsKVProto{{Alias: proto.String("k"), Secret: []byte("v")}},
	}
	var b bytes.Buffer
	b.WriteString("HDTS\x01")
	_, err := protodelim.MarshalTo(&b, p)
	require.NoError(t, err)
	got, err := ParseCredentials(b.Bytes())
	require.NoError(t, err)
	assert.Equal(t, Token{Identifier: []byte{1}, Password: []byte{2}, Kind: "YARN_AM_RM_TOKEN", Service: "h:1"}, got.Tokens["amrm"])
	assert.Equal(t, []byte("v"), got.Secrets["k"])
}

func TestCredentialsRejectsBadInput(t *testing.T) {
	good := sampleCredentials().Marshal()
	for name, data := range map[string][]byte{
		"empty":          nil,
		"no magic":       []byte("HDTX\x00\x00\x00"),
		"version 7":      []byte("HDTS\x07"),
		"truncated":      good[:len(good)-3],
		"huge count":     {'H', 'D', 'T', 'S', 0, 0x8c, 0x7f, 0xff, 0xff, 0xff},
		"huge length":    {'H', 'D', 'T', 'S', 0, 1, 0x8c, 0x7f, 0xff, 0xff, 0xff},
		"negative count": {'H', 'D', 'T', 'S', 0, 0xff},
	} {
		_, err := ParseCredentials(data)
		assert.ErrorIs(t, err, ErrBadTokenFile, name)
	}
}

func FuzzParseCredentials(f *testing.F) {
	f.Add(sampleCredentials().Marshal())
	f.Add([]byte("HDTS\x01\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCredentials(data)
		if err == nil && data[4] == 0 {
			// What we parse, we write back identically (modulo ordering, which Marshal fixes).
			again, err := ParseCredentials(c.Marshal())
			require.NoError(t, err)
			assert.Equal(t, c, again)
		}
	})
}

func TestTokenFor(t *testing.T) {
	c := NewCredentials()
	c.Tokens["b"] = Token{Kind: HDFSDelegationTokenKind, Service: "10.0.0.1:8020", Identifier: []byte("b")}
	c.Tokens["a"] = Token{Kind: HDFSDelegationTokenKind, Service: "10.0.0.2:8020", Identifier: []byte("a")}
	c.Tokens["c"] = Token{Kind: RMDelegationTokenKind, Service: "10.0.0.1:8020"}
	if tok, ok := c.TokenFor(HDFSDelegationTokenKind, "10.0.0.1:8020"); !ok || string(tok.Identifier) != "b" {
		t.Fatalf("got %+v, %v", tok, ok)
	}
	if _, ok := c.TokenFor(HDFSDelegationTokenKind, "10.0.0.3:8020"); ok {
		t.Fatal("a token for another service")
	}
	var none *Credentials
	if _, ok := none.TokenFor(HDFSDelegationTokenKind, "10.0.0.1:8020"); ok {
		t.Fatal("nil credentials")
	}
}
