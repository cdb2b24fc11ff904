package stderrtail

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"strings"
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

// A secret inside a longer encoded text is found: in base64 (standard and URL-safe, padded or not)
// at each of the three alignments within the stream and with any bytes after it, as an HTTP Basic
// header carries "user:secret"; in hex of any case; and each of these URL-encoded. What is left
// around "[label]" carries at most the bits of the characters the secret shares with its neighbours
// (issue 40 §6: the redactor missed the secret inside a Basic header).
func TestRedactorFindsASecretInsideALongerEncoding(t *testing.T) {
	secret := "0123456789abcdef0123456789abcdef"
	password := []byte{0x9f, 0x01, 0xfe, 0x33, 0x42, 0x10, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xfb, 0xff}
	r := &Redactor{}
	r.Add("application secret", []byte(secret))
	r.Add("token password", password)

	basic := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+secret))
	got := r.Redact(basic)
	assert.Equal(t, "Authorization: Basic YWxpY2U6[application secret]", got)

	for _, c := range []struct {
		label string
		value []byte
	}{{"application secret", []byte(secret)}, {"token password", password}} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			for pre := range 6 {
				for post := range 4 {
					stream := append(append([]byte(strings.Repeat("p", pre)), c.value...), []byte(strings.Repeat("\xfeq", post)[:post])...)
					encoded := enc.EncodeToString(stream)
					out := r.Redact("x " + encoded + " y")
					name := fmt.Sprintf("%s, %d bytes before, %d after, %q", c.label, pre, post, encoded)
					if !assert.Contains(t, out, "["+c.label+"]", name) {
						continue
					}
					// The characters left of the stream: those of its bytes before and after the secret,
					// and at most 3 it shares with each (and the padding).
					left := len(out) - len("x  y") - len("["+c.label+"]")
					assert.LessOrEqual(t, left, (4*pre+2)/3+(4*post+2)/3+2*3+2, name)
				}
			}
		}
		// Hex inside longer hex, in either case; URL-encoded base64.
		h := hex.EncodeToString(append([]byte("user:"), c.value...))
		for _, v := range []string{h, strings.ToUpper(h), strings.ToUpper(h[:20]) + h[20:]} {
			assert.Equal(t, "k="+v[:10]+"["+c.label+"]", r.Redact("k="+v), v)
		}
		b := base64.StdEncoding.EncodeToString(c.value)
		for _, v := range []string{url.QueryEscape(b), lowerEscapes(url.QueryEscape(b))} {
			assert.Equal(t, "?t=["+c.label+"]&x", r.Redact("?t="+v+"&x"), v)
		}
	}

	// A printable secret URL-encoded by any encoder: QueryEscape, PathEscape, lower-case escapes.
	pw := "p@ss/w:rd+x y!é"
	r.Add("password", []byte(pw))
	for _, v := range []string{url.QueryEscape(pw), url.PathEscape(pw), lowerEscapes(url.QueryEscape(pw)), pw} {
		assert.Equal(t, "https://h/?pw=[password]&n=1", r.Redact("https://h/?pw="+v+"&n=1"), v)
	}
	// Ordinary text is left alone.
	assert.Equal(t, "nothing secret here: 0123 abcd", r.Redact("nothing secret here: 0123 abcd"))
}

// With adds a secret to a copy: the original is unchanged, and nil or an empty secret is fine.
func TestRedactorWith(t *testing.T) {
	var none *Redactor
	r := none.With("application secret", []byte("0123456789abcdef"))
	assert.Equal(t, "s=[application secret]", r.Redact("s=0123456789abcdef"))
	r2 := r.With("token", []byte("tokentokentoken1"))
	assert.Equal(t, "tokentokentoken1", r.Redact("tokentokentoken1"), "the original is unchanged")
	assert.Equal(t, "[application secret] [token]", r2.Redact("0123456789abcdef tokentokentoken1"))
	assert.Equal(t, "x", none.With("empty", nil).Redact("x"))
}

// lowerEscapes writes the %XX escapes of s in lower case, as some encoders do.
func lowerEscapes(s string) string {
	return regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(s, strings.ToLower)
}
