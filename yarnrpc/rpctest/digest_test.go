package rpctest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The server side computes the RFC 2831 §4 example like the client does.
func TestDigestValueRFC2831Vector(t *testing.T) {
	kv := map[string]string{
		"username": "chris", "realm": "elwood.innosoft.com", "nonce": "OA6MG9tEQGm2hh",
		"cnonce": "OA6MHXh6VqTrRk", "nc": "00000001", "qop": "auth", "digest-uri": "imap/elwood.innosoft.com",
	}
	assert.Equal(t, "d388dad90d4bbd760a152321f2143af7", digestValue(kv, "secret", "AUTHENTICATE"))
	assert.Equal(t, "ea40f60335c427b5527b84dbabcdfffd", digestValue(kv, "secret", ""))
}

func TestDigestVerifyRejects(t *testing.T) {
	ch := &digestChallenge{nonce: "n", qops: []string{"auth"}}
	pw := func([]byte) ([]byte, bool) { return []byte("pw"), true }
	base := `username="aWQ=",realm="default",nonce="n",nc=00000001,cnonce="c",digest-uri="/default",qop=auth,response=`
	_, _, err := ch.verify([]byte(base+"00000000000000000000000000000000"), pw)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Mismatched response")

	_, _, err = ch.verify([]byte(`username="aWQ=",nonce="other",nc=00000001,cnonce="c",digest-uri="/default",qop=auth,response=x`), pw)
	assert.ErrorContains(t, err, "mismatched nonce")
	_, _, err = ch.verify([]byte(`username="aWQ=",nonce="n",nc=00000001,cnonce="c",digest-uri="imap/x",qop=auth,response=x`), pw)
	assert.ErrorContains(t, err, "digest-uri")
	_, _, err = ch.verify([]byte(`username="aWQ=",nonce="n",nc=00000001,cnonce="c",digest-uri="/default",qop=auth-conf,response=x`), pw)
	assert.ErrorContains(t, err, "was not offered")

	kv, err := splitDirectives(base + "abc")
	require.NoError(t, err)
	good := base + digestValue(kv, "cHc=", "AUTHENTICATE") // password "pw" in base64
	final, id, err := ch.verify([]byte(good), pw)
	require.NoError(t, err)
	assert.Equal(t, "id", string(id))
	assert.Equal(t, "rspauth="+digestValue(kv, "cHc=", ""), string(final))
}
