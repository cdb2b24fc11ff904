package stderrtail

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A tail quoting the application secret (as the driver's and a worker's environment hold it) or a
// delegation token's password (as written, in hex or in base64) keeps none of them; short values are
// not redacted, so ordinary words stay.
func TestTailRedactsTheSecretsItQuotes(t *testing.T) {
	secret := "0123456789abcdef0123456789abcdef"
	password := []byte{0x9f, 0x01, 0xfe, 0x33, 0x42, 0x10, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc}
	r := &Redactor{}
	r.Add("application secret", []byte(secret))
	r.Add("token password", password)
	r.Add("short", []byte("abc"))
	tl := Tail{Redact: r}
	fmt.Fprintf(&tl, "YARN_AM_SECRET=%s\n", secret)
	fmt.Fprintf(&tl, "password %s / %s / %s\n", hex.EncodeToString(password),
		base64.StdEncoding.EncodeToString(password), base64.RawURLEncoding.EncodeToString(password))
	fmt.Fprintf(&tl, "abc stays\n")
	got := tl.Lines()
	assert.NotContains(t, got, secret)
	assert.NotContains(t, got, hex.EncodeToString(password))
	assert.NotContains(t, got, base64.StdEncoding.EncodeToString(password))
	assert.NotContains(t, got, base64.RawURLEncoding.EncodeToString(password))
	assert.Contains(t, got, "YARN_AM_SECRET=[application secret]")
	assert.Contains(t, got, "password [token password] / [token password] / [token password]")
	assert.Contains(t, got, "abc stays")
	var none *Redactor
	assert.Equal(t, secret, none.Redact(secret))
}
