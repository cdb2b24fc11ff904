package rpctest

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// Server side of DIGEST-MD5 (RFC 2831) as a Hadoop server runs it for tokens: realm and server id
// "default", protocol "" (digest-uri "/default"), username = base64(token identifier), password =
// base64(token password). Written independently of the client in package yarnrpc, so that each checks
// the other.

const digestURI = "/default"

// digestChallenge is the first server challenge, sent inside the TOKEN auth of NEGOTIATE.
type digestChallenge struct {
	nonce string
	qops  []string
}

func newDigestChallenge(qops []string) (*digestChallenge, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return &digestChallenge{nonce: base64.StdEncoding.EncodeToString(b), qops: qops}, nil
}

func (c *digestChallenge) bytes() []byte {
	b := fmt.Appendf(nil, `realm="default",nonce="%s",qop="%s",charset=utf-8,algorithm=md5-sess`,
		c.nonce, strings.Join(c.qops, ","))
	for _, q := range c.qops {
		if q == "auth-conf" {
			b = append(b, `,cipher="rc4"`...)
		}
	}
	return b
}

// digestOutcome is what a verified DIGEST-MD5 response established.
type digestOutcome struct {
	final      []byte // the server's last message, rspauth=...
	identifier []byte // the token identifier the client authenticated with
	qop        string
	ha1        []byte // binary H(A1), for the security layer's keys
}

// verify checks the client's response against the password lookup and returns the server's final
// message (rspauth=...) and the token identifier the client authenticated with.
func (c *digestChallenge) verify(resp []byte, password func(id []byte) ([]byte, bool)) (final, identifier []byte, err error) {
	o, err := c.verifyFull(resp, password)
	if err != nil {
		return nil, nil, err
	}
	return o.final, o.identifier, nil
}

// verifyFull is verify with everything the security layer needs.
func (c *digestChallenge) verifyFull(resp []byte, password func(id []byte) ([]byte, bool)) (*digestOutcome, error) {
	final, id, ha1, kv, err := c.check(resp, password)
	if err != nil {
		return nil, err
	}
	return &digestOutcome{final: final, identifier: id, qop: kv["qop"], ha1: ha1}, nil
}

func (c *digestChallenge) check(resp []byte, password func(id []byte) ([]byte, bool)) (final, identifier, ha1 []byte, kv map[string]string, err error) {
	kv, err = splitDirectives(string(resp))
	if err != nil {
		return nil, nil, nil, nil, saslFailure("DIGEST-MD5: digest response format violation: " + err.Error())
	}
	for _, k := range []string{"username", "nonce", "cnonce", "nc", "qop", "digest-uri", "response"} {
		if kv[k] == "" {
			return nil, nil, nil, nil, saslFailure("DIGEST-MD5: digest response format violation: missing " + k)
		}
	}
	if kv["nonce"] != c.nonce {
		return nil, nil, nil, nil, saslFailure("DIGEST-MD5: digest response format violation: mismatched nonce")
	}
	if kv["digest-uri"] != digestURI {
		return nil, nil, nil, nil, saslFailure(fmt.Sprintf("DIGEST-MD5: digest response format violation: digest-uri %q, want %q", kv["digest-uri"], digestURI))
	}
	qopOK := false
	for _, q := range c.qops {
		qopOK = qopOK || q == kv["qop"]
	}
	if kv["qop"] == "auth-conf" && kv["cipher"] != "rc4" {
		return nil, nil, nil, nil, saslFailure(fmt.Sprintf("DIGEST-MD5: cipher %q was not offered (offered rc4)", kv["cipher"]))
	}
	if !qopOK {
		return nil, nil, nil, nil, saslFailure(fmt.Sprintf("DIGEST-MD5: qop %q was not offered (offered %v)", kv["qop"], c.qops))
	}
	id, err := base64.StdEncoding.DecodeString(kv["username"])
	if err != nil {
		return nil, nil, nil, nil, saslFailure("DIGEST-MD5: username is not base64: " + err.Error())
	}
	pw, ok := password(id)
	if !ok {
		return nil, nil, nil, nil, &Exception{Class: "org.apache.hadoop.security.token.SecretManager$InvalidToken",
			Message: "token can't be found in cache"}
	}
	pwB64 := base64.StdEncoding.EncodeToString(pw)
	want := digestValue(kv, pwB64, "AUTHENTICATE")
	if want != kv["response"] {
		return nil, nil, nil, nil, saslFailure("DIGEST-MD5: digest response format violation. Mismatched response.")
	}
	inner := md5.Sum([]byte(kv["username"] + ":" + kv["realm"] + ":" + pwB64))
	h := md5.Sum([]byte(string(inner[:]) + ":" + kv["nonce"] + ":" + kv["cnonce"]))
	return []byte("rspauth=" + digestValue(kv, pwB64, "")), id, h[:], kv, nil
}

func digestValue(kv map[string]string, password, a2prefix string) string {
	h := md5.Sum([]byte(kv["username"] + ":" + kv["realm"] + ":" + password))
	ha1 := md5hex(string(h[:]) + ":" + kv["nonce"] + ":" + kv["cnonce"])
	a2 := a2prefix + ":" + kv["digest-uri"]
	if kv["qop"] != "auth" {
		a2 += ":00000000000000000000000000000000"
	}
	return md5hex(ha1 + ":" + kv["nonce"] + ":" + kv["nc"] + ":" + kv["cnonce"] + ":" + kv["qop"] + ":" + md5hex(a2))
}

func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// splitDirectives parses k=v,k="v" lists; the last value of a repeated key wins.
func splitDirectives(s string) (map[string]string, error) {
	out := map[string]string{}
	for s = strings.TrimLeft(s, " ,"); s != ""; s = strings.TrimLeft(s, " ,") {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return nil, fmt.Errorf("no '=' in %q", s)
		}
		key := strings.ToLower(strings.TrimSpace(s[:eq]))
		s = s[eq+1:]
		var val strings.Builder
		if strings.HasPrefix(s, `"`) {
			i, closed := 1, false
			for i < len(s) {
				if s[i] == '\\' && i+1 < len(s) {
					val.WriteByte(s[i+1])
					i += 2
					continue
				}
				if s[i] == '"' {
					closed = true
					i++
					break
				}
				val.WriteByte(s[i])
				i++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated quote in %s", key)
			}
			s = s[i:]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			val.WriteString(strings.TrimSpace(s[:end]))
			s = s[end:]
		}
		out[key] = val.String()
	}
	return out, nil
}

func saslFailure(msg string) *Exception {
	return &Exception{Class: "javax.security.sasl.SaslException", Message: msg}
}
